#include "core/proc/cpu_pressure.h"

#include <fstream>
#include <sstream>
#include <string>

namespace crucible::proc {

std::optional<std::uint64_t> cpuStalledMicros(const std::filesystem::path& file) {
  // Lines such as "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345".
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind != "some") continue;
    for (std::string field; words >> field;) {
      if (field.rfind("total=", 0) != 0) continue;
      try {
        std::size_t used = 0;
        const auto value = std::stoull(field.substr(6), &used);
        if (used == field.size() - 6) return value;
      } catch (const std::exception&) {
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace crucible::proc
