#include "ui/services/inspect_service.h"

#include "ui/services/post.h"

namespace crucible::ui {

InspectService::InspectService(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(2);  // an IR listing and a profile side by side
}

InspectService::~InspectService() {
  for (const auto& stop : {irStop_, profileStop_}) {
    if (stop) stop->request_stop();
  }
  pool_.waitForDone();
}

template <typename Work>
void InspectService::startRun(quint64& current, std::shared_ptr<std::stop_source>& stop,
                              Work work) {
  if (stop) stop->request_stop();
  const quint64 run = ++next_;
  current = run;
  auto source = std::make_shared<std::stop_source>();
  stop = source;
  quint64* slot = &current;
  // `deliver` hands a result back on the UI thread, unless the run was stopped or replaced.
  pool_.start([this, work = std::move(work), run, slot, source]() mutable {
    const auto deliver = [this, run, slot](auto&& emitter) {
      postTo(this, [run, slot, emitter = std::move(emitter)] {
        if (*slot != run) return;
        *slot = 0;
        emitter();
      });
    };
    const auto live = [this, run, slot](auto&& emitter) {
      postTo(this, [run, slot, emitter = std::move(emitter)] {
        if (*slot == run) emitter();
      });
    };
    work(source->get_token(), deliver, live);
  });
}

void InspectService::startIr(const inspect::IrRequest& request,
                             std::shared_ptr<QTemporaryDir> files, int key) {
  // `files` rides along with the run: the stages read them until it ends.
  startRun(irRun_, irStop_, [this, request, files, key](std::stop_token stop, auto deliver, auto) {
    try {
      auto report = inspect::inspectKernels(request, stop);
      deliver([this, key, report = std::move(report)] { emit irReady(key, report); });
    } catch (const std::exception& error) {
      deliver(
          [this, key, message = QString::fromUtf8(error.what())] { emit irFailed(key, message); });
    }
  });
}

void InspectService::startProfile(const ProfileRequest& request,
                                  std::shared_ptr<QTemporaryDir> files, int key) {
  startRun(
      profileRun_, profileStop_,
      [this, request, files, key](std::stop_token stop, auto deliver, auto live) {
        try {
          auto profile = profileCandidate(
              request,
              [this, key, live](const ProfileProgress& p) {
                live([this, key, message = QString::fromStdString(p.message)] {
                  emit profileProgress(key, message);
                });
              },
              stop);
          deliver([this, key, profile = std::move(profile)] { emit profileReady(key, profile); });
        } catch (const std::exception& error) {
          deliver([this, key, message = QString::fromUtf8(error.what())] {
            emit profileFailed(key, message);
          });
        }
      });
}

void InspectService::stopIr() {
  if (irStop_) irStop_->request_stop();
  irRun_ = 0;
}

void InspectService::stopProfile() {
  if (profileStop_) profileStop_->request_stop();
  profileRun_ = 0;
}

}  // namespace crucible::ui
