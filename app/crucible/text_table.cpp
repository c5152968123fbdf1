#include "app/crucible/text_table.h"

#include <algorithm>
#include <cstdio>

namespace crucible::cli {

std::string formatNumber(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string speedupText(const std::optional<double>& speedup) {
  if (!speedup) return "-";
  return formatNumber(*speedup >= 0.1 ? "%.2fx" : "%.2gx", *speedup);  // 0.0042x, not 0.00x
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

void printTable(std::ostream& out, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows,
                const std::vector<bool>& rightAligned) {
  std::vector<std::size_t> widths(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    widths[c] = header[c].size();
    for (const auto& row : rows) widths[c] = std::max(widths[c], row[c].size());
  }
  const auto printRow = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      line += pad(row[c], widths[c], c < rightAligned.size() && rightAligned[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  printRow(header);
  for (const auto& row : rows) printRow(row);
}

}  // namespace crucible::cli
