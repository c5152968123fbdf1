#include "ui/panes/run_bar.h"

#include <QHBoxLayout>

namespace crucible::ui {

namespace {
// The stages crucible::verify reports, in order.
int stageNumber(const QString& stage) {
  static const QStringList stages = {"start", "static", "reference", "candidate", "judge"};
  return static_cast<int>(stages.indexOf(stage));
}
}  // namespace

RunBar::RunBar(WorkbenchController* controller, DeviceService* devices, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  backends_ = new BackendBox(devices, controller_->settings().defaultBackend);
  verify_ = new QPushButton(tr("Verify"));
  verify_->setToolTip(tr("Verify the candidate in the editor (F5)"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setToolTip(tr("Stop the running verification (Shift+F5)"));
  stop_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setRange(0, 4);
  progress_->setValue(0);
  progress_->setMaximumWidth(160);
  progress_->setFormat(QStringLiteral("%v/%m"));
  stage_ = new QLabel(tr("Ready"));
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
    if (running) progress_->setValue(0);
  });
  connect(controller_, &WorkbenchController::progress, this,
          [this](const QString& stage, const QString& message) {
            const int n = stageNumber(stage);
            if (n >= 0) progress_->setValue(n);
            stage_->setText(message);
          });
  connect(controller_->workbench(), &Workbench::candidateChanged, this, [this](int row) {
    const auto& c = controller_->workbench()->candidates()[row];
    if (!c.evaluation) return;
    progress_->setValue(4);
    stage_->setText(tr("Done: %1").arg(verdictText(c.evaluation)));
  });
  connect(controller_, &WorkbenchController::errorOccurred, this,
          [this](const QString&) { stage_->setText(tr("Failed: see the message above")); });
}

}  // namespace crucible::ui
