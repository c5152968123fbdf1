#pragma once
// The backends this machine offers, detected off the UI thread (OpenCL platforms can take a
// moment to initialise): each a choice for the backend picker.

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QVector>

namespace crucible::ui {

struct BackendChoice {
  QString label;         // "opencl · cpu-haswell-..."
  QString backend;       // auto | interpret | opencl | cuda
  QString openclDevice;  // for opencl: the device name, passed as the device to run on
  bool available = true;
  QString note;  // why not, when not
};

class DeviceService : public QObject {
  Q_OBJECT
 public:
  explicit DeviceService(QObject* parent = nullptr);
  ~DeviceService() override;

  void detect();
  /// auto and interpret until detection has finished, then every backend found.
  const QVector<BackendChoice>& choices() const { return choices_; }

 signals:
  void choicesChanged();

 private:
  QThreadPool pool_;
  QVector<BackendChoice> choices_;
};

}  // namespace crucible::ui
