#pragma once
// Generate: model, number of candidates, temperature, search mode (and rounds for refine), the
// backend the candidates are verified on, Generate and Stop, and the model's tokens and the
// verification stages as they stream. Works through a GenerationController; without one it
// explains that and stays disabled.

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QWidget>

#include "ui/panes/backend_box.h"
#include "ui/workbench/generation_controller.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class GenerationPane : public QWidget {
  Q_OBJECT
 public:
  GenerationPane(WorkbenchController* controller, DeviceService* devices,
                 GenerationController* generator, QWidget* parent = nullptr);

  /// Lists the models again (endpoints come from Settings).
  void refreshModels();
  /// Starts generating on the open reference with what the pane shows.
  void generate();
  /// Adds an embedded model (a Hugging Face folder or a .gguf file) to the picker's recent models
  /// and selects it; the Add button's menu asks for one with a file dialog.
  void addModel(const QString& path);
  /// Stops a generation run, if one is going.
  void stop();

  QComboBox* modelBox() const { return model_; }
  QToolButton* addModelButton() const { return addModel_; }
  QSpinBox* countBox() const { return count_; }
  QComboBox* modeBox() const { return mode_; }
  QSpinBox* roundsBox() const { return rounds_; }
  BackendBox* backendBox() const { return backend_; }
  QPushButton* generateButton() const { return generate_; }
  QPushButton* stopButton() const { return stop_; }
  QString statusText() const { return status_->text(); }
  QString liveText() const { return live_->toPlainText(); }

 private:
  void modelChosen();
  void setRunning(bool running);
  void appendLive(const QString& text);

  WorkbenchController* controller_;
  GenerationController* generator_;  // may be null
  QVector<ModelOption> models_;
  QComboBox* model_;
  QToolButton* addModel_;
  QSpinBox* count_;
  QDoubleSpinBox* temperature_;
  QComboBox* mode_;
  QSpinBox* rounds_;
  BackendBox* backend_;
  QPushButton* generate_;
  QPushButton* stop_;
  QLabel* status_;
  QPlainTextEdit* live_;
};

}  // namespace crucible::ui
