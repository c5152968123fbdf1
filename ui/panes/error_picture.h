#pragma once
// Where an incorrect candidate is wrong: the mismatch statistics of the first failing output and
// a picture of its error, a histogram of |actual - expected| by decade and a map of where the
// mismatching elements are (from the comparison the evaluation stores, core/verify/compare).

#include <QLabel>
#include <QWidget>
#include <QtCharts/QChartView>
#include <nlohmann/json.hpp>

#include "core/verify/evaluation.h"

namespace crucible::ui {

/// The first tensor comparison that failed, with its trial; null when every output matched.
struct FailingOutput {
  int trial = -1;
  nlohmann::json tensor;  // compare.cpp's JSON of one tensor
};
FailingOutput firstFailingOutput(const Evaluation& evaluation);

class ErrorPicture : public QWidget {
  Q_OBJECT
 public:
  explicit ErrorPicture(QWidget* parent = nullptr);
  /// Hides itself when there is nothing wrong to show.
  void setEvaluation(const Evaluation* evaluation);
  QString statisticsText() const { return stats_->text(); }
  bool hasMap() const { return !map_->pixmap().isNull(); }
  /// Whether any axis label of the histogram is cut short ("1e-..."), for tests.
  bool labelsTruncated() const;
  QString scaleText() const { return scaleText_->text(); }

 private:
  QPixmap mismatchScale() const;

  QLabel* stats_;
  QChartView* histogram_;
  QLabel* map_;
  QLabel* scale_;      // the map's colours and what they mean
  QLabel* scaleText_;  // the map's axes and cells in words
};

}  // namespace crucible::ui
