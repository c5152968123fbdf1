#pragma once
// What actually runs for the selected candidate: for each kernel it launches, the text its
// backend compiles it to (OpenCL C on opencl; TTIR, TTGIR, LLVM IR and PTX on cuda), beside
// the candidate's Python. The two are linked line by line: the Python line of each IR line is
// in the IR's margin, and placing the cursor on either side highlights the lines of the other.

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QTabBar>
#include <QWidget>
#include <optional>

#include "core/inspect/kernel_ir.h"
#include "ui/panes/code_editor.h"
#include "ui/services/device_service.h"
#include "ui/services/inspect_service.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class IrPane : public QWidget {
  Q_OBJECT
 public:
  IrPane(WorkbenchController* controller, InspectService* inspector, QWidget* parent = nullptr);

  /// Lists what the current candidate compiles to on `backend` (replacing a listing running).
  void inspect(const BackendChoice& backend);

  QString statusText() const { return status_->text(); }
  QComboBox* kernelBox() const { return kernels_; }
  QTabBar* levelTabs() const { return levels_; }
  CodeEditor* irEditor() const { return ir_; }
  CodeEditor* pythonEditor() const { return python_; }
  const std::optional<inspect::KernelIrReport>& report() const { return report_; }
  /// The IR lines (0-based) the Python line (1-based) maps to in the level shown.
  QVector<int> irLinesOf(int pythonLine) const;
  /// What the IR editor's margin says beside a 0-based line ("py 12", or "").
  QString marginLabel(int irLine) const { return marginLabels_.value(irLine); }

 private:
  void showReport(int key, const inspect::KernelIrReport& report);
  void showLevel();
  void irCursorMoved(int line);
  void pythonCursorMoved(int line);
  const inspect::IrLevel* currentLevel() const;

  WorkbenchController* controller_;
  InspectService* inspector_;
  QPushButton* refresh_;
  QLabel* status_;
  QComboBox* kernels_;
  QTabBar* levels_;
  CodeEditor* python_;
  CodeEditor* ir_;
  std::optional<inspect::KernelIrReport> report_;
  QVector<QString> marginLabels_;
  int reportKey_ = -1;  // the candidate the report is about
  BackendChoice lastBackend_;
};

}  // namespace crucible::ui
