#pragma once
// What the workbench is doing now, in one line, with how long it has been at it: the run bar
// shows it. It follows the controller's verifications and a generation run (counted in
// candidates, not in a verification's stages), and forgets a finished run's outcome when the
// user moves to another reference, candidate or session, so an old "Done" never describes what
// is on screen now.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include "ui/workbench/generation_controller.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class RunStatus : public QObject {
  Q_OBJECT
 public:
  enum class Activity { Idle, Verifying, Generating, Finished, Failed };

  explicit RunStatus(WorkbenchController* controller, QObject* parent = nullptr);
  /// Follows a generation run as well (nullptr: this build generates nothing).
  void watchGeneration(GenerationController* generator);

  Activity activity() const { return activity_; }
  /// The line the run bar shows, with the elapsed time of a running activity.
  QString text() const;
  /// The run bar's progress: stages of one verification, or candidates of a generation run.
  int progressValue() const { return value_; }
  int progressMaximum() const { return maximum_; }
  QString progressFormat() const { return format_; }

 signals:
  void changed();

 private:
  void beginVerification();
  void verificationProgress(const QString& stage, const QString& message);
  void candidateChanged(int row);
  void beginGeneration(const GenerationRequest& request);
  void generationProgress(const QString& message);
  void generationCandidate();
  void finish(Activity outcome, const QString& message);
  void forgetOutcome();
  void set(Activity activity, const QString& headline, const QString& detail);
  QString candidateName(int key) const;

  WorkbenchController* controller_;
  GenerationController* generator_ = nullptr;
  Activity activity_ = Activity::Idle;
  QString headline_;  // "Verifying #3 paste on opencl"
  QString detail_;    // the latest stage's message
  int value_ = 0, maximum_ = 0;
  QString format_;
  int verifyingKey_ = -1;
  bool generationOutcome_ = false;  // the activity (running or ended) is a generation run
  int generatedExpected_ = 0, generatedArrived_ = 0, generatedVerified_ = 0;
  QElapsedTimer clock_;  // since the running activity began; its length once it ended
  qint64 finishedAfterMs_ = -1;
  QTimer tick_;  // the elapsed time, once a second, while something runs
};

/// "850 ms", "12 s", "3 min 05 s": how long something took or has been running.
QString elapsedText(qint64 milliseconds);

}  // namespace crucible::ui
