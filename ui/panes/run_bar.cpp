#include "ui/panes/run_bar.h"

#include <QHBoxLayout>
#include <QStandardItemModel>

namespace crucible::ui {

namespace {
// The stages crucible::verify reports, in order.
int stageNumber(const QString& stage) {
  static const QStringList stages = {"start", "static", "reference", "candidate", "judge"};
  return static_cast<int>(stages.indexOf(stage));
}
}  // namespace

RunBar::RunBar(WorkbenchController* controller, DeviceService* devices, QWidget* parent)
    : QWidget(parent), controller_(controller), devices_(devices) {
  backends_ = new QComboBox;
  backends_->setToolTip(tr("Where the candidate's Triton kernels run"));
  backends_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
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
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  layout->addWidget(new QLabel(tr("Backend:")));
  layout->addWidget(backends_);
  layout->addWidget(verify_);
  layout->addWidget(stop_);
  layout->addWidget(progress_);
  layout->addWidget(stage_, 1);

  fillBackends();
  connect(devices_, &DeviceService::choicesChanged, this, &RunBar::fillBackends);
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

void RunBar::fillBackends() {
  const QString previous = backends_->currentData().toString();
  const QString wanted = previous.isEmpty() ? controller_->settings().defaultBackend : previous;
  backends_->clear();
  const auto& choices = devices_->choices();
  for (int i = 0; i < choices.size(); ++i) {
    backends_->addItem(choices[i].label, choices[i].backend);
    if (!choices[i].available) {
      auto* model = qobject_cast<QStandardItemModel*>(backends_->model());
      model->item(i)->setEnabled(false);
      model->item(i)->setToolTip(choices[i].note);
    }
  }
  selectBackend(wanted);
}

void RunBar::selectBackend(const QString& backend) {
  const auto& choices = devices_->choices();
  for (int i = 0; i < choices.size(); ++i) {
    if (choices[i].backend == backend && choices[i].available) {
      backends_->setCurrentIndex(i);
      return;
    }
  }
}

BackendChoice RunBar::backend() const {
  const int i = backends_->currentIndex();
  const auto& choices = devices_->choices();
  return i >= 0 && i < choices.size() ? choices[i] : BackendChoice{"auto", "auto", "", true, ""};
}

}  // namespace crucible::ui
