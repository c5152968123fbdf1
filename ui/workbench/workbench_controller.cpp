#include "ui/workbench/workbench_controller.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include "core/export/bundle.h"
#include "core/verify/extract.h"
#include "ui/services/post.h"

namespace crucible::ui {

namespace {
std::optional<QString> readText(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
  return QString::fromUtf8(file.readAll());
}

bool definesModelNew(const QString& text) {
  static const QRegularExpression modelNew(QStringLiteral("^class\\s+ModelNew\\b"),
                                           QRegularExpression::MultilineOption);
  return modelNew.match(text).hasMatch();
}
}  // namespace

int lineOfProblem(const QString& message) {
  static const QRegularExpression where(QStringLiteral("^[^\\n]*?\\.py:(\\d+):"));
  const auto match = where.match(message);
  return match.hasMatch() ? match.captured(1).toInt() : 0;
}

WorkbenchController::WorkbenchController(Workbench* workbench, StoreService* store,
                                         VerifyService* verifier, QObject* parent)
    : QObject(parent),
      workbench_(workbench),
      store_(store),
      verifier_(verifier),
      settings_(AppSettings::load()) {
  pool_.setMaxThreadCount(1);
  connect(&referenceWatcher_, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
    if (path != workbench_->reference().path) return;
    // Editors that save by renaming a new file over the old one end the watch: watch again.
    if (!referenceWatcher_.files().contains(path) && QFileInfo::exists(path)) {
      referenceWatcher_.addPath(path);
    }
    const auto text = readText(path);
    if (text && *text != workbench_->reference().source) emit referenceChangedOnDisk(path);
  });
  connect(
      verifier_, &VerifyService::progress, this,
      [this](int, const QString& stage, const QString& message) { emit progress(stage, message); });
  connect(verifier_, &VerifyService::finished, this, [this](int key, const VerifyOutcome& outcome) {
    const QString when = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    workbench_->setEvaluation(key, outcome.evaluation, when);
    saveEvaluation(key, outcome.evaluation);
    emit verifyingChanged(false);
    runNext();
  });
  connect(verifier_, &VerifyService::failed, this, [this](int, QString message) {
    // Problems name the job's copy of the reference: show the file the user opened instead.
    const QString copy = jobFiles_ ? jobFiles_->filePath(referenceFileName()) : "";
    const bool aboutReference = !copy.isEmpty() && message.startsWith(copy);
    if (aboutReference) message.replace(copy, workbench_->reference().path);
    emit errorOccurred(QStringLiteral("Verification failed: ") + message);
    if (aboutReference) {
      referenceProblem_ = message;
      emit referenceProblemChanged(message, lineOfProblem(message));
    }
    emit verifyingChanged(false);
    runNext();
  });
  connect(verifier_, &VerifyService::stopped, this, [this](int) {
    emit progress(QStringLiteral("stopped"), tr("Verification stopped"));
    emit verifyingChanged(false);
  });
  connect(verifier_, &VerifyService::referenceChecked, this,
          [this](const QString& path, const QString& problem) {
            if (path != workbench_->reference().path) return;  // another file since
            referenceProblem_ = problem;
            emit referenceProblemChanged(problem, lineOfProblem(problem));
          });
  connect(store_, &StoreService::reopened, this, &WorkbenchController::databaseChanged);
  connect(store_, &StoreService::failed, this,
          [this](const QString& message) { emit errorOccurred(tr("Database: ") + message); });
}

WorkbenchController::~WorkbenchController() {
  pool_.waitForDone();
}

void WorkbenchController::setSettings(const AppSettings& settings) {
  const bool changed = !(settings == settings_);
  settings_ = settings;
  // core finds the worker's interpreter through CRUCIBLE_PYTHON.
  if (!settings.pythonPath.isEmpty()) qputenv("CRUCIBLE_PYTHON", settings.pythonPath.toUtf8());
  if (changed) emit settingsChanged();
}

