#include "ui/workbench/pipeline_generation_controller.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include "core/generate/generator_factory.h"
#include "core/generate/pipeline.h"
#include "core/util/locations.h"
#include "core/verify/report_text.h"
#include "ui/services/post.h"
#include "ui/settings/settings.h"

namespace crucible::ui {

namespace {
GeneratedEntry entryOf(const generate::CandidateResult& r) {
  const auto& c = r.candidate;
  const auto q = [](const std::string& s) { return QString::fromStdString(s); };
  GeneratedEntry e{
      static_cast<int>(r.id), std::nullopt, r.round,   q(c.origin), q(c.model), q(c.prompt),
      q(c.rawResponse),       q(c.plan),    q(c.code), q(c.label),  q(c.error)};
  if (r.parentId) e.parentId = static_cast<int>(*r.parentId);
  return e;
}

QString summaryOf(const generate::GenerationResult& result) {
  const int n = static_cast<int>(result.candidates.size());
  QString text = QObject::tr("Done: %n candidate(s)", "", n);
  if (result.best) {
    const auto& best = result.candidates[*result.best];
    text += QObject::tr(", best #%1 at %2")
                .arg(best.id)
                .arg(QString::fromStdString(speedupSummary(*best.evaluation)));
  } else {
    text += QObject::tr(", none verified");
  }
  if (result.interrupted) text += QObject::tr(" (stopped)");
  return text;
}

/// The reference under its own file name in `dir` (candidates may import it by module name).
std::string copyReference(const QTemporaryDir& dir, const GenerationRequest& request) {
  const QString path = dir.filePath(QFileInfo(request.referencePath).fileName());
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(request.referenceSource.toUtf8()) < 0) {
    throw std::runtime_error("cannot write " + path.toStdString());
  }
  return path.toStdString();
}
}  // namespace

PipelineGenerationController::PipelineGenerationController(QObject* parent)
    : GenerationController(parent), engine_(std::make_shared<generate::EmbeddedEngine>()) {
  pool_.setMaxThreadCount(1);
}

PipelineGenerationController::~PipelineGenerationController() {
  if (stop_) stop_->request_stop();
  pool_.waitForDone();
}

QVector<ModelOption> PipelineGenerationController::models() const {
  QVector<ModelOption> options{{tr("built-in synthesizer"), "synth", true, false, {}}};
  for (const QString& url : AppSettings::load().endpoints)
    options.push_back({url, url, true, true, {}});
  const bool engine = !locateModelEngine().empty();
  QStringList paths = recentModels();
  const auto loaded = engine_->loaded();
  const QString loadedPath = loaded ? QString::fromStdString(loaded->options.path) : QString();
  if (loaded) {
    paths.removeAll(loadedPath);
    paths.prepend(loadedPath);
  }
  for (const QString& path : paths) {
    const QString name = QFileInfo(path).fileName();
    ModelOption option{
        path == loadedPath ? tr("%1 (embedded, loaded)").arg(name) : tr("%1 (embedded)").arg(name),
        path, true, true, path};
    if (!engine) {
      option.available = false;
      option.note = tr("This build has no embedded engine (crucible-model)");
    } else if (!QFileInfo::exists(path)) {
      option.available = false;
      option.note = tr("%1 no longer exists").arg(path);
    }
    options.push_back(option);
  }
  return options;
}

QStringList PipelineGenerationController::searchModes() const {
  return {"best-of-n", "refine"};
}

void PipelineGenerationController::start(const GenerationRequest& request) {
  stop();
  // A weights folder or .gguf file (not "synth", not a URL): remembered for the picker.
  if (QFileInfo::exists(request.model)) addRecentModel(request.model);
  const quint64 run = ++nextRun_;
  current_ = run;
  auto source = std::make_shared<std::stop_source>();
  stop_ = source;
  emit started(request);
  pool_.start([this, request, run, source] {
    // Everything posted back is dropped unless this is still the current run.
    const auto post = [this, run](auto&& emitter) {
      postTo(this, [this, run, emitter = std::move(emitter)] {
        if (current_ == run) emitter();
      });
    };
    QTemporaryDir dir;
    try {
      generate::GenerationRequest g;
      g.generate.referencePath = copyReference(dir, request);
      g.generate.referenceSource = request.referenceSource.toStdString();
      g.generate.referenceName = request.referenceName.toStdString();
      g.generate.backend = request.verify.backend;
      g.generate.temperature = request.temperature;
      g.verify = request.verify;
      g.verify.referencePath = g.generate.referencePath;
      g.mode = generate::searchModeFromString(request.searchMode.toStdString())
                   .value_or(generate::SearchMode::BestOfN);
      g.n = request.candidates;
      g.rounds = request.rounds;
      g.task = {g.generate.referenceName, request.referencePath.toStdString(),
                g.generate.referenceSource};
      generate::GeneratorOptions options{
          request.model.toStdString(), {}, {}, g.mode == generate::SearchMode::Refine};
      options.engine = engine_;  // the embedded model stays loaded for the next run
      auto generator = generate::makeGenerator(options);
      const auto result = generate::runGeneration(
          *generator, g, source->get_token(),
          [&](const generate::GenerationEvent& event) {
            using Kind = generate::GenerationEvent::Kind;
            const QString message = QString::fromStdString(event.message);
            if (event.kind == Kind::Arrived) {
              post([this, e = entryOf(*event.candidate)] { emit candidateArrived(e); });
            } else if (event.kind == Kind::Verified) {
              post([this, id = static_cast<int>(event.candidate->id),
                    evaluation = *event.candidate->evaluation] {
                emit candidateVerified(id, evaluation);
              });
            } else if (event.kind == Kind::Verify) {
              post([this, id = event.candidate->id, message] {
                emit progress(tr("candidate %1: %2").arg(id).arg(message));
              });
            } else {
              post([this, message] { emit progress(message); });
            }
          },
          [&](int index, const std::string& text) {
            // Index -1 is a line of progress from a generator without tokens (the synthesizer).
            QString piece = QString::fromStdString(text);
            if (index < 0 && !piece.endsWith('\n')) piece += '\n';
            post([this, piece] { emit tokens(piece); });
          });
      post([this, result = QString::fromStdString(result.generatorError),
            summary = summaryOf(result)] {
        current_ = 0;
        if (result.isEmpty()) {
          emit finished(summary);
        } else {
          emit failed(result);
        }
      });
    } catch (const std::exception& error) {
      // A problem with the reference names the file the user opened, not the run's copy.
      QString message = QString::fromUtf8(error.what());
      message.replace(dir.filePath(QFileInfo(request.referencePath).fileName()),
                      request.referencePath);
      post([this, message] {
        current_ = 0;
        emit failed(message);
      });
    }
  });
}

void PipelineGenerationController::stop() {
  if (!current_) return;
  if (stop_) stop_->request_stop();
  current_ = 0;
  emit finished(tr("Stopped: the candidates verified so far are kept"));
}

}  // namespace crucible::ui
