#include "ui/services/device_service.h"

#include "core/device/devices.h"
#include "ui/services/post.h"

namespace crucible::ui {

namespace {
QVector<BackendChoice> baseChoices() {
  return {{"auto (cuda with a GPU, else interpret)", "auto", "", true, ""},
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
    QVector<BackendChoice> choices = baseChoices();
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
