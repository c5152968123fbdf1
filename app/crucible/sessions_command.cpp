// `crucible sessions list` and `crucible sessions show ID`: read back what the store kept.
// Exit codes: 0 done; 2 bad usage or no such session; 3 the database could not be read.

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/crucible/commands.h"
#include "app/crucible/text_table.h"
#include "core/store/store.h"

namespace crucible::cli {

namespace {

using nlohmann::json;

constexpr const char* kUsage =
    "usage: crucible sessions list [--db FILE] [--json] [--task TEXT] [--verdict V] [--limit N]\n"
    "       crucible sessions show ID [--db FILE] [--json] [--code]\n"
    "\n"
    "  list           stored sessions, newest first\n"
    "  show ID        one session: task, candidates, verdict, speedup, timing, flags, reward\n"
    "\n"
    "options:\n"
    "  --db FILE      the database (default: $XDG_DATA_HOME/crucible/crucible.db, else\n"
    "                 ~/.local/share/crucible/crucible.db)\n"
    "  --json         print one JSON object instead of text\n"
    "  --task TEXT    list: only tasks whose name or path contains TEXT (any case)\n"
    "  --verdict V    list: only sessions whose verdict is V (verified, incorrect, cheating,\n"
    "                 invalid, error)\n"
    "  --limit N      list: at most N sessions (default 50; 0 for all)\n"
    "  --code         show: also print each candidate's plan and code, with line numbers\n";

constexpr int kDefaultLimit = 50;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string action;  // list | show
  std::optional<std::int64_t> id;
  std::string db;
  bool json = false;
  bool code = false;
  bool help = false;
  store::SessionFilter filter;
};

template <typename Int>
std::optional<Int> parseInteger(const std::string& text) {
  Int value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

Options parseOptions(const std::vector<std::string>& args) {
  Options o;
  o.filter.limit = kDefaultLimit;
  std::vector<std::string> positional;
  std::vector<std::string> listOnly;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::optional<std::string> inlineValue;
    if (arg.rfind("--", 0) == 0) {
      if (auto eq = arg.find('='); eq != std::string::npos) {
        inlineValue = arg.substr(eq + 1);
        arg.resize(eq);
      }
    }
    const auto value = [&]() -> std::string {
      if (inlineValue) return *inlineValue;
      if (i + 1 >= args.size()) throw UsageError(arg + " needs a value");
      return args[++i];
    };
    const auto noValue = [&] {
      if (inlineValue) throw UsageError(arg + " takes no value");
    };
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--db") {
      o.db = value();
      if (o.db.empty()) throw UsageError("--db needs a file name");
    } else if (arg == "--json") {
      noValue();
      o.json = true;
    } else if (arg == "--code") {
      noValue();
      o.code = true;
    } else if (arg == "--task") {
      o.filter.taskText = value();
      listOnly.push_back(arg);
    } else if (arg == "--verdict") {
      const std::string text = value();
      o.filter.verdict = verdictFromString(text);
      if (!o.filter.verdict) {
        throw UsageError("unknown verdict '" + text +
                         "' (verified, incorrect, cheating, invalid, error)");
      }
      listOnly.push_back(arg);
    } else if (arg == "--limit") {
      const std::string text = value();
      auto limit = parseInteger<int>(text);
      if (!limit || *limit < 0) throw UsageError("--limit needs a number >= 0, not '" + text + "'");
      o.filter.limit = *limit;
      listOnly.push_back(arg);
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (o.help) return o;
  if (positional.empty()) throw UsageError("say what to do: list or show ID");
  o.action = positional[0];
  if (o.action == "list") {
    if (positional.size() > 1)
      throw UsageError("list takes no arguments, got '" + positional[1] + "'");
    if (o.code) throw UsageError("--code is for show");
  } else if (o.action == "show") {
    if (positional.size() != 2) throw UsageError("show needs one session id");
    o.id = parseInteger<std::int64_t>(positional[1]);
    if (!o.id || *o.id <= 0) throw UsageError("'" + positional[1] + "' is not a session id");
    if (!listOnly.empty()) throw UsageError(listOnly.front() + " is for list");
  } else {
    throw UsageError("unknown action '" + o.action + "' (list or show)");
  }
  return o;
}

// --- text rendering -----------------------------------------------------------------------------

std::string msText(const std::optional<double>& ms) {
  return ms ? formatNumber("%.4g", *ms) + " ms" : "-";
}

/// "2026-01-31T12:34:56.789Z" -> "2026-01-31 12:34:56".
std::string dateText(const std::string& iso) {
  if (iso.size() < 19 || iso[10] != 'T') return iso;
  std::string text = iso.substr(0, 19);
  text[10] = ' ';
  return text;
}

std::string clip(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

int countLines(const std::string& text) {
  if (text.empty()) return 0;
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? lines : lines + 1;
}

void printNumbered(std::ostream& out, const std::string& text, const std::string& indent) {
  std::istringstream in(text);
  std::string line;
  const int width = static_cast<int>(std::to_string(std::max(1, countLines(text))).size());
  for (int number = 1; std::getline(in, line); ++number) {
    out << indent << pad(std::to_string(number), static_cast<std::size_t>(width), true) << " | "
        << line << "\n";
  }
}

void printList(std::ostream& out, const std::vector<store::SessionSummary>& sessions,
               const Options& o, const std::string& path) {
  if (sessions.empty()) {
    const bool filtered = !o.filter.taskText.empty() || o.filter.verdict.has_value();
    out << (filtered ? "No sessions match." : "No sessions yet.") << " (" << path << ")\n";
    return;
  }
  const bool showCandidates = std::any_of(sessions.begin(), sessions.end(),
                                          [](const auto& s) { return s.candidateCount != 1; });
  struct Row {
    std::vector<std::string> cells;
  };
  std::vector<std::string> header = {"ID", "DATE (UTC)", "TASK", "KIND"};
  if (showCandidates) header.push_back("CANDIDATES");
  for (const char* h : {"VERDICT", "SPEEDUP", "FLAGS"}) header.emplace_back(h);
  std::vector<bool> rightAligned = {true, false, false, false};
  if (showCandidates) rightAligned.push_back(true);
  for (bool r : {false, true, true}) rightAligned.push_back(r);

  std::vector<std::vector<std::string>> rows;
  for (const auto& s : sessions) {
    std::vector<std::string> row = {std::to_string(s.id), dateText(s.createdAt),
                                    clip(s.taskName.empty() ? "(unnamed)" : s.taskName, 40),
                                    s.kind};
    if (showCandidates) row.push_back(std::to_string(s.candidateCount));
    row.emplace_back(s.verdict ? std::string(toString(*s.verdict)) : "-");
    row.push_back(speedupText(s.speedup));
    row.push_back(std::to_string(s.flagCount));
    rows.push_back(std::move(row));
  }
  printTable(out, header, rows, rightAligned);
  if (o.filter.limit > 0 && static_cast<int>(sessions.size()) == o.filter.limit) {
    out << "(showing the newest " << o.filter.limit << "; --limit 0 lists all)\n";
  }
}

void printEvaluation(std::ostream& out, const store::EvaluationRecord& record) {
  const Evaluation& e = record.evaluation;
  const std::string in = "    ";
  out << "  Evaluation " << record.id << " - " << dateText(record.createdAt) << " UTC\n";
  out << in << "verdict:   " << toString(e.verdict) << (e.correct ? " (outputs correct)" : "")
      << "\n";
  out << in << "speedup:   " << speedupText(e.speedup) << "\n";
  out << in << "timing:    reference " << msText(e.timing.referenceMs) << ", candidate "
      << msText(e.timing.candidateMs);
  if (e.timing.compileReferenceMs) {
    out << ", torch.compile " << msText(e.timing.compileReferenceMs);
  }
  out << "\n";
  out << in << "backend:   " << (e.backend.empty() ? "-" : e.backend);
  if (!e.device.empty()) out << " on " << e.device;
  out << "\n";
  out << in << "sandbox:   " << (e.sandboxed ? "yes" : "no");
  if (!e.sandboxNote.empty()) out << " (" << e.sandboxNote << ")";
  out << "\n";
  if (e.error) {
    out << in << "error:     " << e.error->stage << ": " << e.error->message;
    if (e.error->line) out << " (line " << *e.error->line << ")";
    out << " [blame: " << e.error->blame << "]\n";
  }
  if (e.flags.empty()) {
    out << in << "flags:     none\n";
  } else {
    out << in << "flags:     " << e.flags.size() << "\n";
    std::size_t idWidth = 0;
    for (const Flag& f : e.flags) idWidth = std::max(idWidth, f.id.size());
    for (const Flag& f : e.flags) {
      const std::string severity = f.severity == Severity::Cheat ? "CHEAT" : "warning";
      const std::string line = f.line ? "line " + std::to_string(*f.line) : "";
      out << in << "  " << pad(severity, 7) << "  " << pad(f.id, idWidth) << "  " << pad(line, 9)
          << "  " << f.message << "\n";
    }
  }
  if (!e.reward.preset.empty() || !e.reward.components.empty()) {
    out << in << "reward:    " << (e.reward.preset.empty() ? "-" : e.reward.preset) << ", total "
        << (e.reward.total ? formatNumber("%.4g", *e.reward.total)
                           : std::string("none (not scored: not the candidate's fault)"))
        << "\n";
    std::size_t nameWidth = 0;
    for (const auto& c : e.reward.components) nameWidth = std::max(nameWidth, c.name.size());
    for (const auto& c : e.reward.components) {
      out << in << "  " << pad(c.name, nameWidth) << "  "
          << pad(formatNumber("%.4g", c.value), 8, true);
      if (!c.part.empty()) out << "  (" << c.part << " tokens)";
      out << "\n";
    }
  }
}

void printSession(std::ostream& out, const store::SessionDetail& s, const Options& o) {
  out << "Session " << s.id << " - " << s.kind << " - " << dateText(s.createdAt) << " UTC\n";
  if (!s.note.empty()) out << "Note: " << s.note << "\n";
  out << "Task " << s.task.id << ": " << (s.task.name.empty() ? "(unnamed)" : s.task.name) << "\n";
  if (!s.task.path.empty()) out << "  path:    " << s.task.path << "\n";
  out << "  source:  " << countLines(s.task.source) << " lines, sha256 " << s.task.sha256 << "\n";
  if (s.candidates.empty()) out << "\nNo candidates.\n";
  for (const auto& c : s.candidates) {
    out << "\nCandidate " << c.id << " (" << c.origin;
    if (!c.model.empty()) out << ", model " << c.model;
    if (c.parentId) out << ", refines candidate " << *c.parentId;
    out << ")\n";
    if (!c.path.empty()) out << "  path:    " << c.path << "\n";
    out << "  code:    " << countLines(c.code) << " lines, sha256 " << c.sha256 << "\n";
    if (o.code) {
      if (!c.plan.empty()) {
        out << "  plan:\n";
        printNumbered(out, c.plan, "    ");
      }
      out << "  code:\n";
      printNumbered(out, c.code, "    ");
    }
    if (c.evaluations.empty()) out << "  not evaluated\n";
    for (const auto& e : c.evaluations) printEvaluation(out, e);
  }
}

std::string dumpJson(const json& value) {
  return value.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace

int runSessions(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Options o;
  try {
    o = parseOptions(args);
  } catch (const UsageError& e) {
    err << "crucible sessions: " << e.what() << "\n" << kUsage;
    return 2;
  }
  if (o.help) {
    out << kUsage;
    return 0;
  }

  std::string path;
  try {
    path = o.db.empty() ? store::Store::defaultDatabasePath() : o.db;
  } catch (const store::StoreError& e) {
    err << "crucible sessions: " << e.what() << "\n";
    return 3;
  }

  // Reading must not create a database: with no file there are simply no sessions.
  std::error_code ignored;
  const bool exists = std::filesystem::exists(path, ignored);

  try {
    if (o.action == "list") {
      std::vector<store::SessionSummary> sessions;
      if (exists) sessions = store::Store(path).listSessions(o.filter);
      if (o.json) {
        out << dumpJson(json{{"database", path}, {"sessions", sessions}}) << "\n";
      } else {
        printList(out, sessions, o, path);
      }
      return 0;
    }
    std::optional<store::SessionDetail> session;
    if (exists) session = store::Store(path).session(*o.id);
    if (!session) {
      err << "crucible sessions: no session " << *o.id << " in " << path
          << (exists ? "" : " (there is no database there yet)")
          << "; `crucible sessions list` shows the ids\n";
      return 2;
    }
    if (o.json) {
      out << dumpJson(json{{"database", path}, {"session", *session}}) << "\n";
    } else {
      printSession(out, *session, o);
    }
    return 0;
  } catch (const store::StoreError& e) {
    err << "crucible sessions: " << e.what() << "\n";
    return 3;
  }
}

}  // namespace crucible::cli
