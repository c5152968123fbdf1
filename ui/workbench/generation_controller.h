#pragma once
// The seam for generation: the GenerationPane talks only to this interface. The implementation
// (pipeline_generation_controller.h) runs core/generate's pipeline on a worker thread: the
// pipeline writes and verifies each candidate; the workbench shows and stores what it reports.

#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>
#include <optional>

#include "core/verify/evaluation.h"
#include "core/verify/verifier.h"

namespace crucible::ui {

/// One entry of the model picker.
struct ModelOption {
  QString label;  // what the picker shows
  QString spec;   // what makeGenerator takes: "synth", an endpoint URL, a weights path
  bool available = true;
  bool refines = true;  // offers the refine search (the synthesizer does not)
  QString note;         // why not, when not available
};

struct GenerationRequest {
  QString referencePath;  // the reference's file name is kept: candidates may import it
  QString referenceSource;
  QString referenceName;
  QString model;  // a ModelOption's spec
  int candidates = 4;
  double temperature = 0.7;
  QString searchMode = "best-of-n";  // best-of-n | refine
  int rounds = 3;                    // refine only
  VerifyRequest verify;              // how each candidate is verified (backend, trials, ...)
};

/// A candidate as the generation run reports it; ids are the run's own (1, 2, ...).
struct GeneratedEntry {
  int id = 0;
  std::optional<int> parentId;  // refine: the candidate it improves
  int round = 1;
  QString origin, model, prompt, rawResponse, plan, code, label, error;
};

class GenerationController : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  ~GenerationController() override = default;

  virtual QVector<ModelOption> models() const = 0;
  virtual QStringList searchModes() const = 0;
  /// Starts generating (stopping a run that is going); stop() cancels and drops what the
  /// stopped run still reports. Signals arrive on the UI thread.
  virtual void start(const GenerationRequest& request) = 0;
  virtual void stop() = 0;
  virtual bool running() const = 0;

 signals:
  void started(const crucible::ui::GenerationRequest& request);
  void tokens(const QString& text);  // streamed model output, for the live view
  void progress(const QString& message);
  void candidateArrived(const crucible::ui::GeneratedEntry& entry);
  void candidateVerified(int id, const crucible::Evaluation& evaluation);
  void finished(const QString& summary);  // for the status line; also after stop()
  void failed(const QString& message);
};

}  // namespace crucible::ui
