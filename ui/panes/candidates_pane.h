#pragma once
// The candidates table; selecting a row selects the candidate everywhere.

#include <QTableView>
#include <QWidget>

#include "ui/workbench/candidates_model.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class CandidatesPane : public QWidget {
  Q_OBJECT
 public:
  explicit CandidatesPane(WorkbenchController* controller, QWidget* parent = nullptr);
  QTableView* view() const { return view_; }
  CandidatesModel* model() const { return model_; }

 private:
  WorkbenchController* controller_;
  CandidatesModel* model_;
  QTableView* view_;
};

}  // namespace crucible::ui
