#pragma once
// Plain-text output shared by the CLI's commands: numbers, speedups and aligned tables.

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace crucible::cli {

/// snprintf of one double.
std::string formatNumber(const char* format, double value);

/// "1.85x", "0.0042x" (never 0.00x); "-" when there is none.
std::string speedupText(const std::optional<double>& speedup);

/// `text` padded with spaces to `width`, on the left when `right`.
std::string pad(const std::string& text, std::size_t width, bool right = false);

/// A header and rows in aligned columns (two spaces apart, no trailing spaces).
void printTable(std::ostream& out, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows,
                const std::vector<bool>& rightAligned);

}  // namespace crucible::cli
