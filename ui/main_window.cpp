#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "ui/dialogs/settings_dialog.h"
#include "ui/panes/candidate_pane.h"
#include "ui/panes/candidates_pane.h"
#include "ui/panes/compare_pane.h"
#include "ui/panes/generation_pane.h"
#include "ui/panes/ir_pane.h"
#include "ui/panes/profile_pane.h"
#include "ui/panes/reference_pane.h"
#include "ui/panes/run_bar.h"
#include "ui/panes/sessions_pane.h"
#include "ui/panes/verification_pane.h"
#include "ui/workbench/run_status.h"

namespace crucible::ui {

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("Crucible"));
  setAcceptDrops(true);
  const AppSettings settings = AppSettings::load();
  workbench_ = new Workbench(this);
  store_ = new StoreService(
      options.databasePath.isEmpty() ? settings.databasePath : options.databasePath, this);
  verifier_ = new VerifyService(this);
  devices_ = new DeviceService(this);
  controller_ = new WorkbenchController(workbench_, store_, verifier_, this);
  controller_->setSettings(settings);
  buildPanes(options);
  buildMenus();

  connect(controller_, &WorkbenchController::errorOccurred, this, &MainWindow::showError);
  connect(controller_, &WorkbenchController::exported, this,
          [this](const QStringList& files, bool unverified) {
            statusBar()->showMessage(
                tr("Exported %1 files to %2%3")
                    .arg(files.size())
                    .arg(files.isEmpty() ? QString() : QFileInfo(files[0]).path())
                    .arg(unverified ? tr(" (marked UNVERIFIED)") : QString()),
                10000);
          });
  connect(workbench_, &Workbench::referenceChanged, this, [this] {
    errorStrip_->hide();
    setWindowTitle(tr("%1 — Crucible").arg(workbench_->reference().name));
  });
  connect(controller_, &WorkbenchController::sessionReopened, this,
          [this](qint64 id) { statusBar()->showMessage(tr("Reopened session %1").arg(id), 5000); });

  // First run: most of a usual screen (two editors side by side want the width), never less
  // than 1400x900; a saved geometry replaces it.
  const QSize screenSize = screen() ? screen()->availableGeometry().size() : QSize(1400, 900);
  resize(std::clamp(screenSize.width() * 9 / 10, 1400, 1760),
         std::clamp(screenSize.height() * 9 / 10, 900, 1100));
  QSettings layout;
  restoreGeometry(layout.value("window/geometry").toByteArray());
  restoreState(layout.value("window/state").toByteArray());
  devices_->detect();
}

MainWindow::~MainWindow() = default;

QDockWidget* MainWindow::dock(const QString& title, const QString& name, QWidget* pane,
                              Qt::DockWidgetArea area) {
  auto* d = new QDockWidget(title, this);
  d->setObjectName(name);  // restoreState finds docks by name
  d->setWidget(pane);
  addDockWidget(area, d);
  return d;
}

