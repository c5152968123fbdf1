#include "ui/panes/ir_pane.h"

#include <Qsci/qscilexercpp.h>

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

namespace crucible::ui {

namespace {
constexpr int kPythonLineMargin = 2;  // the IR editor's margin with each line's Python line

QString levelTitle(const std::string& name) {
  if (name == "opencl_c") return QObject::tr("OpenCL C");
  if (name == "ttir") return QObject::tr("TTIR");
  if (name == "ttgir") return QObject::tr("TTGIR");
  if (name == "llir") return QObject::tr("LLVM IR");
  if (name == "ptx") return QObject::tr("PTX");
  return QString::fromStdString(name);
}

QString errorText(const inspect::IrError& e) {
  QString where = QString::fromStdString(e.file);
  if (e.line) where += QStringLiteral(":%1").arg(*e.line);
  return (where.isEmpty() ? QString() : where + QStringLiteral(": ")) +
         QString::fromStdString(e.message);
}
}  // namespace

IrPane::IrPane(WorkbenchController* controller, InspectService* inspector, QWidget* parent)
    : QWidget(parent), controller_(controller), inspector_(inspector) {
  refresh_ = new QPushButton(tr("Show what runs"));
  refresh_->setToolTip(tr("Compile the selected candidate's kernels and show the result (F6)"));
  status_ = new QLabel(tr("Select a candidate and press F6 to see what its kernels compile to"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  kernels_ = new QComboBox;
  kernels_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  kernels_->setMinimumContentsLength(24);
  levels_ = new QTabBar;
  levels_->setExpanding(false);
  python_ = new CodeEditor;
  python_->setReadOnly(true);
  ir_ = new CodeEditor;
  ir_->setReadOnly(true);
  ir_->setMarginType(kPythonLineMargin, QsciScintilla::TextMarginRightJustified);
  ir_->setMarginWidth(kPythonLineMargin, QStringLiteral("py 0000"));
  ir_->setMarginsForegroundColor(QColor(0x5f, 0x63, 0x68));

  auto* top = new QHBoxLayout;
  top->addWidget(refresh_);
  top->addWidget(new QLabel(tr("Kernel:")));
  top->addWidget(kernels_, 1);
  top->addWidget(levels_, 2);
  auto* sides = new QSplitter;
  sides->addWidget(python_);
  sides->addWidget(ir_);
  sides->setStretchFactor(0, 2);
  sides->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(status_);
  layout->addWidget(sides, 1);

  connect(refresh_, &QPushButton::clicked, this, [this] { inspect(lastBackend_); });
  connect(kernels_, &QComboBox::currentIndexChanged, this, [this] {
    const QSignalBlocker quiet(levels_);
    while (levels_->count() > 0) levels_->removeTab(0);
    const int k = kernels_->currentIndex();
    if (report_ && k >= 0 && k < static_cast<int>(report_->kernels.size())) {
      for (const auto& level : report_->kernels[k].levels) levels_->addTab(levelTitle(level.name));
    }
    showLevel();
  });
  connect(levels_, &QTabBar::currentChanged, this, &IrPane::showLevel);
  connect(ir_, &QsciScintilla::cursorPositionChanged, this,
          [this](int line, int) { irCursorMoved(line); });
  connect(python_, &QsciScintilla::cursorPositionChanged, this,
          [this](int line, int) { pythonCursorMoved(line + 1); });
  connect(inspector_, &InspectService::irReady, this, &IrPane::showReport);
  connect(inspector_, &InspectService::irFailed, this, [this](int, const QString& message) {
    refresh_->setEnabled(true);
    status_->setText(tr("Could not list what runs: %1").arg(message));
  });
  // Another candidate or reference: the listing shown is about something else now.
  connect(controller_, &WorkbenchController::currentChanged, this, [this](int key) {
    if (report_ && key != reportKey_) {
      status_->setText(tr("This listing is for another candidate: press F6 for this one"));
    }
  });
}

void IrPane::inspect(const BackendChoice& backend) {
  lastBackend_ = backend;
  const auto files = controller_->writeCurrentSources();
  if (!files) {
    status_->setText(tr("Open a reference and select a candidate first"));
    return;
  }
  inspect::IrRequest request;
  request.referencePath = files->sources.referencePath.toStdString();
  request.candidatePath = files->sources.candidatePath.toStdString();
  request.backend = backend.backend.isEmpty() ? "auto" : backend.backend.toStdString();
  request.openclDevice = backend.openclDevice.toStdString();
  refresh_->setEnabled(false);
  status_->setText(
      tr("Compiling the kernels of the candidate on %1…").arg(request.backend.c_str()));
  if (const CandidateEntry* c = controller_->workbench()->candidate(files->key))
    python_->setText(c->code);
  inspector_->startIr(request, files->dir, files->key);
}

void IrPane::showReport(int key, const inspect::KernelIrReport& report) {
  refresh_->setEnabled(true);
  report_ = report;
  reportKey_ = key;
  QString status;
  if (report.error)
    status = tr("The candidate did not run: %1").arg(errorText(*report.error));
  else if (!report.note.empty())
    status = QString::fromStdString(report.note);
  else
    status =
        tr("%1: %n kernel(s) compiled for %2", "", static_cast<int>(report.kernels.size()))
            .arg(QString::fromStdString(report.backend), QString::fromStdString(report.target));
  status_->setText(status);
  {
    const QSignalBlocker quiet(kernels_);
    kernels_->clear();
    for (const auto& k : report.kernels) {
      QString label = QString::fromStdString(k.name);
      if (k.defLine) label += tr(" (line %1)").arg(*k.defLine);
      if (!k.specialization.empty())
        label += QStringLiteral(" · ") + QString::fromStdString(k.specialization);
      kernels_->addItem(label);
    }
    kernels_->setCurrentIndex(report.kernels.empty() ? -1 : 0);
  }
  emit kernels_->currentIndexChanged(kernels_->currentIndex());  // the levels of the first
}

const inspect::IrLevel* IrPane::currentLevel() const {
  const int k = kernels_->currentIndex(), l = levels_->currentIndex();
  if (!report_ || k < 0 || k >= static_cast<int>(report_->kernels.size())) return nullptr;
  const auto& levels = report_->kernels[k].levels;
  return l >= 0 && l < static_cast<int>(levels.size()) ? &levels[l] : nullptr;
}

void IrPane::showLevel() {
  const inspect::IrLevel* level = currentLevel();
  ir_->setLexer(nullptr);
  if (level && level->name == "opencl_c") {
    auto* lexer = new QsciLexerCPP(ir_);
    lexer->setDefaultFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    lexer->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    ir_->setLexer(lexer);
  }
  ir_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  ir_->setText(level ? QString::fromStdString(level->text)
                     : (level == nullptr && report_ ? tr("(nothing compiled)") : QString()));
  ir_->clearMarginText();
  marginLabels_.clear();
  if (level == nullptr) return;
  if (level->error) status_->setText(errorText(*level->error));
  marginLabels_.resize(static_cast<int>(level->lineMap.size()));
  for (std::size_t i = 0; i < level->lineMap.size(); ++i) {
    if (level->lineMap[i]) {
      const int line = static_cast<int>(i);
      marginLabels_[line] = QStringLiteral("py %1").arg(*level->lineMap[i]);
      ir_->setMarginText(line, marginLabels_[line], QsciScintillaBase::STYLE_LINENUMBER);
    }
  }
  // Both sides open where the kernel is: its def in the Python, its first mapped line in the IR
  // (a compiler's prelude of helpers comes before it).
  const int k = kernels_->currentIndex();
  if (const auto& def = report_->kernels[k].defLine) {
    python_->setCursorPosition(*def - 1, 0);
    python_->setFirstVisibleLine(std::max(0, *def - 3));
  }
  for (std::size_t i = 0; i < level->lineMap.size(); ++i) {
    if (level->lineMap[i]) {
      ir_->setFirstVisibleLine(std::max(0, static_cast<int>(i) - 2));
      break;
    }
  }
}

QVector<int> IrPane::irLinesOf(int pythonLine) const {
  QVector<int> lines;
  if (const inspect::IrLevel* level = currentLevel()) {
    for (std::size_t i = 0; i < level->lineMap.size(); ++i) {
      if (level->lineMap[i] == pythonLine) lines.append(static_cast<int>(i));
    }
  }
  return lines;
}

void IrPane::irCursorMoved(int line) {
  const inspect::IrLevel* level = currentLevel();
  if (!level || line < 0 || line >= static_cast<int>(level->lineMap.size())) return;
  const auto& python = level->lineMap[line];
  python_->setChangedLines(python ? QVector<int>{*python - 1} : QVector<int>{});
  if (python) python_->ensureLineVisible(*python - 1);
  ir_->setChangedLines(python ? irLinesOf(*python) : QVector<int>{});
}

void IrPane::pythonCursorMoved(int line) {
  const QVector<int> lines = irLinesOf(line);
  ir_->setChangedLines(lines);
  python_->setChangedLines(lines.isEmpty() ? QVector<int>{} : QVector<int>{line - 1});
  if (!lines.isEmpty()) ir_->ensureLineVisible(lines.first());
}

}  // namespace crucible::ui
