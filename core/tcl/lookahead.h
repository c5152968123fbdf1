#pragma once
// What the statements not yet compiled may still read. The front end compiles a kernel
// statement by statement; it asks here whether a pending block bound to a name is needed again
// (a load is materialised before a store only if something later reads it) and how often (an
// expensive block read twice is computed once).

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace crucible::tcl {

class Lookahead {
 public:
  /// Marks the statements of `body` (a list of ast statements) as being compiled in `frame`
  /// (the kernel's or an inlined helper's scope) until the matching leave().
  void enter(const nlohmann::json& body, size_t frame);
  void leave();
  /// The statement of the innermost body now being compiled.
  void at(size_t index);

  /// Names mentioned, read or assigned, from the current statement of every body of `frame` on
  /// (loop bodies are inside their loop statement, so a later iteration counts; an assignment
  /// inside control flow reads the old value into carried storage). With `pastCurrent`, the
  /// innermost body's current statement is left out: its operands are already evaluated.
  std::set<std::string> namesAhead(size_t frame, bool pastCurrent) const;
  /// The innermost statement being compiled (null outside any body).
  const nlohmann::json* current() const;
  /// How often the innermost current statement mentions `name`.
  int mentionsInCurrent(const std::string& name) const;
  /// Names `stmt` mentions.
  std::set<std::string> namesIn(const nlohmann::json& stmt) const;
  /// How often `name`'s current value is read in `frame` after the current statement.
  int readsAhead(size_t frame, const std::string& name) const;
  /// Whether the innermost current statement is a bare call of `fn` (`tl.store(...)`).
  bool currentIsCallOf(const std::string& fn) const;

 private:
  struct Pos {
    const nlohmann::json* body;
    size_t index;
    size_t frame;
  };
  struct Mentions {
    std::map<std::string, int> any;    // every occurrence of the name
    std::map<std::string, int> reads;  // loads (and augmented-assignment targets)
  };
  const Mentions& mentions(const nlohmann::json& stmt) const;
  /// Whether `stmt` is a plain assignment of a new value to `name`.
  static bool assignsName(const nlohmann::json& stmt, const std::string& name);
  template <class F>
  void forEachAhead(size_t frame, bool pastCurrent, F&& f) const;

  std::vector<Pos> stack_;
  mutable std::map<const nlohmann::json*, Mentions> cache_;
};

/// Keeps a Lookahead's enter/leave paired when a statement throws (early returns do).
class LookaheadScope {
 public:
  LookaheadScope(Lookahead& l, const nlohmann::json& body, size_t frame) : l_(l) {
    l_.enter(body, frame);
  }
  ~LookaheadScope() { l_.leave(); }
  LookaheadScope(const LookaheadScope&) = delete;
  LookaheadScope& operator=(const LookaheadScope&) = delete;

 private:
  Lookahead& l_;
};

}  // namespace crucible::tcl
