#pragma once
// Two candidates side by side at full height: their code with the lines only one of them has
// highlighted and, within a changed line, the words that changed, scrolling together line for
// line; their metrics beside them in parallel columns (cells that differ are highlighted).

#include <QComboBox>
#include <QTableWidget>
#include <QWidget>

#include "core/util/line_diff.h"
#include "ui/panes/code_editor.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class ComparePane : public QWidget {
  Q_OBJECT
 public:
  explicit ComparePane(WorkbenchController* controller, QWidget* parent = nullptr);

  /// Compares the candidates with these keys.
  void compare(int leftKey, int rightKey);
  /// The current candidate against the one before it in the table.
  void compareCurrentWithPrevious();

  CodeEditor* left() const { return left_; }
  CodeEditor* right() const { return right_; }
  QTableWidget* metrics() const { return metrics_; }
  QVector<int> changedLeft() const { return changedLeft_; }
  QVector<int> changedRight() const { return changedRight_; }

 private:
  void fillPickers();
  void refresh();

  WorkbenchController* controller_;
  QComboBox* leftPick_;
  QComboBox* rightPick_;
  CodeEditor* left_;
  CodeEditor* right_;
  QTableWidget* metrics_;
  QVector<int> changedLeft_, changedRight_;
  LineDiff diff_;
  bool syncing_ = false;  // one side follows the other, not back again
};

}  // namespace crucible::ui
