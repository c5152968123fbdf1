#include "core/generate/prompt_template.h"

#include <algorithm>
#include <cctype>

namespace crucible::generate {

struct PromptTemplate::Node {
  enum class Kind { Text, Variable, Section, Inverted };
  Kind kind = Kind::Text;
  std::string text;  // the text, or the variable's name
  std::vector<std::shared_ptr<const Node>> children;
};

namespace {

using Node = PromptTemplate::Node;
using NodeList = std::vector<std::shared_ptr<const Node>>;

constexpr std::string_view kRoles[] = {"system", "user", "assistant"};

bool blank(std::string_view text) {
  return text.find_first_not_of(" \t\r") == std::string_view::npos;
}

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

bool validName(std::string_view name) {
  if (name.empty() || !(std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// Parses one message's body into a tree of nodes.
class BodyParser {
 public:
  BodyParser(std::string_view body, int firstLine, const std::string& source,
             const std::vector<std::string>& known, std::vector<std::string>& used)
      : body_(body), firstLine_(firstLine), source_(source), known_(known), used_(used) {}

  NodeList parse() {
    struct Open {
      std::shared_ptr<Node> node;
      int line;
    };
    std::vector<Open> stack;
    NodeList root;
    auto current = [&]() -> NodeList& {
      return stack.empty() ? root : stack.back().node->children;
    };
    auto addText = [&](std::size_t from, std::size_t to) {
      if (to > from) {
        auto text = std::make_shared<Node>();
        text->text = std::string(body_.substr(from, to - from));
        current().push_back(text);
      }
    };

    std::size_t cursor = 0;
    while (true) {
      const std::size_t open = body_.find("{{", cursor);
      if (open == std::string_view::npos) break;
      const std::size_t close = body_.find("}}", open + 2);
      const int line = lineAt(open);
      if (close == std::string_view::npos ||
          body_.substr(open, close - open).find('\n') != std::string_view::npos) {
        fail(line, "'{{' without '}}' on the same line");
      }
      std::string_view tag = trimmed(body_.substr(open + 2, close - open - 2));
      const char sigil = tag.empty() ? '\0' : tag[0];
      const bool section = sigil == '#' || sigil == '^' || sigil == '/';
      const std::string name(section ? trimmed(tag.substr(1)) : tag);
      checkName(name, line);

      std::size_t textEnd = open, next = close + 2;
      if (section) {  // a section tag alone on its line takes the line with it
        const std::size_t lineStart =
            body_.rfind('\n', open) == std::string_view::npos ? 0 : body_.rfind('\n', open) + 1;
        std::size_t lineEnd = body_.find('\n', next);
        if (lineEnd == std::string_view::npos) lineEnd = body_.size();
        if (lineStart >= cursor && blank(body_.substr(lineStart, open - lineStart)) &&
            blank(body_.substr(next, lineEnd - next))) {
          textEnd = lineStart;
          next = std::min(lineEnd + 1, body_.size());
        }
      }
      addText(cursor, textEnd);
      cursor = next;

      if (sigil == '/') {
        if (stack.empty()) fail(line, "{{/" + name + "}} closes no section");
        if (stack.back().node->text != name) {
          fail(line, "{{/" + name + "}} closes the section {{" +
                         std::string(stack.back().node->kind == Node::Kind::Section ? "#" : "^") +
                         stack.back().node->text + "}} opened on line " +
                         std::to_string(stack.back().line));
        }
        auto done = stack.back().node;
        stack.pop_back();
        current().push_back(done);
      } else if (section) {
        auto node = std::make_shared<Node>();
        node->kind = sigil == '#' ? Node::Kind::Section : Node::Kind::Inverted;
        node->text = name;
        stack.push_back({node, line});
      } else {
        auto node = std::make_shared<Node>();
        node->kind = Node::Kind::Variable;
        node->text = name;
        current().push_back(node);
      }
    }
    addText(cursor, body_.size());
    if (!stack.empty()) {
      fail(stack.back().line, "the section {{" + stack.back().node->text + "}} is never closed");
    }
    return root;
  }

 private:
  int lineAt(std::size_t offset) const {
    return firstLine_ + static_cast<int>(std::count(body_.begin(), body_.begin() + offset, '\n'));
  }

  [[noreturn]] void fail(int line, const std::string& why) const {
    throw TemplateError(source_ + ":" + std::to_string(line) + ": " + why);
  }

  void checkName(const std::string& name, int line) {
    if (!validName(name)) fail(line, "'" + name + "' is not a variable name");
    if (std::find(known_.begin(), known_.end(), name) == known_.end()) {
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      fail(line, "unknown variable {{" + name + "}} (known: " + list + ")");
    }
    if (std::find(used_.begin(), used_.end(), name) == used_.end()) used_.push_back(name);
  }

  std::string_view body_;
  int firstLine_;
  const std::string& source_;
  const std::vector<std::string>& known_;
  std::vector<std::string>& used_;
};

void renderNodes(const NodeList& nodes, const TemplateVariables& values, std::string& out) {
  for (const auto& node : nodes) {
    const auto found = node->kind == Node::Kind::Text ? values.end() : values.find(node->text);
    const bool present = found != values.end() && !found->second.empty();
    switch (node->kind) {
      case Node::Kind::Text:
        out += node->text;
        break;
      case Node::Kind::Variable:
        if (present) out += found->second;
        break;
      case Node::Kind::Section:
        if (present) renderNodes(node->children, values, out);
        break;
      case Node::Kind::Inverted:
        if (!present) renderNodes(node->children, values, out);
        break;
    }
  }
}

/// Drops blank lines at both ends; keeps one final newline off (messages carry none).
std::string trimBlankLines(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto lineStart = text.rfind('\n', first);
  const std::size_t begin = lineStart == std::string::npos ? 0 : lineStart + 1;
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, last - begin + 1);
}

}  // namespace

PromptTemplate PromptTemplate::parse(std::string_view text, std::string source,
                                     const std::vector<std::string>& knownVariables) {
  PromptTemplate t;
  t.source_ = std::move(source);
  struct Raw {
    std::string role;
    int firstLine;
    std::size_t begin, end;
  };
  std::vector<Raw> raw;
  std::size_t pos = 0;
  int line = 1;
  while (pos <= text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view content = trimmed(text.substr(pos, eol - pos));
    if (content.size() > 4 && content.substr(0, 2) == "<|" &&
        content.substr(content.size() - 2) == "|>") {
      const std::string_view role = content.substr(2, content.size() - 4);
      if (std::find(std::begin(kRoles), std::end(kRoles), role) == std::end(kRoles)) {
        throw TemplateError(t.source_ + ":" + std::to_string(line) + ": unknown role '" +
                            std::string(role) + "' (system, user or assistant)");
      }
      if (!raw.empty()) raw.back().end = pos;
      raw.push_back({std::string(role), line + 1, std::min(eol + 1, text.size()), text.size()});
    }
    if (eol == text.size()) break;
    pos = eol + 1;
    ++line;
  }
  if (raw.empty()) {
    throw TemplateError(t.source_ +
                        ":1: no message: a template needs a line '<|user|>' before its text");
  }
  for (const Raw& r : raw) {
    BodyParser parser(text.substr(r.begin, r.end - r.begin), r.firstLine, t.source_, knownVariables,
                      t.used_);
    t.messages_.push_back({r.role, parser.parse()});
  }
  if (std::none_of(t.messages_.begin(), t.messages_.end(),
                   [](const Message& m) { return m.role == "user"; })) {
    throw TemplateError(t.source_ + ":" + std::to_string(raw.front().firstLine - 1) +
                        ": no <|user|> message");
  }
  return t;
}

ChatPrompt PromptTemplate::render(const TemplateVariables& values) const {
  ChatPrompt prompt;
  for (const Message& m : messages_) {
    std::string out;
    renderNodes(m.body, values, out);
    prompt.push_back({m.role, trimBlankLines(out)});
  }
  return prompt;
}

bool PromptTemplate::uses(std::string_view name) const {
  return std::find(used_.begin(), used_.end(), name) != used_.end();
}

}  // namespace crucible::generate
