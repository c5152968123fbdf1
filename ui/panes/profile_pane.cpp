#include "ui/panes/profile_pane.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <algorithm>
#include <cmath>
#include <map>

namespace crucible::ui {

namespace {
enum Column { Kernel, Line, Time, Share, Bytes, Flops, Achieved, Roof, ColumnCount };

QString countText(std::int64_t n) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  double value = static_cast<double>(n);
  int unit = 0;
  while (std::abs(value) >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  return QString::number(value, 'g', 3) + units[unit];
}

QString timeText(const TimeSpread& t) {
  return QObject::tr("%1 ms (%2–%3)")
      .arg(QString::number(t.medianMs, 'g', 3), QString::number(t.q1Ms, 'g', 3),
           QString::number(t.q3Ms, 'g', 3));
}

QTableWidgetItem* cell(const QString& text, const QString& tip = {}) {
  auto* item = new QTableWidgetItem(text);
  if (!tip.isEmpty()) item->setToolTip(tip);
  return item;
}
}  // namespace

QString rateText(double perSecond, const QString& unit) {
  // Figures arrive in giga-units per second.
  if (perSecond >= 1000) return QString::number(perSecond / 1000, 'g', 3) + " T" + unit + "/s";
  if (perSecond >= 1) return QString::number(perSecond, 'g', 3) + " G" + unit + "/s";
  return QString::number(perSecond * 1000, 'g', 3) + " M" + unit + "/s";
}

ProfilePane::ProfilePane(WorkbenchController* controller, InspectService* inspector,
                         QWidget* parent)
    : QWidget(parent), controller_(controller), inspector_(inspector) {
  run_ = new QPushButton(tr("Profile"));
  run_->setToolTip(
      tr("Time each kernel launch of the selected candidate and count its bytes "
         "and FLOPs (F7)"));
  status_ = new QLabel(tr("Select a candidate and press F7 to see where its time goes"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_ = new QTableWidget(0, ColumnCount);
  table_->setHorizontalHeaderLabels({tr("Kernel"), tr("Line"), tr("Time (median, quartiles)"),
                                     tr("Share"), tr("Bytes"), tr("FLOPs"), tr("Achieved"),
                                     tr("Of its roof")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(Kernel, QHeaderView::Stretch);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  chart_ = new QChartView;
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(260);

  auto* top = new QHBoxLayout;
  top->addWidget(run_);
  top->addWidget(status_, 1);
  auto* body = new QSplitter(Qt::Vertical);
  body->addWidget(table_);
  body->addWidget(chart_);
  body->setStretchFactor(0, 2);
  body->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(body, 1);

  connect(run_, &QPushButton::clicked, this, [this] { profile(lastBackend_); });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    if (!profile_ || row >= static_cast<int>(profile_->launches.size())) return;
    if (const auto& line = profile_->launches[row].launchLine) emit lineActivated(*line);
  });
  connect(inspector_, &InspectService::profileProgress, this,
          [this](int, const QString& message) { status_->setText(message); });
  connect(inspector_, &InspectService::profileReady, this, &ProfilePane::show);
  connect(inspector_, &InspectService::profileFailed, this, [this](int, const QString& message) {
    run_->setEnabled(true);
    status_->setText(tr("Could not profile: %1").arg(message));
  });
  connect(controller_, &WorkbenchController::currentChanged, this, [this](int key) {
    if (profile_ && key != profileKey_) {
      status_->setText(tr("This profile is of another candidate: press F7 for this one"));
    }
  });
}

void ProfilePane::profile(const BackendChoice& backend) {
  lastBackend_ = backend;
  const auto files = controller_->writeCurrentSources();
  if (!files) {
    status_->setText(tr("Open a reference and select a candidate first"));
    return;
  }
  ProfileRequest request;
  request.referencePath = files->sources.referencePath.toStdString();
  request.candidatePath = files->sources.candidatePath.toStdString();
  request.backend = backend.backend.isEmpty() ? "auto" : backend.backend.toStdString();
  request.openclDevice = backend.openclDevice.toStdString();
  run_->setEnabled(false);
  status_->setText(tr("Profiling on %1…").arg(request.backend.c_str()));
  inspector_->startProfile(request, files->dir, files->key);
}

void ProfilePane::show(int key, const KernelProfile& profile) {
  run_->setEnabled(true);
  profile_ = profile;
  profileKey_ = key;
  QString status;
  if (profile.error) {
    status = tr("The candidate did not run (%1): %2")
                 .arg(QString::fromStdString(profile.error->stage),
                      QString::fromStdString(profile.error->message));
    if (profile.error->line) status += tr(" (line %1)").arg(*profile.error->line);
  } else {
    status = tr("%n launch(es) per forward call", "", static_cast<int>(profile.launches.size()));
    if (profile.forward) status += tr(", the call %1").arg(timeText(*profile.forward));
    status += tr(" over %1 calls on %2 (%3); timed by %4")
                  .arg(profile.calls)
                  .arg(QString::fromStdString(profile.device.name),
                       QString::fromStdString(profile.device.backend),
                       QString::fromStdString(profile.timer));
    if (!profile.countNote.empty())
      status += QStringLiteral(". ") + QString::fromStdString(profile.countNote);
  }
  status_->setText(status);
  fillTable(profile);
  drawRoofline(profile);
}

void ProfilePane::fillTable(const KernelProfile& profile) {
  table_->setRowCount(static_cast<int>(profile.launches.size()));
  for (int row = 0; row < table_->rowCount(); ++row) {
    const LaunchProfile& l = profile.launches[row];
    table_->setItem(row, Kernel, cell(QString::fromStdString(l.kernel)));
    table_->setItem(row, Line,
                    cell(l.launchLine ? QString::number(*l.launchLine) : QString(),
                         tr("Double-click to see the launch in the candidate")));
    table_->setItem(row, Time, cell(l.time ? timeText(*l.time) : tr("n/a")));
    table_->setItem(row, Share,
                    cell(l.share ? QString::number(*l.share * 100, 'f', 0) + "%" : QString()));
    const QString why = l.counted ? QString() : QString::fromStdString(l.notCountedReason);
    table_->setItem(row, Bytes,
                    cell(l.bytes() ? countText(*l.bytes()) + "B" : tr("not counted"), why));
    table_->setItem(row, Flops, cell(l.flops ? countText(*l.flops) : tr("not counted"), why));
    QString achieved;
    if (l.achievedGBs) achieved = rateText(*l.achievedGBs, "B");
    if (l.achievedGflops) achieved += QStringLiteral(" · ") + rateText(*l.achievedGflops, "FLOP");
    table_->setItem(row, Achieved, cell(achieved));
    if (l.roof) {
      table_->setItem(row, Roof,
                      cell(QString::number(l.roof->fraction * 100, 'f', 0) + "% (" +
                               (l.roof->memoryBound ? tr("bandwidth") : tr("compute")) + ")",
                           tr("arithmetic intensity %1 FLOP/byte")
                               .arg(QString::number(l.roof->intensity, 'g', 3))));
    } else {
      table_->setItem(row, Roof, cell(QString()));
    }
  }
}

void ProfilePane::drawRoofline(const KernelProfile& profile) {
  auto* chart = new QChart;  // fresh each time, as the other charts
  QChart* old = chart_->chart();
  chart_->setChart(chart);
  delete old;
  plotted_ = 0;
  const double bandwidth = profile.device.bandwidthGBs, peak = profile.device.peakGflops;
  if (bandwidth <= 0 || peak <= 0) {
    chart->setTitle(tr("Roofline: the device's peaks were not measured"));
    return;
  }
  // Launches with an intensity and a rate (log axes: zero FLOPs or bytes cannot be placed).
  std::map<std::string, QScatterSeries*> byKernel;
  double xLow = peak / bandwidth, xHigh = peak / bandwidth, yLow = peak;
  for (const LaunchProfile& l : profile.launches) {
    if (!l.roof || !l.achievedGflops || l.roof->intensity <= 0 || *l.achievedGflops <= 0) continue;
    auto*& series = byKernel[l.kernel];
    if (series == nullptr) {
      series = new QScatterSeries;
      series->setName(QString::fromStdString(l.kernel));
      series->setMarkerSize(10);
    }
    series->append(l.roof->intensity, *l.achievedGflops);
    xLow = std::min(xLow, l.roof->intensity);
    xHigh = std::max(xHigh, l.roof->intensity);
    yLow = std::min(yLow, *l.achievedGflops);
    ++plotted_;
  }
  xLow /= 4;
  xHigh *= 4;
  yLow = std::min(yLow, xLow * bandwidth) / 2;
  auto* roof = new QLineSeries;
  roof->setName(tr("roof: %1, %2").arg(rateText(bandwidth, "B"), rateText(peak, "FLOP")));
  roof->append(xLow, xLow * bandwidth);
  roof->append(peak / bandwidth, peak);
  roof->append(xHigh, peak);
  chart->addSeries(roof);
  for (auto& [name, series] : byKernel) chart->addSeries(series);
  auto* x = new QLogValueAxis;
  x->setTitleText(tr("arithmetic intensity (FLOP per byte)"));
  x->setLabelFormat("%g");
  x->setRange(xLow, xHigh);
  auto* y = new QLogValueAxis;
  y->setTitleText(tr("GFLOP/s"));
  y->setLabelFormat("%g");
  y->setRange(yLow, peak * 2);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* series : chart->series()) {
    series->attachAxis(x);
    series->attachAxis(y);
  }
  chart->setTitle(tr("Roofline of %1 (peaks measured: %2)")
                      .arg(QString::fromStdString(profile.device.name),
                           QString::fromStdString(profile.device.method)));
  chart->legend()->setAlignment(Qt::AlignBottom);
}

}  // namespace crucible::ui
