#pragma once
// Verification off the UI thread: crucible::verify on a worker thread with a std::stop_token.
// One verification at a time; starting another stops the one running, and a result that arrives
// for a request that is no longer current (stopped or replaced) is dropped.

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <memory>
#include <stop_token>

#include "core/verify/verifier.h"

namespace crucible::ui {

class VerifyService : public QObject {
  Q_OBJECT
 public:
  explicit VerifyService(QObject* parent = nullptr);
  ~VerifyService() override;  // stops what runs and waits for it

  /// Starts verifying; `candidateKey` comes back with every signal. Returns the request's token.
  quint64 start(const VerifyRequest& request, int candidateKey);
  /// Stops the running verification; its result is dropped and `stopped` is emitted.
  void stop();
  bool busy() const { return running_ != 0; }
  int runningCandidate() const { return runningKey_; }

  /// Checks a reference file with Python's parser (no user code runs), off the UI thread.
  void checkReference(const QString& path);

 signals:
  void progress(int candidateKey, const QString& stage, const QString& message);
  void finished(int candidateKey, const crucible::VerifyOutcome& outcome);
  void failed(int candidateKey, const QString& message);
  void stopped(int candidateKey);
  void referenceChecked(const QString& path, const QString& problem);  // problem "" when fine

 private:
  QThreadPool pool_;
  quint64 nextToken_ = 0;
  quint64 running_ = 0;  // token of the current request; 0 when idle
  int runningKey_ = -1;
  std::shared_ptr<std::stop_source> stop_;
  quint64 referenceToken_ = 0;
  std::shared_ptr<ReferenceCache> referenceCache_;  // kept for the window's life
  std::shared_ptr<BaselineKeeper> baselineKeeper_;  // the last reference's timer, while idle
};

}  // namespace crucible::ui
