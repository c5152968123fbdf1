#pragma once
// The seam for generation (core/generate, issue 5): the GenerationPane talks only to this
// interface. An implementation wraps core's generation pipeline (the built-in synthesizer, the
// embedded model, OpenAI-compatible endpoints) on a worker thread, streams tokens, and hands
// each candidate to the workbench, which verifies it like any other. Until one is registered
// the pane says that generation is not built in.

#include <QObject>
#include <QString>
#include <QStringList>

namespace crucible::ui {

struct GenerationRequest {
  QString referencePath;
  QString referenceSource;
  QString model;  // one of models()
  int candidates = 4;
  double temperature = 0.7;
  QString searchMode = "best-of-n";  // best-of-n | refine
  QString backend;                   // where the candidates are verified
};

class GenerationController : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  ~GenerationController() override = default;

  /// The models one can pick: "built-in synthesizer", embedded models, endpoints' models.
  virtual QStringList models() const = 0;
  virtual QStringList searchModes() const = 0;
  /// Starts generating; stop() cancels. Signals arrive on the UI thread.
  virtual void start(const GenerationRequest& request) = 0;
  virtual void stop() = 0;

 signals:
  void tokens(const QString& text);  // streamed model output, for the live view
  /// One candidate: code or a raw response, its origin (a generator) and model.
  void candidateReady(const QString& text, const QString& origin, const QString& model);
  void progress(const QString& message);
  void finished();
  void failed(const QString& message);
};

}  // namespace crucible::ui
