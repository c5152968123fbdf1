#include "ui/panes/candidates_pane.h"

#include <QHeaderView>
#include <QVBoxLayout>

namespace crucible::ui {

CandidatesPane::CandidatesPane(WorkbenchController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  model_ = new CandidatesModel(controller_->workbench(), this);
  model_->setRewardPreset(controller_->settings().rewardPreset);
  connect(controller_, &WorkbenchController::settingsChanged, this,
          [this] { model_->setRewardPreset(controller_->settings().rewardPreset); });
  view_ = new QTableView;
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->verticalHeader()->hide();
  // Numbers and verdicts take the width they need; origin/model (the only free text) takes the
  // rest, so in a narrow pane it is elided rather than the metrics being cut off at the right.
  view_->horizontalHeader()->setStretchLastSection(false);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view_->horizontalHeader()->setSectionResizeMode(CandidatesModel::Origin, QHeaderView::Stretch);
  view_->setTextElideMode(Qt::ElideMiddle);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);

  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (current.isValid()) {
              controller_->select(model_->data(current, CandidatesModel::KeyRole).toInt());
            }
          });
  connect(controller_, &WorkbenchController::currentChanged, this, [this](int key) {
    const int row = controller_->workbench()->rowOf(key);
    if (row >= 0 && view_->currentIndex().row() != row) view_->selectRow(row);
  });
  connect(controller_, &WorkbenchController::verifyingChanged, this, [this](bool running) {
    model_->setRunningKey(running ? controller_->verifyingKey() : -1);
  });
}

}  // namespace crucible::ui