void WorkbenchController::openFile(const QString& path) {
  const auto text = readText(path);
  if (!text) {
    emit errorOccurred(tr("%1: cannot read the file").arg(path));
    return;
  }
  if (!definesModelNew(*text)) {
    openReference(path);
    return;
  }
  const QString sibling = QFileInfo(path).dir().filePath(QStringLiteral("reference.py"));
  if (QFileInfo::exists(sibling) && sibling != workbench_->reference().path) openReference(sibling);
  if (!workbench_->hasReference()) {
    emit errorOccurred(tr("%1 is a candidate (it defines ModelNew): open its reference first")
                           .arg(QFileInfo(path).fileName()));
    return;
  }
  addCandidateFile(path);
}

void WorkbenchController::openReference(const QString& path) {
  const auto text = readText(path);
  if (!text) {
    emit errorOccurred(tr("%1: cannot read the file").arg(path));
    return;
  }
  stop();
  const QFileInfo info(path);
  const QString absolute = info.absoluteFilePath();
  // An example folder's reference.py is named after its folder (row_softmax/reference.py).
  const QString name =
      info.completeBaseName() == "reference" ? info.dir().dirName() : info.completeBaseName();
  workbench_->setReference({absolute, name, *text});
  currentKey_ = -1;
  emit currentChanged(currentKey_);
  referenceProblem_.clear();
  emit referenceProblemChanged({}, 0);
  addRecentFile(absolute);
  if (!referenceWatcher_.files().isEmpty())
    referenceWatcher_.removePaths(referenceWatcher_.files());
  referenceWatcher_.addPath(absolute);
  verifier_->checkReference(absolute);
}

void WorkbenchController::reloadReference() {
  if (workbench_->hasReference()) openReference(workbench_->reference().path);
}

void WorkbenchController::openExample(const BundledExample& example) {
  openReference(example.referencePath);
  if (!example.candidatePath.isEmpty()) addCandidateFile(example.candidatePath, "example");
}

int WorkbenchController::addCandidateFile(const QString& path, const QString& origin) {
  const auto text = readText(path);
  if (!text) {
    emit errorOccurred(tr("%1: cannot read the file").arg(path));
    return -1;
  }
  addRecentFile(QFileInfo(path).absoluteFilePath());
  return addCandidateText(*text, origin, QFileInfo(path).absoluteFilePath());
}

int WorkbenchController::addCandidateText(const QString& text, const QString& origin,
                                          const QString& path, std::optional<int> parentKey) {
  if (!workbench_->hasReference()) {
    emit errorOccurred(tr("Open a reference before adding a candidate"));
    return -1;
  }
  const auto extracted = extractCandidate(text.toStdString());
  if (!extracted) {
    emit errorOccurred(tr("%1: a model response without a code block that defines ModelNew")
                           .arg(path.isEmpty() ? origin : path));
    return -1;
  }
  CandidateEntry entry;
  entry.origin = extracted->fromResponse && origin == "file" ? QStringLiteral("response") : origin;
  entry.path = path;
  entry.code = QString::fromStdString(extracted->code);
  entry.plan = QString::fromStdString(extracted->plan);
  if (extracted->fromResponse) entry.rawResponse = text;
  entry.parentKey = parentKey;
  const int key = workbench_->addCandidate(std::move(entry));
  saveCandidate(key);
  select(key);
  return key;
}

void WorkbenchController::select(int key) {
  if (key == currentKey_) return;
  currentKey_ = workbench_->candidate(key) ? key : -1;
  emit currentChanged(currentKey_);
}

std::optional<WorkbenchController::JobSources> WorkbenchController::writeSources(
    int key, const QTemporaryDir& dir) {
  const CandidateEntry* c = workbench_->candidate(key);
  if (!c || !workbench_->hasReference() || !dir.isValid()) return std::nullopt;
  const JobSources sources{dir.filePath(referenceFileName()),
                           dir.filePath(QStringLiteral("candidate.py"))};
  for (const auto& [path, text] : {std::pair{sources.referencePath, workbench_->reference().source},
                                   std::pair{sources.candidatePath, c->code}}) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0) {
      emit errorOccurred(tr("Cannot write %1").arg(path));
      return std::nullopt;
    }
  }
  return sources;
}

std::optional<WorkbenchController::ScratchSources> WorkbenchController::writeCurrentSources() {
  auto dir = std::make_shared<QTemporaryDir>();
  const auto sources = writeSources(currentKey_, *dir);
  if (!sources) return std::nullopt;
  return ScratchSources{std::move(dir), *sources, currentKey_};
}

