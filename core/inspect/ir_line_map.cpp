#include "core/inspect/ir_line_map.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "core/inspect/kernel_ir.h"

namespace crucible::inspect {

namespace {

constexpr int kMaxDepth = 64;  // alias and scope chains followed at most this deep

bool matches(std::string_view path, const std::vector<std::string>& files) {
  return std::any_of(files.begin(), files.end(), [&](const std::string& f) { return f == path; });
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// A non-negative decimal number at the start of `s` (consumed), or nullopt.
std::optional<int> number(std::string_view& s) {
  std::size_t n = 0;
  long long v = 0;
  while (n < s.size() && n < 9 && std::isdigit(static_cast<unsigned char>(s[n]))) {
    v = v * 10 + (s[n] - '0');
    ++n;
  }
  if (n == 0) return std::nullopt;
  s.remove_prefix(n);
  return static_cast<int>(v);
}

/// A double-quoted string at the start of `s` (consumed; escapes kept as written), or nullopt.
std::optional<std::string_view> quoted(std::string_view& s) {
  if (s.empty() || s.front() != '"') return std::nullopt;
  std::size_t i = 1;
  while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
  if (i >= s.size()) return std::nullopt;
  const auto inside = s.substr(1, i - 1);
  s.remove_prefix(i + 1);
  return inside;
}

bool consume(std::string_view& s, std::string_view prefix) {
  s = trimmed(s);
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// ---- MLIR ----------------------------------------------------------------------------------

/// Walks `s` from `from`, skipping quoted strings, calling `visit(i, depth)` at each character
/// outside them with the bracket depth before it ('(' and '[' open, ')' and ']' close) until
/// it returns true; the index it stopped at, or s.size().
template <typename Visit>
std::size_t scanBrackets(std::string_view s, std::size_t from, Visit visit) {
  int depth = 0;
  bool inString = false;
  for (std::size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') inString = true;
    if (visit(i, depth)) return i;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
  }
  return s.size();
}

/// The text inside `loc(` ... `)` starting at `open` (the index of the '('), or nullopt.
std::optional<std::string_view> parenthesised(std::string_view s, std::size_t open) {
  const auto close = scanBrackets(s, open, [&](std::size_t i, int depth) {
    return depth == 1 && (s[i] == ')' || s[i] == ']');
  });
  if (close >= s.size()) return std::nullopt;
  return s.substr(open + 1, close - open - 1);
}

class MlirLocations {
 public:
  MlirLocations(const std::vector<std::string>& lines, const std::vector<std::string>& files)
      : files_(files) {
    for (const auto& line : lines) {
      std::string_view s = trimmed(line);
      if (s.substr(0, 4) != "#loc") continue;
      const auto eq = s.find(" = loc(");
      if (eq == std::string_view::npos) continue;
      if (auto body = parenthesised(s, eq + 6)) aliases_[std::string(s.substr(0, eq))] = *body;
    }
  }

  /// The candidate's line a location expression names, if any.
  std::optional<int> resolve(std::string_view e, int depth = 0) {
    e = trimmed(e);
    if (depth > kMaxDepth || e.empty()) return std::nullopt;
    if (e.front() == '#') return alias(std::string(e), depth);
    if (e.substr(0, 9) == "callsite(") {
      // callsite(CALLEE at CALLER): the callee's line where it is the candidate's.
      const auto inner = parenthesised(e, 8).value_or(std::string_view());
      const auto at = inner.find(" at ");
      if (at == std::string_view::npos) return std::nullopt;
      if (auto line = resolve(inner.substr(0, at), depth + 1)) return line;
      return resolve(inner.substr(at + 4), depth + 1);
    }
    if (e.substr(0, 5) == "fused") {
      const auto open = e.find('[');
      if (open == std::string_view::npos) return std::nullopt;
      return firstOf(parenthesised(e, open).value_or(std::string_view()), depth);
    }
    std::string_view rest = e;
    const auto name = quoted(rest);
    if (!name) return std::nullopt;
    if (consume(rest, "(")) return resolve(rest.substr(0, rest.rfind(')')), depth + 1);
    if (!consume(rest, ":")) return std::nullopt;
    const auto line = number(rest);
    return line && matches(*name, files_) ? line : std::nullopt;
  }

 private:
  std::optional<int> alias(const std::string& name, int depth) {
    if (auto known = resolved_.find(name); known != resolved_.end()) return known->second;
    // Marked before it is followed: an alias reached again on its own chain (a cycle) names
    // no line, and every alias is followed once.
    resolved_[name] = std::nullopt;
    const auto it = aliases_.find(name);
    const auto line = it == aliases_.end() ? std::nullopt : resolve(it->second, depth + 1);
    resolved_[name] = line;
    return line;
  }

  /// The first of comma-separated locations (at nesting depth 0) that resolves.
  std::optional<int> firstOf(std::string_view list, int depth) {
    for (std::size_t start = 0; start <= list.size();) {
      const auto comma = scanBrackets(
          list, start, [&](std::size_t i, int nesting) { return nesting == 0 && list[i] == ','; });
      if (auto line = resolve(list.substr(start, comma - start), depth + 1)) return line;
      start = comma + 1;
    }
    return std::nullopt;
  }

  const std::vector<std::string>& files_;
  std::map<std::string, std::string_view> aliases_;
  std::map<std::string, std::optional<int>> resolved_;
};

}  // namespace

LineMap mlirLineMap(const std::string& text, const std::vector<std::string>& files) {
  const auto lines = splitIrLines(text);
  MlirLocations locations(lines, files);
  LineMap map;
  map.reserve(lines.size());
  for (const auto& line : lines) {
    const std::string_view s = trimmed(line);
    // Alias definitions are the table, not code; an operation's location is its last loc(...).
    const auto at = s.rfind("loc(");
    if (s.substr(0, 4) == "#loc" || at == std::string_view::npos) {
      map.emplace_back();
      continue;
    }
    const auto body = parenthesised(s, at + 3);
    map.push_back(body ? locations.resolve(*body) : std::nullopt);
  }
  return map;
}

// ---- LLVM IR -------------------------------------------------------------------------------

namespace {

/// One metadata node: `!N = [distinct] !KIND(fields)`.
struct Metadata {
  std::string kind;
  std::string fields;
};

/// The value of `key: ` in a metadata node's fields (a number, a !N reference or a string).
std::optional<std::string_view> fieldOf(std::string_view fields, std::string_view key) {
  std::size_t from = 0;
  for (;;) {
    const auto at = fields.find(key, from);
    if (at == std::string_view::npos) return std::nullopt;
    from = at + key.size();
    const bool starts =
        at == 0 || fields[at - 1] == ' ' || fields[at - 1] == '(' || fields[at - 1] == ',';
    if (!starts || fields.substr(from, 2) != ": ") continue;
    std::string_view rest = fields.substr(from + 2);
    if (auto q = quoted(rest)) return q;
    const auto end = rest.find_first_of(",)");
    return trimmed(rest.substr(0, end));
  }
}

std::optional<int> metadataId(std::string_view ref) {
  if (!consume(ref, "!")) return std::nullopt;
  return number(ref);
}

class LlvmDebugInfo {
 public:
  LlvmDebugInfo(const std::vector<std::string>& lines, const std::vector<std::string>& files)
      : files_(files) {
    for (const auto& line : lines) {
      std::string_view s = line;
      if (!consume(s, "!")) continue;
      const auto id = number(s);
      if (!id || !consume(s, "=")) continue;
      consume(s, "distinct ");
      if (!consume(s, "!")) continue;
      const auto open = s.find('(');
      if (open == std::string_view::npos) continue;
      nodes_[*id] = {std::string(s.substr(0, open)), std::string(s.substr(open))};
    }
  }

  /// The candidate's line of metadata node `id` (a location or a subprogram).
  std::optional<int> lineOf(int id, int depth = 0) const {
    const auto it = nodes_.find(id);
    if (it == nodes_.end() || depth > kMaxDepth) return std::nullopt;
    const Metadata& m = it->second;
    std::string_view lineText = fieldOf(m.fields, "line").value_or("");
    const auto line = number(lineText);
    if (m.kind == "DISubprogram") {
      return line && inFiles(id, depth) ? line : std::nullopt;
    }
    if (m.kind != "DILocation") return std::nullopt;
    const auto scope = metadataId(fieldOf(m.fields, "scope").value_or(""));
    if (line && scope && inFiles(*scope, depth)) return line;
    // Inlined from elsewhere: where it was inlined into.
    const auto inlinedAt = metadataId(fieldOf(m.fields, "inlinedAt").value_or(""));
    return inlinedAt ? lineOf(*inlinedAt, depth + 1) : std::nullopt;
  }

 private:
  /// Whether scope `id` (a subprogram, a lexical block, a file) lies in one of the files.
  bool inFiles(int id, int depth) const {
    const auto it = nodes_.find(id);
    if (it == nodes_.end() || depth > kMaxDepth) return false;
    const Metadata& m = it->second;
    if (m.kind == "DIFile") {
      const std::string name(fieldOf(m.fields, "filename").value_or(""));
      const std::string dir(fieldOf(m.fields, "directory").value_or(""));
      return matches(name, files_) || (!dir.empty() && matches(dir + "/" + name, files_));
    }
    if (const auto file = metadataId(fieldOf(m.fields, "file").value_or(""))) {
      return inFiles(*file, depth + 1);
    }
    const auto scope = metadataId(fieldOf(m.fields, "scope").value_or(""));
    return scope && inFiles(*scope, depth + 1);
  }

  const std::vector<std::string>& files_;
  std::map<int, Metadata> nodes_;
};

}  // namespace

LineMap llvmLineMap(const std::string& text, const std::vector<std::string>& files) {
  const auto lines = splitIrLines(text);
  const LlvmDebugInfo info(lines, files);
  LineMap map;
  map.reserve(lines.size());
  for (const auto& line : lines) {
    const auto at = line.rfind("!dbg !");
    if (line.rfind('!', 0) == 0 || at == std::string::npos) {
      map.emplace_back();
      continue;
    }
    std::string_view ref = std::string_view(line).substr(at + 5);
    const auto id = metadataId(ref);
    map.push_back(id ? info.lineOf(*id) : std::nullopt);
  }
  return map;
}

// ---- PTX -----------------------------------------------------------------------------------

namespace {

/// The `.file N "path"` table.
std::map<int, std::string> ptxFiles(const std::vector<std::string>& lines) {
  std::map<int, std::string> table;
  for (const auto& line : lines) {
    std::string_view s = line;
    if (!consume(s, ".file")) continue;
    const auto id = number(s = trimmed(s));
    s = trimmed(s);
    const auto path = quoted(s);
    if (id && path) table[*id] = std::string(*path);
  }
  return table;
}

/// `FILE LINE` at the start of `s` (consumed): the line when FILE is the candidate's.
std::optional<std::optional<int>> ptxPlace(std::string_view& s,
                                           const std::map<int, std::string>& table,
                                           const std::vector<std::string>& files) {
  const auto file = number(s = trimmed(s));
  const auto line = number(s = trimmed(s));
  if (!file || !line) return std::nullopt;
  const auto it = table.find(*file);
  return it != table.end() && matches(it->second, files) ? std::optional<int>(*line)
                                                         : std::optional<int>();
}

}  // namespace

LineMap ptxLineMap(const std::string& text, const std::vector<std::string>& files) {
  const auto lines = splitIrLines(text);
  const auto table = ptxFiles(lines);
  LineMap map;
  map.reserve(lines.size());
  std::optional<int> current;
  for (const auto& line : lines) {
    std::string_view s = line;
    if (consume(s, ".loc")) {
      // `.loc F L C[, function_name ..., inlined_at F L C]`: the callee's line when it is the
      // candidate's, else the line it was inlined at.
      const auto place = ptxPlace(s, table, files);
      current = place ? *place : std::nullopt;
      const auto inlined = s.find("inlined_at");
      if (!current && inlined != std::string_view::npos) {
        std::string_view rest = s.substr(inlined + 10);
        if (auto at = ptxPlace(rest, table, files)) current = *at;
      }
    } else if (line == "}" || line.rfind(".section", 0) == 0 || line.rfind("\t.section", 0) == 0) {
      current.reset();  // the function ended: what follows is not its code
      map.emplace_back();
      continue;
    }
    map.push_back(current);
  }
  return map;
}

std::optional<LineMap> lineMapFor(const std::string& level, const std::string& text,
                                  const std::vector<std::string>& files) {
  if (level == "ttir" || level == "ttgir") return mlirLineMap(text, files);
  if (level == "llir") return llvmLineMap(text, files);
  if (level == "ptx") return ptxLineMap(text, files);
  return std::nullopt;
}

}  // namespace crucible::inspect
