#include "core/inspect/kernel_ir.h"

#include <stdexcept>

namespace crucible::inspect {

using nlohmann::json;

const std::vector<std::string>& irLevelNames() {
  static const std::vector<std::string> names = {"opencl_c", "ttir", "ttgir", "llir", "ptx"};
  return names;
}

std::vector<std::string> splitIrLines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

namespace {

json optionalInt(const std::optional<int>& v) {
  return v ? json(*v) : json();
}

json optionalError(const std::optional<IrError>& e) {
  return e ? toJson(*e) : json();
}

const json& field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) {
    throw std::invalid_argument(std::string("kernel IR JSON: missing '") + key + "'");
  }
  return j.at(key);
}

std::string stringField(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) throw std::invalid_argument(std::string("kernel IR JSON: '") + key + "'");
  return v.get<std::string>();
}

std::optional<int> optionalIntField(const json& j, const char* key) {
  const json& v = field(j, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number_integer()) {
    throw std::invalid_argument(std::string("kernel IR JSON: '") + key + "'");
  }
  return v.get<int>();
}

std::optional<IrError> errorFromJson(const json& v) {
  if (v.is_null()) return std::nullopt;
  return IrError{stringField(v, "stage"), stringField(v, "message"), stringField(v, "file"),
                 optionalIntField(v, "line")};
}

IrLevel levelFromJson(const json& j) {
  IrLevel l{stringField(j, "name"), stringField(j, "text"), {}, errorFromJson(field(j, "error"))};
  for (const json& line : field(j, "line_map")) {
    if (line.is_null()) {
      l.lineMap.emplace_back();
    } else if (line.is_number_integer()) {
      l.lineMap.emplace_back(line.get<int>());
    } else {
      throw std::invalid_argument("kernel IR JSON: 'line_map'");
    }
  }
  return l;
}

KernelIr kernelFromJson(const json& j) {
  KernelIr k{stringField(j, "name"),
             optionalIntField(j, "def_line"),
             stringField(j, "specialization"),
             {},
             errorFromJson(field(j, "error"))};
  for (const json& l : field(j, "levels")) k.levels.push_back(levelFromJson(l));
  return k;
}

}  // namespace

json toJson(const IrError& e) {
  return {
      {"stage", e.stage}, {"message", e.message}, {"file", e.file}, {"line", optionalInt(e.line)}};
}

json toJson(const IrLevel& l) {
  json map = json::array();
  for (const auto& line : l.lineMap) map.push_back(optionalInt(line));
  return {{"name", l.name}, {"text", l.text}, {"line_map", map}, {"error", optionalError(l.error)}};
}

json toJson(const KernelIr& k) {
  json levels = json::array();
  for (const auto& l : k.levels) levels.push_back(toJson(l));
  return {{"name", k.name},
          {"def_line", optionalInt(k.defLine)},
          {"specialization", k.specialization},
          {"levels", levels},
          {"error", optionalError(k.error)}};
}

json toJson(const KernelIrReport& r) {
  json kernels = json::array();
  for (const auto& k : r.kernels) kernels.push_back(toJson(k));
  return {{"backend", r.backend},
          {"compiled", r.compiled},
          {"target", r.target},
          {"note", r.note},
          {"candidate_file", r.candidateFile},
          {"kernels", kernels},
          {"error", optionalError(r.error)}};
}

KernelIrReport kernelIrReportFromJson(const json& j) {
  KernelIrReport r;
  r.backend = stringField(j, "backend");
  const json& compiled = field(j, "compiled");
  if (!compiled.is_boolean()) throw std::invalid_argument("kernel IR JSON: 'compiled'");
  r.compiled = compiled.get<bool>();
  r.target = stringField(j, "target");
  r.note = stringField(j, "note");
  r.candidateFile = stringField(j, "candidate_file");
  for (const json& k : field(j, "kernels")) r.kernels.push_back(kernelFromJson(k));
  r.error = errorFromJson(field(j, "error"));
  return r;
}

}  // namespace crucible::inspect
