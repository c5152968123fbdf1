#pragma once
// The session browser: every saved session, searchable by task, model, date and verdict;
// opening one puts it back in the workbench exactly as it was saved.

#include <QComboBox>
#include <QDateEdit>
#include <QLineEdit>
#include <QTableWidget>
#include <QWidget>

#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class SessionsPane : public QWidget {
  Q_OBJECT
 public:
  explicit SessionsPane(WorkbenchController* controller, QWidget* parent = nullptr);

  QTableWidget* table() const { return table_; }
  QLineEdit* taskSearch() const { return task_; }
  QComboBox* verdictFilter() const { return verdict_; }
  /// From and to (both days included, UTC like the table); at their minimum they show "any".
  QDateEdit* sinceFilter() const { return since_; }
  QDateEdit* untilFilter() const { return until_; }

 public slots:
  void refresh();
  void openSelected();

 private:
  WorkbenchController* controller_;
  QLineEdit* task_;
  QLineEdit* model_;
  QDateEdit* since_;
  QDateEdit* until_;
  QComboBox* verdict_;
  QTableWidget* table_;
  quint64 query_ = 0;  // answers to older queries are dropped
  // Enter in a search field: the search runs now, and a single match is opened when it answers.
  bool openSingleMatch_ = false;
};

}  // namespace crucible::ui
