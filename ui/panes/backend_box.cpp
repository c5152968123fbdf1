#include "ui/panes/backend_box.h"

#include <QStandardItemModel>

namespace crucible::ui {

BackendBox::BackendBox(DeviceService* devices, QString defaultBackend, QWidget* parent)
    : QComboBox(parent), devices_(devices), defaultBackend_(std::move(defaultBackend)) {
  setToolTip(tr("Where the candidate's Triton kernels run"));
  // Long device names show in full in the list, not as the box's minimum width.
  setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  setMinimumContentsLength(18);
  fill();
  connect(devices_, &DeviceService::choicesChanged, this, &BackendBox::fill);
}

void BackendBox::fill() {
  const QString previous = currentData().toString();
  const QString wanted = previous.isEmpty() ? defaultBackend_ : previous;
  clear();
  const auto& choices = devices_->choices();
  auto* items = qobject_cast<QStandardItemModel*>(model());
  for (int i = 0; i < choices.size(); ++i) {
    addItem(choices[i].label, choices[i].backend);
    if (!choices[i].available) {
      items->item(i)->setEnabled(false);
      items->item(i)->setToolTip(choices[i].note);
    }
  }
  selectBackend(wanted);
}

void BackendBox::selectBackend(const QString& backend) {
  const auto& choices = devices_->choices();
  for (int i = 0; i < choices.size(); ++i) {
    if (choices[i].backend == backend && choices[i].available) {
      setCurrentIndex(i);
      return;
    }
  }
}

BackendChoice BackendBox::choice() const {
  const int i = currentIndex();
  const auto& choices = devices_->choices();
  return i >= 0 && i < choices.size() ? choices[i] : BackendChoice{"auto", "auto", "", true, ""};
}

}  // namespace crucible::ui
