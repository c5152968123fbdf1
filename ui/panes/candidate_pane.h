#pragma once
// The selected candidate's code beside the reference, editable: verifying an edit makes a new
// candidate. Its flags are squiggles under their lines.

#include <QLabel>
#include <QWidget>

#include "ui/panes/code_editor.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class CandidatePane : public QWidget {
  Q_OBJECT
 public:
  explicit CandidatePane(WorkbenchController* controller, QWidget* parent = nullptr);
  CodeEditor* editor() const { return editor_; }
  QString editorText() const { return editor_->text(); }
  /// True when the editor's text differs from the selected candidate's code.
  bool edited() const;

 public slots:
  void pasteAsCandidate();
  void showLine(int line) { editor_->showLine(line); }

 signals:
  void flagLineClicked(int line);

 private:
  void showCurrent();
  void updateTitle();

  WorkbenchController* controller_;
  QLabel* title_;
  CodeEditor* editor_;
};

}  // namespace crucible::ui
