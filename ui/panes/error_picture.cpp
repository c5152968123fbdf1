#include "ui/panes/error_picture.h"

#include <QImage>
#include <QPixmap>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QValueAxis>

namespace crucible::ui {

using nlohmann::json;

FailingOutput firstFailingOutput(const Evaluation& evaluation) {
  const json trials = evaluation.correctness.value("trials", json::array());
  for (std::size_t k = 0; k < trials.size(); ++k) {
    const json& trial = trials[k];
    if (!trial.is_object() || trial.value("ok", true)) continue;
    for (const json& tensor : trial.value("tensors", json::array())) {
      if (!tensor.value("ok", true)) return {static_cast<int>(k), tensor};
    }
    // The structure differs: no tensor to picture, but the trial still failed.
    return {static_cast<int>(k), json{{"structure_note", trial.value("structure_note", "")}}};
  }
  return {};
}

ErrorPicture::ErrorPicture(QWidget* parent) : QWidget(parent) {
  stats_ = new QLabel;
  stats_->setWordWrap(true);
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  histogram_ = new QChartView;
  histogram_->setMinimumHeight(280);  // a readable row per decade
  histogram_->setRenderHint(QPainter::Antialiasing);
  map_ = new QLabel;
  map_->setToolTip(
      tr("Where the output mismatches: rows x last dimension, red = all elements "
         "of the cell mismatch"));
  map_->setAlignment(Qt::AlignCenter);
  // One above the other: the pane is narrow and scrolls.
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(stats_);
  layout->addWidget(histogram_);
  layout->addWidget(map_);
  hide();
}

void ErrorPicture::setEvaluation(const Evaluation* evaluation) {
  const FailingOutput failing = evaluation ? firstFailingOutput(*evaluation) : FailingOutput{};
  auto* chart = new QChart;  // fresh, as in RewardChart
  chart->legend()->hide();
  chart->setMargins(QMargins(2, 2, 2, 2));
  QChart* old = histogram_->chart();
  histogram_->setChart(chart);
  delete old;
  map_->setPixmap({});
  if (failing.trial < 0) {
    hide();
    return;
  }
  const json& t = failing.tensor;
  if (t.contains("structure_note")) {
    stats_->setText(tr("<b>Trial %1 failed:</b> %2")
                        .arg(failing.trial)
                        .arg(QString::fromStdString(t.value("structure_note", ""))));
    histogram_->hide();
    show();
    return;
  }
  auto number = [&](const char* key) {
    return QString::fromStdString(t.value(key, json(0)).dump());
  };
  stats_->setText(
      tr("<b>Trial %1, output %2</b> (%3, got %4): %5 of %6 elements mismatch; first at flat "
         "index %7; max abs error %8, max rel error %9, mean abs error %10; %11 non-finite, %12 "
         "still poisoned")
          .arg(failing.trial)
          .arg(t.value("index", 0))
          .arg(QString::fromStdString(t.value("expected", "")),
               QString::fromStdString(t.value("actual", "")), number("mismatches"),
               number("elements"), number("first_mismatch"), number("max_abs_error"),
               number("max_rel_error"), number("mean_abs_error"), number("non_finite"))
          .arg(number("poisoned")));
  histogram_->setVisible(t.contains("error_histogram"));
  if (t.contains("error_histogram")) {
    const json& h = t["error_histogram"];
    auto* set = new QBarSet(tr("elements"));
    QStringList labels;
    const json counts = h.value("counts", json::array());
    const json edges = h.value("log10_edges", json::array());
    for (std::size_t i = 0; i < counts.size(); ++i) {
      set->append(counts[i].get<double>());
      if (i == 0)
        labels << "<1e" + QString::number(edges.empty() ? -8 : edges[0].get<int>());
      else if (i + 1 == counts.size())
        labels << ">=1e" + QString::number(edges.empty() ? 2 : edges.back().get<int>());
      else
        labels << "1e" + QString::number(edges.empty() ? 0 : edges[i - 1].get<int>());
    }
    set->setColor(QColor(0xe3, 0x74, 0x00));
    // Horizontal bars: one row per decade, smallest errors at the bottom, labels readable in a
    // narrow pane.
    auto* series = new QHorizontalBarSeries;
    series->append(set);
    chart->addSeries(series);
    auto* decades = new QBarCategoryAxis;
    decades->append(labels);
    auto* elements = new QValueAxis;
    elements->setLabelFormat("%d");
    elements->setTickCount(3);
    double most = 1;
    for (const auto& c : counts) most = std::max(most, c.get<double>());
    elements->setRange(0, most);
    chart->addAxis(decades, Qt::AlignLeft);
    chart->addAxis(elements, Qt::AlignBottom);
    series->attachAxis(decades);
    series->attachAxis(elements);
    chart->setTitle(tr("|actual − expected| per decade"));
  }
  if (t.contains("mismatch_map")) {
    const json& m = t["mismatch_map"];
    const int rows = m.value("map_rows", 0), cols = m.value("map_cols", 0);
    const json fraction = m.value("fraction", json::array());
    if (rows > 0 && cols > 0 && fraction.size() == static_cast<std::size_t>(rows * cols)) {
      QImage image(cols, rows, QImage::Format_RGB32);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
          const double f = fraction[r * cols + c].get<double>();
          const int fade = static_cast<int>(255 * (1 - f));
          image.setPixel(c, r, f > 0 ? qRgb(255, fade, fade) : qRgb(235, 245, 235));
        }
      }
      const int side = 160;
      map_->setPixmap(QPixmap::fromImage(
          image.scaled(side, side, Qt::KeepAspectRatio, Qt::FastTransformation)));
    }
  }
  show();
}

}  // namespace crucible::ui
