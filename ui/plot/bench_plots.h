#pragma once
// PNG plots of a benchmark run, drawn with Qt Gui alone (QImage + QPainter on the offscreen
// platform: no display, no widgets). Kept out of core/ so crucible_core stays free of Qt, and out
// of the static CLI (CRUCIBLE_STATIC_CLI) that runs on machines without Qt, which says "plots
// skipped" instead. The numbers come from core/bench/metrics.h; this only draws them.

#include <string>
#include <utility>
#include <vector>

#include "core/bench/metrics.h"

namespace crucible::plot {

struct Curve {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (p, fast_p)
};

/// The speedup distribution as bars on a log scale with a line at 1x. Returns "" or why the
/// file could not be written.
std::string writeSpeedupHistogram(const std::vector<bench::HistogramBin>& bins,
                                  const std::string& title, const std::string& path);

/// fast_p against the threshold p, one line per curve.
std::string writeFastPCurve(const std::vector<Curve>& curves, const std::string& title,
                            const std::string& path);

}  // namespace crucible::plot
