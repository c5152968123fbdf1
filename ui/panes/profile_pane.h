#pragma once
// Where the selected candidate's time goes: per kernel launch of one forward call, its time
// (median and quartiles), share of the call, bytes and FLOPs, the bandwidth and FLOP rate it
// achieves and how far it is from the device's measured roof; and the roofline plot with every
// launch on it, so a user sees which kernel to work on and how much there is to win.

#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QWidget>
#include <QtCharts/QChartView>
#include <optional>

#include "core/inspect/kernel_profile.h"
#include "ui/services/device_service.h"
#include "ui/services/inspect_service.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class ProfilePane : public QWidget {
  Q_OBJECT
 public:
  ProfilePane(WorkbenchController* controller, InspectService* inspector,
              QWidget* parent = nullptr);

  /// Profiles the current candidate on `backend` (replacing a profile running).
  void profile(const BackendChoice& backend);

  QString statusText() const { return status_->text(); }
  QTableWidget* table() const { return table_; }
  QChartView* roofline() const { return chart_; }
  const std::optional<KernelProfile>& shown() const { return profile_; }
  /// Launches placed on the roofline (those with counted bytes, FLOPs and a time).
  int plottedLaunches() const { return plotted_; }

 signals:
  /// A launch's row was activated: the candidate's line that launched it.
  void lineActivated(int line);

 private:
  void show(int key, const KernelProfile& profile);
  void fillTable(const KernelProfile& profile);
  void drawRoofline(const KernelProfile& profile);

  WorkbenchController* controller_;
  InspectService* inspector_;
  QPushButton* run_;
  QLabel* status_;
  QTableWidget* table_;
  QChartView* chart_;
  std::optional<KernelProfile> profile_;
  int profileKey_ = -1;
  int plotted_ = 0;
  BackendChoice lastBackend_;
};

/// "12.3 GB/s", "1.2 TB/s": a rate with a unit its size calls for.
QString rateText(double perSecond, const QString& unit);

}  // namespace crucible::ui
