#include "core/verify/verdict.h"

#include <array>
#include <utility>

namespace crucible {

namespace {
constexpr std::array<std::pair<Verdict, std::string_view>, 5> kNames = {{
    {Verdict::Verified, "verified"},
    {Verdict::Incorrect, "incorrect"},
    {Verdict::Cheating, "cheating"},
    {Verdict::Invalid, "invalid"},
    {Verdict::Error, "error"},
}};
}  // namespace

std::string_view toString(Verdict verdict) {
  for (const auto& [v, name] : kNames) {
    if (v == verdict) return name;
  }
  return "error";
}

std::optional<Verdict> verdictFromString(std::string_view text) {
  for (const auto& [v, name] : kNames) {
    if (name == text) return v;
  }
  return std::nullopt;
}

int exitCodeFor(Verdict verdict) {
  switch (verdict) {
    case Verdict::Verified:
      return 0;
    case Verdict::Error:
      return 3;
    default:
      return 1;
  }
}

}  // namespace crucible