void MainWindow::buildPanes(const MainWindowOptions& options) {
  referencePane_ = new ReferencePane(controller_);
  candidatePane_ = new CandidatePane(controller_);
  runStatus_ = new RunStatus(controller_, this);
  runStatus_->watchGeneration(options.generator);
  runBar_ = new RunBar(controller_, devices_, runStatus_);
  errorStrip_ = new QLabel;
  errorStrip_->setWordWrap(true);
  errorStrip_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  errorStrip_->setStyleSheet("QLabel { background: #fdecea; color: #8a1c1c; padding: 4px; }");
  errorStrip_->hide();
  auto* sources = new QSplitter(Qt::Horizontal);
  sources->addWidget(referencePane_);
  sources->addWidget(candidatePane_);
  // Compare takes the sources' place, full height, while the candidates stay in view.
  comparePane_ = new ComparePane(controller_);
  centralTabs_ = new QTabWidget;
  centralTabs_->setDocumentMode(true);
  centralTabs_->addTab(sources, tr("Reference and candidate"));
  centralTabs_->addTab(comparePane_, tr("Compare"));
  inspector_ = new InspectService(this);
  irPane_ = new IrPane(controller_, inspector_);
  profilePane_ = new ProfilePane(controller_, inspector_);
  centralTabs_->addTab(irPane_, tr("What runs"));
  centralTabs_->addTab(profilePane_, tr("Profile"));
  auto* central = new QWidget;
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(runBar_);
  layout->addWidget(errorStrip_);
  layout->addWidget(centralTabs_, 1);
  setCentralWidget(central);

  candidatesPane_ = new CandidatesPane(controller_);
  verificationPane_ = new VerificationPane(controller_, runStatus_);
  sessionsPane_ = new SessionsPane(controller_);
  generator_ = options.generator;
  generationPane_ = new GenerationPane(controller_, devices_, options.generator);

  candidatesDock_ = dock(tr("Candidates"), "candidates", candidatesPane_, Qt::BottomDockWidgetArea);
  auto* verification =
      dock(tr("Verification"), "verification", verificationPane_, Qt::RightDockWidgetArea);
  sessionsDock_ = dock(tr("Sessions"), "sessions", sessionsPane_, Qt::LeftDockWidgetArea);
  auto* generation = dock(tr("Generate"), "generate", generationPane_, Qt::LeftDockWidgetArea);
  tabifyDockWidget(generation, sessionsDock_);
  generation->raise();
  sessionsDock_->hide();
  // The side docks run the full height, the candidates sit under the sources between them.
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  verificationPane_->setMinimumWidth(340);
  candidatesDock_->raise();
  // First-run proportions, once the window has its size (resizeDocks before that is lost); a
  // saved layout replaces them.
  if (!QSettings().contains("window/state")) {
    QTimer::singleShot(0, this, [this, generation, verification] {
      // The sources get most of the width: two editors side by side need it.
      resizeDocks({generation, verification}, {width() / 7, width() / 4}, Qt::Horizontal);
      resizeDocks({candidatesDock_}, {height() / 4}, Qt::Vertical);
    });
  }

  // A flag with a line: its squiggle and its row show each other.
  connect(verificationPane_, &VerificationPane::flagLineActivated, candidatePane_,
          &CandidatePane::showLine);
  connect(candidatePane_, &CandidatePane::flagLineClicked, verificationPane_,
          &VerificationPane::selectFlagAtLine);
  connect(runBar_, &RunBar::verifyRequested, this, &MainWindow::verifyEditor);
  // A launch in the profile: its line in the candidate.
  connect(profilePane_, &ProfilePane::lineActivated, this, [this](int line) {
    showSources();
    candidatePane_->showLine(line);
  });
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a reference or a candidate"), QString(), tr("Python (*.py);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
  });
  file->addAction(tr("Open &Candidate…"), QKeySequence(tr("Ctrl+Shift+O")), this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a candidate or a model response"), QString(),
                                     tr("Python or text (*.py *.md *.txt);;All files (*)"));
    if (!path.isEmpty()) controller_->addCandidateFile(path);
  });
  file->addAction(tr("&Paste Candidate"), QKeySequence(tr("Ctrl+Shift+V")), candidatePane_,
                  &CandidatePane::pasteAsCandidate);
  recentMenu_ = file->addMenu(tr("&Recent Files"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  QMenu* examples = file->addMenu(tr("&Examples"));
  QMenu* levels[4] = {examples, nullptr, nullptr, nullptr};
  for (const BundledExample& example : bundledExamples()) {
    const int level = std::clamp(example.level, 0, 3);
    if (!levels[level]) levels[level] = examples->addMenu(tr("Level %1 tasks").arg(level));
    levels[level]->addAction(example.title, this,
                             [this, example] { controller_->openExample(example); });
  }
  file->addSeparator();
  file->addAction(tr("&Export Kernel…"), QKeySequence(tr("Ctrl+E")), this,
                  &MainWindow::exportCurrent);
  file->addSeparator();
  file->addAction(tr("&Settings…"), this, &MainWindow::showSettings)
      ->setShortcuts({QKeySequence(tr("Ctrl+,")), QKeySequence::Preferences});
  // Ctrl+Q itself: some platforms (the offscreen one among them) bind nothing to StandardKey
  // Quit.
  file->addAction(tr("&Quit"), QKeySequence(Qt::CTRL | Qt::Key_Q), this, &QWidget::close);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Verify"), this, &MainWindow::verifyEditor)
      ->setShortcuts({QKeySequence(Qt::Key_F5), QKeySequence(tr("Ctrl+Return"))});
  run->addAction(tr("&Stop"), QKeySequence(tr("Shift+F5")), this, [this] {
    controller_->stop();  // verification, and generation when it runs
    generationPane_->stop();
  });
  // The run starts where it can be seen: its dock shown and raised over any tab it shares.
  run->addAction(tr("&Generate"), QKeySequence(tr("Ctrl+G")), this, [this] {
    if (auto* dock = findChild<QDockWidget*>("generate")) {
      dock->show();
      dock->raise();
    }
    generationPane_->generate();
  });
  run->addAction(tr("&Compare with Previous"), QKeySequence(tr("Ctrl+D")), this,
                 &MainWindow::showCompare);
  run->addSeparator();
  run->addAction(tr("What &Runs (IR)"), QKeySequence(Qt::Key_F6), this, &MainWindow::showIr);
  run->addAction(tr("&Profile"), QKeySequence(Qt::Key_F7), this, &MainWindow::showProfile);

  viewMenu_ = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) viewMenu_->addAction(d->toggleViewAction());
  viewMenu_->addSeparator();
  viewMenu_->addAction(tr("&Sessions"), QKeySequence(tr("Ctrl+Shift+S")), this,
                       &MainWindow::showSessions);
  viewMenu_->addAction(tr("Reference and Candidate"), QKeySequence(tr("Ctrl+1")), this,
                       &MainWindow::showSources);
  viewMenu_->addAction(tr("Compare"), QKeySequence(tr("Ctrl+2")), this,
                       [this] { centralTabs_->setCurrentWidget(comparePane_); });
  viewMenu_->addAction(tr("Next Candidate"), QKeySequence(tr("Ctrl+Down")), this, [this] {
    const auto& list = workbench_->candidates();
    const int row = workbench_->rowOf(controller_->currentKey());
    if (row + 1 < list.size()) controller_->select(list[row + 1].key);
  });
  viewMenu_->addAction(tr("Previous Candidate"), QKeySequence(tr("Ctrl+Up")), this, [this] {
    const int row = workbench_->rowOf(controller_->currentKey());
    if (row > 0) controller_->select(workbench_->candidates()[row - 1].key);
  });
}

