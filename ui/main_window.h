#pragma once
// The workbench's window: a shell that docks the panes, owns the menus and shortcuts, and keeps
// its layout between runs. Everything it shows is a pane; everything it does is a controller or
// service call.

#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QTabWidget>

#include "ui/workbench/generation_controller.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class CandidatePane;
class CandidatesPane;
class ComparePane;
class GenerationPane;
class ReferencePane;
class RunBar;
class RunStatus;
class InspectService;
class IrPane;
class ProfilePane;
class SessionsPane;
class VerificationPane;

struct MainWindowOptions {
  QString databasePath;  // overrides the setting ("" = the setting, else core's default)
  GenerationController* generator = nullptr;  // generation (app: PipelineGenerationController)
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(const MainWindowOptions& options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  WorkbenchController* controller() const { return controller_; }
  ReferencePane* referencePane() const { return referencePane_; }
  CandidatePane* candidatePane() const { return candidatePane_; }
  CandidatesPane* candidatesPane() const { return candidatesPane_; }
  VerificationPane* verificationPane() const { return verificationPane_; }
  ComparePane* comparePane() const { return comparePane_; }
  SessionsPane* sessionsPane() const { return sessionsPane_; }
  GenerationPane* generationPane() const { return generationPane_; }
  RunBar* runBar() const { return runBar_; }
  RunStatus* runStatus() const { return runStatus_; }
  IrPane* irPane() const { return irPane_; }
  ProfilePane* profilePane() const { return profilePane_; }
  QString lastError() const { return lastError_; }

 public slots:
  void openFile(const QString& path);
  void verifyEditor();
  void showCompare();
  /// The reference and candidate editors again (after Compare).
  void showSources();
  /// What the current candidate's kernels compile to (F6), and where its time goes (F7).
  void showIr();
  void showProfile();
  void showSessions();
  void exportCurrent();
  void showSettings();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildPanes(const MainWindowOptions& options);
  void buildMenus();
  void fillRecentMenu();
  void showError(const QString& message);
  /// True when nothing runs, or the user chose to stop what runs and quit.
  bool confirmQuit();
  QDockWidget* dock(const QString& title, const QString& name, QWidget* pane,
                    Qt::DockWidgetArea area);

  Workbench* workbench_;
  StoreService* store_;
  VerifyService* verifier_;
  DeviceService* devices_;
  WorkbenchController* controller_;
  ReferencePane* referencePane_ = nullptr;
  CandidatePane* candidatePane_ = nullptr;
  CandidatesPane* candidatesPane_ = nullptr;
  VerificationPane* verificationPane_ = nullptr;
  ComparePane* comparePane_ = nullptr;
  SessionsPane* sessionsPane_ = nullptr;
  GenerationPane* generationPane_ = nullptr;
  GenerationController* generator_ = nullptr;  // may be null
  RunStatus* runStatus_ = nullptr;
  RunBar* runBar_ = nullptr;
  QLabel* errorStrip_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QDockWidget* candidatesDock_ = nullptr;
  QTabWidget* centralTabs_ = nullptr;  // the sources, the comparison, what runs, the profile
  InspectService* inspector_ = nullptr;
  IrPane* irPane_ = nullptr;
  ProfilePane* profilePane_ = nullptr;
  QDockWidget* sessionsDock_ = nullptr;
  QString lastError_;
};

}  // namespace crucible::ui
