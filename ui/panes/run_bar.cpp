#include "ui/panes/run_bar.h"

#include <QHBoxLayout>

namespace crucible::ui {

RunBar::RunBar(WorkbenchController* controller, DeviceService* devices, RunStatus* status,
               QWidget* parent)
    : QWidget(parent), controller_(controller), status_(status) {
  backends_ = new BackendBox(devices, controller_->settings().defaultBackend);
  verify_ = new QPushButton(tr("Verify"));
  verify_->setToolTip(tr("Verify the candidate in the editor (F5)"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setToolTip(tr("Stop the running verification (Shift+F5)"));
  stop_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(160);
  stage_ = new QLabel;
  // Long stage messages are cut at the window's edge, not allowed to widen the window.
  stage_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  layout->addWidget(new QLabel(tr("Backend:")));
  layout->addWidget(backends_);
  layout->addWidget(verify_);
  layout->addWidget(stop_);
  layout->addWidget(progress_);
  layout->addWidget(stage_, 1);

  connect(verify_, &QPushButton::clicked, this, &RunBar::verifyRequested);
  connect(stop_, &QPushButton::clicked, controller_, &WorkbenchController::stop);
  connect(controller_, &WorkbenchController::verifyingChanged, this, [this](bool running) {
    verify_->setEnabled(!running);
    stop_->setEnabled(running);
  });
  connect(status_, &RunStatus::changed, this, &RunBar::showStatus);
  showStatus();
}

void RunBar::showStatus() {
  // Nothing to count (ready): the bar is hidden rather than showing a meaningless 0/4.
  progress_->setVisible(status_->progressMaximum() > 0);
  progress_->setRange(0, std::max(1, status_->progressMaximum()));
  progress_->setValue(status_->progressValue());
  progress_->setFormat(status_->progressFormat());
  stage_->setText(status_->text());
  stage_->setToolTip(status_->text());
}

}  // namespace crucible::ui
