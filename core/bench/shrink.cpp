#include "core/bench/shrink.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

namespace crucible::bench {

namespace {

constexpr long long kSmallest = 8;  // values up to this stay: kernel sizes, small counts

bool isSizeName(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* notSize : {"kernel", "stride", "pad", "dilation", "group", "head", "eps", "seed",
                              "layer", "step", "iter", "axis"}) {
    if (name.find(notSize) != std::string::npos) return false;
  }
  return true;
}

std::string formatFactor(double f) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", f);
  return text;
}

}  // namespace

long long shrinkSize(long long value, double factor) {
  if (value <= kSmallest) return value;
  const double scaled = static_cast<double>(value) * factor;
  long long step = 1;  // the largest power of two dividing value, not above the scaled value
  while (value % (step * 2) == 0 && static_cast<double>(step * 2) <= scaled) step *= 2;
  const long long rounded = std::llround(scaled / static_cast<double>(step)) * step;
  if (factor > 1) return std::max(rounded, value);
  return std::clamp(rounded, std::min<long long>(step, value), value);
}

std::string scaleWord(double factor) {
  return factor > 1 ? "scaled up" : "shrunk";
}

ShrinkResult shrinkSource(const std::string& source, double factor) {
  if (!(factor > 0 && factor <= kMaxScale)) {
    throw std::invalid_argument("a size factor must be in (0, " + formatFactor(kMaxScale) +
                                "], not " + formatFactor(factor));
  }
  const bool grow = factor > 1;
  // name = 123   |   name = (1, 2, 3)   , optionally followed by a comment
  static const std::regex assignment(
      R"(^([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)(\d+|\(\s*\d+(?:\s*,\s*\d+)*\s*,?\s*\))(\s*(?:#.*)?)$)");
  static const std::regex integer(R"(\d+)");
  ShrinkResult result;
  std::istringstream in(source);
  std::string line, body;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::smatch m;
    if (std::regex_match(line, m, assignment) && isSizeName(m[1].str())) {
      const std::string value = m[3].str();
      std::string scaled;
      auto from = value.cbegin();
      for (std::sregex_iterator it(value.begin(), value.end(), integer), end; it != end; ++it) {
        scaled.append(from, (*it)[0].first);
        scaled += std::to_string(shrinkSize(std::stoll(it->str()), factor));
        from = (*it)[0].second;
      }
      scaled.append(from, value.cend());
      if (scaled != value) {
        result.changed.push_back({m[1].str(), number, value, scaled});
        line = m[1].str() + m[2].str() + scaled + m[4].str() +
               (grow ? "  # scaled from " : "  # shrunk from ") + value;
      }
    }
    body += line + "\n";
  }
  if (!source.empty() && source.back() != '\n' && !body.empty()) body.pop_back();
  result.source = std::string("# crucible bench ") + (grow ? "--scale " : "--shrink ") +
                  formatFactor(factor) + ": " + std::to_string(result.changed.size()) +
                  " size constants scaled; times are not those of the original sizes\n" + body;
  return result;
}

}  // namespace crucible::bench
