#pragma once
// The verify bar: backend picker (the detected OpenCL devices and GPUs), Verify and Stop, and
// what is running now (RunStatus): its progress and one line saying what and for how long.

#include <QComboBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QWidget>

#include "ui/panes/backend_box.h"
#include "ui/services/device_service.h"
#include "ui/workbench/run_status.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class RunBar : public QWidget {
  Q_OBJECT
 public:
  RunBar(WorkbenchController* controller, DeviceService* devices, RunStatus* status,
         QWidget* parent = nullptr);

  BackendChoice backend() const { return backends_->choice(); }
  void selectBackend(const QString& backend) { backends_->selectBackend(backend); }
  BackendBox* backendBox() const { return backends_; }
  QPushButton* verifyButton() const { return verify_; }
  QPushButton* stopButton() const { return stop_; }
  QProgressBar* progressBar() const { return progress_; }
  QString stageText() const { return stage_->text(); }

 signals:
  void verifyRequested();

 private:
  void showStatus();

  WorkbenchController* controller_;
  RunStatus* status_;
  BackendBox* backends_;
  QPushButton* verify_;
  QPushButton* stop_;
  QProgressBar* progress_;
  QLabel* stage_;
};

}  // namespace crucible::ui