void MainWindow::fillRecentMenu() {
  recentMenu_->clear();
  for (const QString& path : recentFiles()) {
    recentMenu_->addAction(path, this, [this, path] { openFile(path); });
  }
  if (recentMenu_->isEmpty()) recentMenu_->addAction(tr("(none yet)"))->setEnabled(false);
}

void MainWindow::openFile(const QString& path) {
  controller_->openFile(path);
}

void MainWindow::verifyEditor() {
  errorStrip_->hide();
  showSources();  // what is verified is in view
  controller_->verifyText(candidatePane_->editorText(), runBar_->backend());
}

void MainWindow::showCompare() {
  centralTabs_->setCurrentWidget(comparePane_);
  comparePane_->compareCurrentWithPrevious();
}

void MainWindow::showIr() {
  centralTabs_->setCurrentWidget(irPane_);
  irPane_->inspect(runBar_->backend());
}

void MainWindow::showProfile() {
  centralTabs_->setCurrentWidget(profilePane_);
  profilePane_->profile(runBar_->backend());
}

void MainWindow::showSources() {
  centralTabs_->setCurrentIndex(0);
}

void MainWindow::showSessions() {
  sessionsDock_->show();
  sessionsDock_->raise();
  resizeDocks({sessionsDock_}, {qMax(sessionsDock_->width(), 560)}, Qt::Horizontal);
  sessionsPane_->refresh();
  sessionsPane_->taskSearch()->setFocus();
}

void MainWindow::exportCurrent() {
  const CandidateEntry* c = workbench_->candidate(controller_->currentKey());
  if (!c) {
    showError(tr("Select a candidate to export"));
    return;
  }
  const bool verified = c->evaluation && c->evaluation->verdict == Verdict::Verified;
  bool allowUnverified = false;
  if (!verified) {
    QMessageBox box(QMessageBox::Warning, tr("Export an unverified kernel?"),
                    tr("This candidate is %1. Its bundle will be marked UNVERIFIED in every file.")
                        .arg(verdictText(c->evaluation)),
                    QMessageBox::Cancel, this);
    QPushButton* confirm = box.addButton(tr("Export Unverified"), QMessageBox::DestructiveRole);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() != confirm) return;
    allowUnverified = true;
  }
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export the bundle into"));
  if (!dir.isEmpty()) controller_->exportCandidate(c->key, dir, allowUnverified);
}

void MainWindow::showSettings() {
  const AppSettings shown = shownSettings(controller_->settings(), store_->databasePath());
  SettingsDialog dialog(shown, this);
  if (dialog.exec() != QDialog::Accepted) return;
  const QString database = dialog.settings().databasePath;
  const AppSettings settings = settingsToSave(dialog.settings(), shown, controller_->settings());
  settings.save();
  controller_->setSettings(settings);
  if (database != shown.databasePath) controller_->setDatabase(database);  // no restart needed
  runBar_->selectBackend(settings.defaultBackend);
  generationPane_->refreshModels();  // the endpoints may have changed
}

void MainWindow::showError(const QString& message) {
  lastError_ = message;
  errorStrip_->setText(message);
  errorStrip_->show();
  statusBar()->showMessage(message.section('\n', 0, 0), 10000);
}

bool MainWindow::confirmQuit() {
  const bool generating = generator_ != nullptr && generator_->running();
  if (!generating && !controller_->verifying()) return true;
  QMessageBox box(QMessageBox::Question, tr("Quit while a run is going on?"),
                  generating ? tr("A generation is running. Quitting stops it; the candidates "
                                  "verified so far are already stored.")
                             : tr("A verification is running. Quitting stops it and its result "
                                  "is not stored."),
                  QMessageBox::Cancel, this);
  QPushButton* quit = box.addButton(tr("Stop and Quit"), QMessageBox::DestructiveRole);
  box.setDefaultButton(QMessageBox::Cancel);
  box.exec();
  return box.clickedButton() == quit;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!confirmQuit()) {
    event->ignore();
    return;
  }
  QSettings layout;
  layout.setValue("window/geometry", saveGeometry());
  layout.setValue("window/state", saveState());
  controller_->stop();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) openFile(url.toLocalFile());
  }
  event->acceptProposedAction();
}

}  // namespace crucible::ui
