#include "core/verify/flag_text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace crucible {

namespace {
using nlohmann::json;

constexpr std::size_t kListed = 8;      // entries of a list or a count table shown in full
constexpr std::size_t kLongText = 240;  // longer values are cut

// Evidence keys in words; others have their underscores made spaces.
std::string nameOf(const std::string& key) {
  static const std::map<std::string, std::string> names = {
      {"aten_ops", "PyTorch ops (x times)"},
      {"lines", "candidate lines (x times)"},
      {"calls", "calls (x times)"},
      {"source", "seen by"},
      {"launches", "kernel launches"},
      {"scalar_reads", "tensor elements read into Python"},
      {"candidate_ms", "candidate's time (ms)"},
      {"floor_ms", "least time the device allows (ms)"},
      {"forged_lines", "forged result lines"},
  };
  const auto it = names.find(key);
  if (it != names.end()) return it->second;
  std::string words = key;
  std::replace(words.begin(), words.end(), '_', ' ');
  return words;
}

std::string cut(std::string text) {
  if (text.size() > kLongText) text = text.substr(0, kLongText) + "...";
  return text;
}

std::string scalarText(const json& value) {
  if (value.is_string()) return cut(value.get<std::string>());
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
  if (value.is_number_float()) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value.get<double>());
    return buffer;
  }
  if (value.is_null()) return "none";
  return cut(value.dump());
}

bool isCountTable(const json& value) {
  return value.is_object() && !value.empty() &&
         std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_number(); });
}

std::string countsText(const json& table) {
  std::vector<std::pair<std::string, double>> entries;
  for (const auto& [key, n] : table.items()) entries.emplace_back(key, n.get<double>());
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::ostringstream out;
  for (std::size_t i = 0; i < entries.size() && i < kListed; ++i) {
    if (i > 0) out << ", ";
    out << entries[i].first << " x" << scalarText(json(entries[i].second));
  }
  if (entries.size() > kListed) out << ", and " << entries.size() - kListed << " more";
  return out.str();
}

std::string listText(const json& list) {
  std::ostringstream out;
  std::size_t i = 0;
  for (const auto& item : list) {
    if (i == kListed) {
      out << ", and " << list.size() - kListed << " more";
      break;
    }
    out << (i++ ? ", " : "") << (item.is_object() ? cut(item.dump()) : scalarText(item));
  }
  return out.str();
}

void appendEntries(std::ostringstream& out, const json& object, int depth) {
  const std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
  for (const auto& [key, value] : object.items()) {
    if (value.is_null()) continue;
    out << indent << nameOf(key) << ':';
    if (isCountTable(value)) {
      out << ' ' << countsText(value) << '\n';
    } else if (value.is_object() && !value.empty() && depth < 2) {
      out << '\n';
      appendEntries(out, value, depth + 1);
    } else if (value.is_array()) {
      out << ' ' << listText(value) << '\n';
    } else {
      out << ' ' << scalarText(value) << '\n';
    }
  }
}
}  // namespace

std::string evidenceText(const json& evidence) {
  if (!evidence.is_object()) return evidence.is_null() ? "" : scalarText(evidence);
  std::ostringstream out;
  appendEntries(out, evidence, 0);
  std::string text = out.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string flagHoverText(const Flag& flag) {
  std::ostringstream out;
  out << (flag.severity == Severity::Cheat ? "Cheating: " : "Warning: ") << flag.id;
  if (const FlagInfo* info = findFlag(flag.id)) out << " (" << info->summary << ")";
  out << '\n' << flag.message;
  const std::string evidence = evidenceText(flag.evidence);
  if (!evidence.empty()) out << "\n\n" << evidence;
  return out.str();
}

}  // namespace crucible
