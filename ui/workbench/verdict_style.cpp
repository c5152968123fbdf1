#include "ui/workbench/verdict_style.h"

#include <QObject>
#include <QPainter>
#include <QPixmap>

#include "core/verify/report_text.h"

namespace crucible::ui {

QColor verdictColor(const std::optional<Evaluation>& evaluation) {
  if (!evaluation) return QColor(0x9a, 0xa0, 0xa6);
  switch (evaluation->verdict) {
    case Verdict::Verified:
      return QColor(0x1e, 0x8e, 0x3e);
    case Verdict::Incorrect:
      return QColor(0xe3, 0x74, 0x00);
    case Verdict::Cheating:
      return QColor(0xc5, 0x22, 0x1f);
    case Verdict::Invalid:
      return QColor(0x7b, 0x1f, 0xa2);
    case Verdict::Error:
      return QColor(0x5f, 0x63, 0x68);
  }
  return Qt::gray;
}

QIcon verdictIcon(const std::optional<Evaluation>& evaluation) {
  QPixmap pixmap(16, 16);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setBrush(verdictColor(evaluation));
  painter.setPen(Qt::NoPen);
  painter.drawEllipse(QRectF(2, 2, 12, 12));
  painter.setPen(QPen(Qt::white, 2));
  if (evaluation && evaluation->verdict == Verdict::Verified) {
    painter.drawPolyline(QPolygonF({QPointF(5, 8), QPointF(7.5, 10.5), QPointF(11, 5.5)}));
  } else if (evaluation) {
    painter.drawLine(QPointF(5.5, 5.5), QPointF(10.5, 10.5));
    painter.drawLine(QPointF(10.5, 5.5), QPointF(5.5, 10.5));
  }
  return QIcon(pixmap);
}

QString speedupText(const std::optional<double>& speedup) {
  return speedup ? QString::number(*speedup, 'g', 3) + "x" : QStringLiteral("n/a");
}

QString speedupText(const Evaluation& e, bool withRange) {
  // A cheat's measured speedup is not its speed: no number that could be read as one.
  if (e.verdict == Verdict::Cheating && e.speedup) {
    return withRange ? QObject::tr("not credited (cheating; measured %1)")
                           .arg(QString::fromStdString(speedupSummary(e)))
                     : QObject::tr("not credited");
  }
  if (withRange) return QString::fromStdString(speedupSummary(e));
  if (e.speedup && e.speedupSpread && e.speedupSpread->noisy) {
    return QStringLiteral("noisy %1-%2x")
        .arg(QString::number(e.speedupSpread->low, 'g', 2),
             QString::number(e.speedupSpread->high, 'g', 2));
  }
  return speedupText(e.speedup);
}

QString millisecondsText(const std::optional<double>& ms) {
  return ms ? QString::number(*ms, 'g', 4) + " ms" : QStringLiteral("n/a");
}

}  // namespace crucible::ui
