#include "ui/plot/bench_plots.h"

#include <QFont>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QPainterPath>
#include <QString>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace crucible::plot {

namespace {

constexpr int kWidth = 900, kHeight = 520;
constexpr int kLeft = 70, kRight = 30, kTop = 50, kBottom = 70;

/// Text needs a QGuiApplication; a command-line run has none, so one is made on the offscreen
/// platform the first time a plot is drawn (on the calling thread, which must be the main one).
void ensureApplication() {
  if (QGuiApplication::instance()) return;
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // Qt's start-up notes (no XDG_RUNTIME_DIR on a server, ...) are not the user's business here.
  qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
    if (type == QtCriticalMsg || type == QtFatalMsg) fprintf(stderr, "%s\n", qPrintable(message));
  });
  static int argc = 1;
  static char name[] = "crucible";
  static char* argv[] = {name, nullptr};
  static std::unique_ptr<QGuiApplication> app = std::make_unique<QGuiApplication>(argc, argv);
}

struct Canvas {
  QImage image{kWidth, kHeight, QImage::Format_RGB32};
  QPainter painter;
  QRectF plot{kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom};

  explicit Canvas(const std::string& title) {
    image.fill(Qt::white);
    painter.begin(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    QFont font = painter.font();
    font.setPointSize(13);
    font.setBold(true);
    painter.setFont(font);
    painter.drawText(QRectF(0, 8, kWidth, 30), Qt::AlignCenter, QString::fromStdString(title));
    font.setPointSize(9);
    font.setBold(false);
    painter.setFont(font);
  }

  void axes(const QString& xLabel, const QString& yLabel) {
    painter.setPen(QPen(Qt::black, 1));
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());
    painter.drawLine(plot.bottomLeft(), plot.topLeft());
    painter.drawText(QRectF(plot.left(), kHeight - 28, plot.width(), 20), Qt::AlignCenter, xLabel);
    painter.save();
    painter.translate(16, plot.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-plot.height() / 2, -10, plot.height(), 20), Qt::AlignCenter, yLabel);
    painter.restore();
  }

  void yTicks(double maxValue, bool asPercent) {
    for (int i = 0; i <= 5; ++i) {
      const double v = maxValue * i / 5;
      const double y = plot.bottom() - plot.height() * i / 5;
      painter.setPen(QPen(QColor(225, 225, 225), 1));
      painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
      painter.setPen(Qt::black);
      const QString text =
          asPercent ? QString::number(100 * v, 'g', 3) + "%" : QString::number(v, 'g', 3);
      painter.drawText(QRectF(0, y - 8, kLeft - 6, 16), Qt::AlignRight | Qt::AlignVCenter, text);
    }
  }

  std::string save(const std::string& path) {
    painter.end();
    if (!image.save(QString::fromStdString(path), "PNG")) return "cannot write " + path;
    return {};
  }
};

QString speedupLabel(double s) {
  return s < 1 ? QString::number(s, 'g', 2) + "x" : QString::number(s, 'g', 3) + "x";
}

}  // namespace

std::string writeSpeedupHistogram(const std::vector<bench::HistogramBin>& bins,
                                  const std::string& title, const std::string& path) {
  ensureApplication();
  Canvas c(title);
  int highest = 1;
  for (const auto& b : bins) highest = std::max(highest, b.count);
  highest = (highest + 4) / 5 * 5;  // five whole-number ticks
  c.yTicks(highest, false);
  c.axes("speedup over eager PyTorch (log scale; the end bars hold everything beyond)",
         "correct tasks");
  const double barWidth = c.plot.width() / std::max<std::size_t>(1, bins.size());
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const double h = c.plot.height() * bins[i].count / highest;
    const QRectF bar(c.plot.left() + barWidth * i + 2, c.plot.bottom() - h, barWidth - 4, h);
    c.painter.fillRect(bar, bins[i].low >= 1 ? QColor(46, 139, 87) : QColor(205, 92, 92));
    c.painter.setPen(Qt::black);
    if (bins[i].count > 0) {
      c.painter.drawText(QRectF(bar.left(), bar.top() - 16, bar.width(), 14), Qt::AlignCenter,
                         QString::number(bins[i].count));
    }
    if (i % 2 == 0) {
      c.painter.drawText(QRectF(c.plot.left() + barWidth * i - 30, c.plot.bottom() + 4, 60, 16),
                         Qt::AlignCenter, speedupLabel(bins[i].low));
    }
  }
  // The 1x line: the bin edge where speedups start.
  for (std::size_t i = 0; i < bins.size(); ++i) {
    if (std::abs(bins[i].low - 1.0) < 1e-9) {
      const double x = c.plot.left() + barWidth * i;
      c.painter.setPen(QPen(Qt::black, 1.5, Qt::DashLine));
      c.painter.drawLine(QPointF(x, c.plot.top()), QPointF(x, c.plot.bottom()));
    }
  }
  return c.save(path);
}

std::string writeFastPCurve(const std::vector<Curve>& curves, const std::string& title,
                            const std::string& path) {
  ensureApplication();
  Canvas c(title);
  double maxP = 0;
  for (const auto& curve : curves) {
    for (const auto& [p, _] : curve.points) maxP = std::max(maxP, p);
  }
  if (maxP <= 0) maxP = 1;
  c.yTicks(1.0, true);
  c.axes("speedup threshold p", "fast_p (fraction of all tasks)");
  for (int i = 0; i <= 8; ++i) {
    const double p = maxP * i / 8;
    const double x = c.plot.left() + c.plot.width() * i / 8;
    c.painter.drawText(QRectF(x - 30, c.plot.bottom() + 4, 60, 16), Qt::AlignCenter,
                       QString::number(p, 'g', 3));
  }
  const QColor colours[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44)};
  for (std::size_t n = 0; n < curves.size(); ++n) {
    QPainterPath line;
    for (std::size_t i = 0; i < curves[n].points.size(); ++i) {
      const auto [p, f] = curves[n].points[i];
      const QPointF at(c.plot.left() + c.plot.width() * p / maxP,
                       c.plot.bottom() - c.plot.height() * f);
      if (i == 0) {
        line.moveTo(at);
      } else {
        line.lineTo(at);
      }
    }
    const QColor colour = colours[n % 3];
    c.painter.setPen(QPen(colour, 2.5));
    c.painter.drawPath(line);
    const double y = c.plot.top() + 10 + 18 * n;
    c.painter.drawLine(QPointF(c.plot.right() - 200, y), QPointF(c.plot.right() - 170, y));
    c.painter.setPen(Qt::black);
    c.painter.drawText(QRectF(c.plot.right() - 164, y - 8, 164, 16),
                       Qt::AlignLeft | Qt::AlignVCenter, QString::fromStdString(curves[n].label));
  }
  return c.save(path);
}

}  // namespace crucible::plot
