#include "core/tcl/lookahead.h"

namespace crucible::tcl {

using nlohmann::json;

void Lookahead::enter(const json& body, size_t frame) {
  stack_.push_back({&body, 0, frame});
}

void Lookahead::leave() {
  stack_.pop_back();
}

void Lookahead::at(size_t index) {
  stack_.back().index = index;
}

const Lookahead::Mentions& Lookahead::mentions(const json& stmt) const {
  auto it = cache_.find(&stmt);
  if (it != cache_.end()) return it->second;
  Mentions out;
  std::vector<const json*> todo{&stmt};
  while (!todo.empty()) {
    const json* n = todo.back();
    todo.pop_back();
    if (n->is_object()) {
      auto t = n->find("_type");
      if (t != n->end() && *t == "Name") {
        std::string id = n->at("id");
        ++out.any[id];
        auto ctx = n->find("ctx");
        if (ctx == n->end() || !ctx->is_object() || ctx->value("_type", "") != "Store")
          ++out.reads[id];
      }
      if (t != n->end() && *t == "AugAssign" && n->at("target").at("_type") == "Name")
        ++out.reads[n->at("target").at("id").get<std::string>()];  // x += ... reads x
      for (const auto& [_, v] : n->items())
        if (v.is_structured()) todo.push_back(&v);
    } else if (n->is_array()) {
      for (const auto& v : *n) todo.push_back(&v);
    }
  }
  return cache_.emplace(&stmt, std::move(out)).first->second;
}

template <class F>
void Lookahead::forEachAhead(size_t frame, bool pastCurrent, F&& f) const {
  for (size_t b = 0; b < stack_.size(); ++b) {
    const Pos& p = stack_[b];
    if (p.frame != frame) continue;
    size_t from = p.index + (pastCurrent && b + 1 == stack_.size() ? 1 : 0);
    for (size_t i = from; i < p.body->size(); ++i) f(mentions((*p.body)[i]));
  }
}

std::set<std::string> Lookahead::namesAhead(size_t frame, bool pastCurrent) const {
  std::set<std::string> names;
  forEachAhead(frame, pastCurrent, [&](const Mentions& m) {
    for (const auto& [n, _] : m.any) names.insert(n);
  });
  return names;
}

const json* Lookahead::current() const {
  return stack_.empty() ? nullptr : &(*stack_.back().body)[stack_.back().index];
}

int Lookahead::mentionsInCurrent(const std::string& name) const {
  const json* st = current();
  if (!st) return 0;
  const auto& any = mentions(*st).any;
  auto it = any.find(name);
  return it == any.end() ? 0 : it->second;
}

std::set<std::string> Lookahead::namesIn(const json& stmt) const {
  std::set<std::string> names;
  for (const auto& [n, _] : mentions(stmt).any) names.insert(n);
  return names;
}

int Lookahead::readsAhead(size_t frame, const std::string& name) const {
  // Statements after the current one in the innermost body, then after the enclosing
  // statements (a read in a later iteration of an enclosing loop, before the name is bound
  // again, is not counted). A read inside a loop counts twice: it happens every iteration. A
  // plain assignment to the name ends what reads this value.
  int count = 0;
  for (size_t b = stack_.size(); b-- > 0;) {
    const Pos& p = stack_[b];
    if (p.frame != frame) continue;
    for (size_t i = p.index + 1; i < p.body->size(); ++i) {
      const json& st = (*p.body)[i];
      const auto& r = mentions(st).reads;
      if (auto it = r.find(name); it != r.end())
        count += it->second * (st.at("_type") == "For" || st.at("_type") == "While" ? 2 : 1);
      if (assignsName(st, name)) return count;
    }
  }
  return count;
}

bool Lookahead::assignsName(const json& stmt, const std::string& name) {
  const std::string& t = stmt.at("_type");
  auto is = [&](const json& target) {
    return target.at("_type") == "Name" && target.at("id") == name;
  };
  if (t == "Assign")
    for (const auto& target : stmt.at("targets"))
      if (is(target)) return true;
  return t == "AnnAssign" && is(stmt.at("target")) && !stmt.at("value").is_null();
}

bool Lookahead::currentIsCallOf(const std::string& fn) const {
  if (stack_.empty()) return false;
  const Pos& p = stack_.back();
  const json& s = (*p.body)[p.index];
  if (s.at("_type") != "Expr" || s.at("value").at("_type") != "Call") return false;
  const json& f = s.at("value").at("func");
  if (f.at("_type") == "Attribute") return f.at("attr") == fn;
  return f.at("_type") == "Name" && f.at("id") == fn;
}

}  // namespace crucible::tcl
