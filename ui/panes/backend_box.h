#pragma once
// The backend picker shared by Verify and Generate: the detected OpenCL devices and GPUs, with
// the ones this machine cannot run greyed out and saying why.

#include <QComboBox>

#include "ui/services/device_service.h"

namespace crucible::ui {

class BackendBox : public QComboBox {
  Q_OBJECT
 public:
  /// `defaultBackend` is chosen until the user picks another.
  BackendBox(DeviceService* devices, QString defaultBackend, QWidget* parent = nullptr);

  BackendChoice choice() const;
  /// Selects the first available choice for `backend` (auto, interpret, opencl, cuda).
  void selectBackend(const QString& backend);

 private:
  void fill();

  DeviceService* devices_;
  QString defaultBackend_;
};

}  // namespace crucible::ui
