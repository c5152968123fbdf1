#include "ui/panes/error_picture.h"

#include <QImage>
#include <QPainter>
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
  scale_ = new QLabel;
  scale_->setAlignment(Qt::AlignCenter);
  scaleText_ = new QLabel;
  scaleText_->setWordWrap(true);
  // One above the other: the pane is narrow and scrolls.
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(stats_);
  layout->addWidget(histogram_);
  layout->addWidget(map_);
  layout->addWidget(scale_);
  layout->addWidget(scaleText_);
  hide();
}

QPixmap ErrorPicture::mismatchScale() const {
  // The map's colours from none to all elements mismatching, with the shares at the ends.
  const int width = 160, bar = 10, text = fontMetrics().height();
  QPixmap pixmap(width + 80, bar + text + 2);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setFont(font());
  const int left = 40;
  painter.fillRect(QRect(left - 12, 0, 10, bar), QColor(235, 245, 235));
  for (int x = 0; x < width; ++x) {
    const double f = (x + 1) / static_cast<double>(width);
    const int fade = static_cast<int>(255 * (1 - f));
    painter.fillRect(QRect(left + x, 0, 1, bar), QColor(255, fade, fade));
  }
  painter.setPen(palette().color(QPalette::WindowText));
  painter.drawText(QRect(0, bar + 1, left + 20, text), Qt::AlignRight, tr("none"));
  painter.drawText(QRect(left + width / 2 - 20, bar + 1, 40, text), Qt::AlignCenter, "50%");
  painter.drawText(QRect(left + width - 30, bar + 1, 70, text), Qt::AlignLeft, "100%");
  return pixmap;
}

bool ErrorPicture::labelsTruncated() const {
  const QChart* chart = histogram_->chart();
  if (chart == nullptr) return false;
  for (const QAbstractAxis* axis : chart->axes()) {
    if (axis->labelsTruncated()) return true;
  }
  return false;
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
  // Counts in full, errors with the three digits a reader compares (not sixteen).
  auto number = [&](const char* key) {
    const json value = t.value(key, json(0));
    if (value.is_number_float()) return QString::number(value.get<double>(), 'g', 3);
    return QString::fromStdString(value.dump());
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
    decades->setTruncateLabels(false);  // "1e-3" in full, never "..."
    decades->setTitleText(tr("|error|"));
    auto* elements = new QValueAxis;
    elements->setLabelFormat("%d");
    elements->setTickCount(3);
    double most = 1;
    for (const auto& c : counts) most = std::max(most, c.get<double>());
    elements->setRange(0, most);
    elements->setTitleText(tr("elements"));
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
      scale_->setPixmap(mismatchScale());
      const qint64 tensorRows = m.value("rows", 0), tensorCols = m.value("cols", 0);
      scaleText_->setText(
          tr("Where it mismatches: %1 rows (top to bottom) x %2 along the last dimension (left "
             "to right), in %3 x %4 cells of about %5 x %6 elements; a cell's colour is the "
             "share of its elements that mismatch, green none.")
              .arg(tensorRows)
              .arg(tensorCols)
              .arg(rows)
              .arg(cols)
              .arg(std::max<qint64>(1, tensorRows / rows))
              .arg(std::max<qint64>(1, tensorCols / cols)));
    }
  }
  scale_->setVisible(hasMap());
  scaleText_->setVisible(hasMap());
  show();
}

}  // namespace crucible::ui
