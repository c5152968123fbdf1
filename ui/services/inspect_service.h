#pragma once
// A candidate's inspections off the UI thread: what its kernels compile to (core/inspect's
// inspectKernels) and where its time goes (profileCandidate). Each kind runs one at a time with
// a stop token; starting another of the same kind stops the one running, and a result for a
// request that is no longer current is dropped. The files a request reads stay alive with it.

#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <QThreadPool>
#include <memory>
#include <stop_token>

#include "core/inspect/ir_run.h"
#include "core/inspect/kernel_profile.h"
#include "core/inspect/profile_run.h"

namespace crucible::ui {

class InspectService : public QObject {
  Q_OBJECT
 public:
  explicit InspectService(QObject* parent = nullptr);
  ~InspectService() override;  // stops what runs and waits for it

  /// `files` holds the request's reference and candidate; it is kept until the run ends.
  void startIr(const inspect::IrRequest& request, std::shared_ptr<QTemporaryDir> files, int key);
  void startProfile(const ProfileRequest& request, std::shared_ptr<QTemporaryDir> files, int key);
  void stopIr();
  void stopProfile();
  bool irBusy() const { return irRun_ != 0; }
  bool profileBusy() const { return profileRun_ != 0; }

 signals:
  void irReady(int key, const crucible::inspect::KernelIrReport& report);
  void irFailed(int key, const QString& message);
  void profileProgress(int key, const QString& message);
  void profileReady(int key, const crucible::KernelProfile& profile);
  void profileFailed(int key, const QString& message);

 private:
  /// Runs `work(stop token, deliver, live)` on the pool as the current run of its kind (`current`
  /// and `stop` are that kind's slots), stopping the one before.
  template <typename Work>
  void startRun(quint64& current, std::shared_ptr<std::stop_source>& stop, Work work);

  QThreadPool pool_;
  quint64 next_ = 0;
  quint64 irRun_ = 0, profileRun_ = 0;  // the current request of each kind; 0 when idle
  std::shared_ptr<std::stop_source> irStop_, profileStop_;
};

}  // namespace crucible::ui