QString WorkbenchController::referenceFileName() const {
  // The candidate may import the reference by its module name: keep the file's own name.
  const auto& r = workbench_->reference();
  const QString stem = QFileInfo(r.path).completeBaseName();
  return (stem.isEmpty() ? r.name : stem) + ".py";
}

store::TaskInput WorkbenchController::taskInput() const {
  const auto& r = workbench_->reference();
  return {r.name.toStdString(), r.path.toStdString(), r.source.toStdString()};
}

void WorkbenchController::saveCandidate(int key) {
  const CandidateEntry* c = workbench_->candidate(key);
  if (!c) return;
  store::CandidateInput input;
  input.origin = c->origin.toStdString();
  input.model = c->model.toStdString();
  input.rawResponse = c->rawResponse.toStdString();
  input.prompt = c->prompt.toStdString();
  input.plan = c->plan.toStdString();
  input.code = c->code.toStdString();
  input.path = c->path.toStdString();
  StoreCell parentCell;
  if (c->parentKey) {
    if (const CandidateEntry* parent = workbench_->candidate(*c->parentKey)) {
      parentCell = parent->storeId;
    }
  }
  // The cells are written on the store thread, in job order: the session before its first
  // candidate, a parent before its child.
  store_->run<qint64>(
      [session = workbench_->sessionCell(), cell = c->storeId, parentCell, input,
       task = taskInput(), kind = workbench_->sessionKind().toStdString(),
       note = workbench_->sessionNote().toStdString()](store::Store& s) mutable -> qint64 {
        if (*session == 0) *session = s.startSession(task, kind, note).sessionId;
        if (parentCell && *parentCell != 0) input.parentId = *parentCell;
        *cell = s.addCandidateTo(*session, input);
        return *session;
      },
      this,
      [this](qint64 sessionId) {
        savedSessionId_ = sessionId;
        emit sessionSaved(sessionId);
      });
}

void WorkbenchController::saveEvaluation(int key, const Evaluation& evaluation) {
  const CandidateEntry* c = workbench_->candidate(key);
  if (!c) return;
  store_->run<qint64>(
      [session = workbench_->sessionCell(), cell = c->storeId, evaluation](store::Store& s) {
        if (*cell != 0) s.addEvaluationTo(*cell, evaluation);
        return *session;
      },
      this,
      [this](qint64 sessionId) {
        savedSessionId_ = sessionId;
        emit sessionSaved(sessionId);
      });
}

void WorkbenchController::verifyText(const QString& editorText, const BackendChoice& backend) {
  const CandidateEntry* current = workbench_->candidate(currentKey_);
  int key = currentKey_;
  if (!current || current->code != editorText) {
    if (editorText.trimmed().isEmpty()) {
      emit errorOccurred(tr("There is no candidate to verify: open, paste or write one"));
      return;
    }
    key = addCandidateText(editorText, current ? QStringLiteral("edit") : QStringLiteral("typed"),
                           {}, current ? std::optional<int>(current->key) : std::nullopt);
    if (key < 0) return;
  }
  verify(key, backend);
}

void WorkbenchController::verify(int key, const BackendChoice& backend) {
  const CandidateEntry* c = workbench_->candidate(key);
  if (!c || !workbench_->hasReference()) return;
  if (!backend.available) {
    emit errorOccurred(
        tr("Backend %1 is not available here: %2").arg(backend.backend, backend.note));
    return;
  }
  if (verifier_->busy()) {  // one at a time: the rest wait their turn (generated candidates)
    queue_.append({key, backend});
    emit progress(QStringLiteral("queued"), tr("%n candidate(s) waiting", "", queue_.size()));
    return;
  }
  // The worker reads files: the reference under its own name (its stem is the module's name),
  // the candidate as it is now.
  jobFiles_ = std::make_unique<QTemporaryDir>();
  const std::optional<JobSources> sources = writeSources(key, *jobFiles_);
  if (!sources) return;
  const QString referencePath = sources->referencePath, candidatePath = sources->candidatePath;
  VerifyRequest request = settings_.verifyRequest();
  request.referencePath = referencePath.toStdString();
  request.candidatePath = candidatePath.toStdString();
  request.backend = backend.backend.toStdString();
  request.openclDevice = backend.openclDevice.toStdString();
  verifier_->start(request, key);
  emit verifyingChanged(true);
  emit progress(QStringLiteral("start"), tr("Verifying on %1").arg(backend.backend));
}

