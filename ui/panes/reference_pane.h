#pragma once
// The PyTorch reference, read-only, with a problem line marked when the file is not a valid
// KernelBench reference, and a bar offering to reload it when its file changes on disk.

#include <QLabel>
#include <QPushButton>
#include <QWidget>

#include "ui/panes/code_editor.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class ReferencePane : public QWidget {
  Q_OBJECT
 public:
  explicit ReferencePane(WorkbenchController* controller, QWidget* parent = nullptr);
  CodeEditor* editor() const { return editor_; }
  QString problemText() const { return problem_->text(); }
  QWidget* changedBar() const { return changed_; }
  QPushButton* reloadButton() const { return reload_; }

 private:
  WorkbenchController* controller_;
  QLabel* title_;
  QLabel* problem_;
  QWidget* changed_;  // "changed on disk", with Reload
  QLabel* changedText_;
  QPushButton* reload_;
  CodeEditor* editor_;
};

}  // namespace crucible::ui
