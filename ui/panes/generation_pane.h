#pragma once
// Generate: model, number of candidates, temperature, search mode, Generate and Stop, and the
// model's tokens as they stream. Works through a GenerationController; without one (generation
// has not landed in this build) it explains that and stays disabled.

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QWidget>

#include "ui/generate/generation_controller.h"
#include "ui/model/workbench_controller.h"

namespace crucible::ui {

class GenerationPane : public QWidget {
  Q_OBJECT
 public:
  GenerationPane(WorkbenchController* controller, GenerationController* generator,
                 QWidget* parent = nullptr);
  /// Backend the generated candidates are verified on.
  void setBackendSource(std::function<BackendChoice()> backend) { backend_ = std::move(backend); }

 private:
  WorkbenchController* controller_;
  GenerationController* generator_;  // may be null
  std::function<BackendChoice()> backend_;
  QComboBox* model_;
  QSpinBox* count_;
  QDoubleSpinBox* temperature_;
  QComboBox* mode_;
  QPushButton* generate_;
  QPushButton* stop_;
  QLabel* status_;
  QPlainTextEdit* live_;
};

}  // namespace crucible::ui
