#include "ui/services/device_service.h"

#include "core/device/devices.h"
#include "core/verify/verifier.h"
#include "ui/services/post.h"

namespace crucible::ui {

namespace {
// `resolved`: what auto picks on this machine, once detection knows.
QVector<BackendChoice> baseChoices(const QString& resolved = {}) {
  const QString autoLabel =
      resolved.isEmpty() ? QStringLiteral("auto (cuda with a GPU, else opencl, else interpret)")
                         : QStringLiteral("auto (%1 here)").arg(resolved);
  return {{autoLabel, "auto", "", true, ""},
          {"interpret (Triton's interpreter, CPU)", "interpret", "", true, ""}};
}
}  // namespace

DeviceService::DeviceService(QObject* parent) : QObject(parent), choices_(baseChoices()) {
  pool_.setMaxThreadCount(1);
}

DeviceService::~DeviceService() {
  pool_.waitForDone();
}

void DeviceService::detect() {
  pool_.start([this] {
    const auto opencl = detectOpenClDevices();
    const auto cuda = detectCudaDevices();
    QString resolved;
    try {
      resolved = QString::fromStdString(resolveBackend("auto"));
    } catch (const std::exception&) {
      // auto is then explained by the generic label, and verifying says why it fails
    }
    QVector<BackendChoice> choices = baseChoices(resolved);
    for (const auto& d : opencl) {
      const QString name = QString::fromStdString(d.name);
      choices.push_back({"opencl · " + name, "opencl", name, true, ""});
    }
    if (opencl.empty()) {
      choices.push_back({"opencl (no OpenCL device found)", "opencl", "", false,
                         "no OpenCL platform: install an ICD such as pocl-opencl-icd"});
    }
    for (const auto& d : cuda) {
      choices.push_back({"cuda · " + QString::fromStdString(d.name), "cuda", "", true, ""});
    }
    if (cuda.empty()) {
      choices.push_back({"cuda (no NVIDIA GPU)", "cuda", "", false, "no NVIDIA GPU is visible"});
    }
    postTo(this, [this, choices] {
      choices_ = choices;
      emit choicesChanged();
    });
  });
}

}  // namespace crucible::ui