void WorkbenchController::stop() {
  queue_.clear();
  verifier_->stop();
}

void WorkbenchController::runNext() {
  while (!queue_.isEmpty() && !verifier_->busy()) {
    const auto [key, backend] = queue_.takeFirst();
    if (workbench_->candidate(key)) verify(key, backend);
  }
}

void WorkbenchController::beginGeneratedSession(const QString& note) {
  stop();
  workbench_->beginSession(QString::fromUtf8(store::kSessionKindGenerate), note);
  generatedKeys_.clear();
  currentKey_ = -1;
  emit currentChanged(currentKey_);
}

int WorkbenchController::addGenerated(const GeneratedEntry& generated) {
  CandidateEntry entry;
  entry.origin = generated.origin;
  entry.model = generated.model;
  entry.prompt = generated.prompt;
  entry.rawResponse = generated.rawResponse;
  entry.plan = generated.plan;
  entry.code = generated.code;
  if (generated.parentId) {
    const auto parent = generatedKeys_.constFind(*generated.parentId);
    if (parent != generatedKeys_.cend()) entry.parentKey = *parent;
  }
  const int key = workbench_->addCandidate(std::move(entry));
  generatedKeys_.insert(generated.id, key);
  saveCandidate(key);
  if (currentKey_ < 0) select(key);  // the first one; later ones do not pull the view away
  return key;
}

void WorkbenchController::setGeneratedEvaluation(int generatedId, const Evaluation& evaluation) {
  const auto key = generatedKeys_.constFind(generatedId);
  if (key == generatedKeys_.cend()) return;  // a candidate of a session no longer shown
  workbench_->setEvaluation(*key, evaluation,
                            QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
  saveEvaluation(*key, evaluation);
}

void WorkbenchController::setDatabase(const QString& path) {
  if (path == store_->databasePath()) return;
  store_->reopen(path);
  workbench_->detachFromStore();
  savedSessionId_ = 0;
  for (const CandidateEntry& c : workbench_->candidates()) {
    saveCandidate(c.key);
    if (c.evaluation) saveEvaluation(c.key, *c.evaluation);
  }
}

void WorkbenchController::reopenSession(std::int64_t sessionId) {
  store_->run<std::optional<store::SessionDetail>>(
      [sessionId](store::Store& s) { return s.session(sessionId); }, this,
      [this, sessionId](std::optional<store::SessionDetail> detail) {
        if (!detail) {
          emit errorOccurred(tr("There is no session %1 in the database").arg(sessionId));
          return;
        }
        stop();
        workbench_->loadSession(*detail);
        referenceProblem_.clear();
        emit referenceProblemChanged({}, 0);
        currentKey_ = -1;
        const auto& candidates = workbench_->candidates();
        select(candidates.isEmpty() ? -1 : candidates.back().key);
        emit currentChanged(currentKey_);
        emit sessionReopened(sessionId);
      });
}

void WorkbenchController::exportCandidate(int key, const QString& dir, bool allowUnverified) {
  const CandidateEntry* c = workbench_->candidate(key);
  if (!c) return;
  BundleInput input{workbench_->reference().name.toStdString(),
                    workbench_->reference().source.toStdString(), c->code.toStdString(),
                    c->origin.toStdString(), c->evaluation};
  const bool unverified = !isExportableWithoutConfirmation(input);
  pool_.start([this, input, dir, allowUnverified, unverified, cell = c->storeId] {
    try {
      const auto written = writeBundle(dir.toStdString(), input, allowUnverified);
      QStringList files;
      for (const auto& f : written) files << QString::fromStdString(f);
      postTo(this, [this, files, dir, unverified, cell] {
        store_->write([cell, dir](store::Store& s) {
          if (*cell != 0) s.recordExport(*cell, dir.toStdString());
        });
        emit exported(files, unverified);
      });
    } catch (const std::exception& error) {
      postTo(this, [this, message = QString(error.what())] {
        emit errorOccurred(tr("Export refused: ") + message);
      });
    }
  });
}

}  // namespace crucible::ui
