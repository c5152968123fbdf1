#pragma once
// Generation on core/generate: makeGenerator and runGeneration on a worker thread with a stop
// token. The pipeline verifies each candidate as it arrives (nothing is verified twice); storing
// is left to the workbench (databasePath unset), which keeps the session as the UI shows it.
// A run that was stopped or replaced reports nothing more. The embedded model's engine
// (crucible-model) is kept for the controller's lifetime: the model stays loaded between
// generations, a crashed engine is started again by the next run, and it quits with the controller.

#include <QThreadPool>
#include <memory>
#include <stop_token>

#include "core/generate/model_process.h"
#include "ui/workbench/generation_controller.h"

namespace crucible::ui {

class PipelineGenerationController : public GenerationController {
  Q_OBJECT
 public:
  explicit PipelineGenerationController(QObject* parent = nullptr);
  ~PipelineGenerationController() override;  // stops what runs and waits for it

  /// The synthesizer, the endpoints from Settings, and the embedded models: the loaded one first,
  /// then the recently used ones (ui/settings/settings' recentModels; unavailable when the file is
  /// gone or this build has no crucible-model).
  QVector<ModelOption> models() const override;
  QStringList searchModes() const override;
  void start(const GenerationRequest& request) override;
  void stop() override;
  bool running() const override { return current_ != 0; }

 private:
  QThreadPool pool_;
  quint64 nextRun_ = 0;
  quint64 current_ = 0;  // the run whose reports are shown; 0 when none
  std::shared_ptr<std::stop_source> stop_;
  std::shared_ptr<generate::EmbeddedEngine> engine_;
};

}  // namespace crucible::ui
