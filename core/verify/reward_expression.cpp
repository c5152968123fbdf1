#include "core/verify/reward_expression.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace crucible {

namespace {

std::string formatNumber(double value) {
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%g", value);
  return buffer.data();
}

std::string atColumn(std::size_t column) {
  return " at column " + std::to_string(column);
}

bool isIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isIdentifierChar(char c) {
  return isIdentifierStart(c) || isDigit(c);
}

enum class TokenType { Number, Identifier, Operator, End };

struct Token {
  TokenType type = TokenType::End;
  std::string_view text;
  double number = 0;
  std::size_t column = 0;  // 1-based

  bool is(std::string_view op) const { return type == TokenType::Operator && text == op; }
  std::string describe() const {
    return type == TokenType::End ? "end of expression" : "'" + std::string(text) + "'";
  }
};

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const std::size_t column = i + 1;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (isDigit(c) || (c == '.' && i + 1 < text.size() && isDigit(text[i + 1]))) {
      std::size_t end = i;
      while (end < text.size() && isDigit(text[end])) ++end;
      if (end < text.size() && text[end] == '.') {
        ++end;
        while (end < text.size() && isDigit(text[end])) ++end;
      }
      if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
        std::size_t exponent = end + 1;
        if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
        if (exponent < text.size() && isDigit(text[exponent])) {
          end = exponent;
          while (end < text.size() && isDigit(text[end])) ++end;
        }
      }
      double value = 0;
      const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + end, value);
      if (ec != std::errc() || ptr != text.data() + end || !std::isfinite(value) ||
          (end < text.size() && (isIdentifierChar(text[end]) || text[end] == '.'))) {
        std::size_t bad = end;
        while (bad < text.size() && (isIdentifierChar(text[bad]) || text[bad] == '.')) ++bad;
        throw ExpressionSyntaxError(
            "malformed number '" + std::string(text.substr(i, bad - i)) + "'" + atColumn(column),
            column);
      }
      tokens.push_back({TokenType::Number, text.substr(i, end - i), value, column});
      i = end;
      continue;
    }
    if (isIdentifierStart(c)) {
      std::size_t end = i + 1;
      while (end < text.size() && isIdentifierChar(text[end])) ++end;
      tokens.push_back({TokenType::Identifier, text.substr(i, end - i), 0, column});
      i = end;
      continue;
    }
    static constexpr std::array<std::string_view, 13> kOperators = {
        "<=", ">=", "==", "!=", "<", ">", "+", "-", "*", "/", "(", ")", ","};
    bool matched = false;
    for (std::string_view op : kOperators) {
      if (text.substr(i, op.size()) == op) {
        tokens.push_back({TokenType::Operator, text.substr(i, op.size()), 0, column});
        i += op.size();
        matched = true;
        break;
      }
    }
    if (matched) continue;
    std::string message = "unexpected character '" + std::string(1, c) + "'" + atColumn(column);
    if (c == '=') message += " (did you mean '=='?)";
    throw ExpressionSyntaxError(message, column);
  }
  tokens.push_back({TokenType::End, {}, 0, text.size() + 1});
  return tokens;
}

constexpr std::size_t kMaxDepth = 200;

}  // namespace

const std::vector<std::string_view>& RewardExpression::functionNames() {
  static const std::vector<std::string_view> names = {"min", "max", "log",  "exp", "sqrt",
                                                      "abs", "pow", "clip", "if"};
  return names;
}

class RewardExpression::Parser {
 public:
  Parser(RewardExpression& out, std::string_view text, const Resolver& resolve)
      : out_(out), tokens_(tokenize(text)), resolve_(resolve) {}

  void run() {
    if (peek().type == TokenType::End) throw ExpressionSyntaxError("empty expression", 1);
    out_.root_ = parseComparison(0);
    if (peek().type != TokenType::End) unexpected(peek());
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& take() { return tokens_[pos_++]; }

  [[noreturn]] static void unexpected(const Token& token) {
    throw ExpressionSyntaxError("unexpected " + token.describe() + atColumn(token.column),
                                token.column);
  }
  void expect(std::string_view op, std::string_view what) {
    if (!peek().is(op)) {
      throw ExpressionSyntaxError("expected " + std::string(what) + " but found " +
                                      peek().describe() + atColumn(peek().column),
                                  peek().column);
    }
    ++pos_;
  }

  std::uint32_t add(Kind kind, std::size_t column, const std::vector<std::uint32_t>& args = {},
                    double number = 0, std::size_t slot = 0) {
    Node node;
    node.kind = kind;
    node.number = number;
    node.slot = slot;
    node.column = column;
    node.firstArg = static_cast<std::uint32_t>(out_.args_.size());
    node.argCount = static_cast<std::uint32_t>(args.size());
    out_.args_.insert(out_.args_.end(), args.begin(), args.end());
    out_.nodes_.push_back(node);
    return static_cast<std::uint32_t>(out_.nodes_.size() - 1);
  }

  static std::optional<Kind> comparisonKind(const Token& token) {
    if (token.type != TokenType::Operator) return std::nullopt;
    if (token.text == "<") return Kind::Less;
    if (token.text == "<=") return Kind::LessEqual;
    if (token.text == ">") return Kind::Greater;
    if (token.text == ">=") return Kind::GreaterEqual;
    if (token.text == "==") return Kind::Equal;
    if (token.text == "!=") return Kind::NotEqual;
    return std::nullopt;
  }

  std::uint32_t parseComparison(std::size_t depth) {
    if (depth > kMaxDepth) {
      throw ExpressionSyntaxError("expression nested too deeply" + atColumn(peek().column),
                                  peek().column);
    }
    std::uint32_t left = parseAdditive(depth);
    if (auto kind = comparisonKind(peek())) {
      const Token& op = take();
      std::uint32_t right = parseAdditive(depth);
      left = add(*kind, op.column, {left, right});
      if (comparisonKind(peek())) {
        throw ExpressionSyntaxError(
            "comparisons do not chain; add parentheses" + atColumn(peek().column), peek().column);
      }
    }
    return left;
  }

  std::uint32_t parseAdditive(std::size_t depth) {
    std::uint32_t left = parseTerm(depth);
    while (peek().is("+") || peek().is("-")) {
      const Token& op = take();
      std::uint32_t right = parseTerm(depth);
      left = add(op.text == "+" ? Kind::Add : Kind::Subtract, op.column, {left, right});
    }
    return left;
  }

  std::uint32_t parseTerm(std::size_t depth) {
    std::uint32_t left = parseUnary(depth);
    while (peek().is("*") || peek().is("/")) {
      const Token& op = take();
      std::uint32_t right = parseUnary(depth);
      left = add(op.text == "*" ? Kind::Multiply : Kind::Divide, op.column, {left, right});
    }
    return left;
  }

  std::uint32_t parseUnary(std::size_t depth) {
    if (depth > kMaxDepth) {
      throw ExpressionSyntaxError("expression nested too deeply" + atColumn(peek().column),
                                  peek().column);
    }
    if (peek().is("-")) {
      const Token& op = take();
      return add(Kind::Negate, op.column, {parseUnary(depth + 1)});
    }
    if (peek().is("+")) {
      take();
      return parseUnary(depth + 1);
    }
    return parsePrimary(depth);
  }

  std::uint32_t parsePrimary(std::size_t depth) {
    const Token& token = take();
    switch (token.type) {
      case TokenType::Number:
        return add(Kind::Number, token.column, {}, token.number);
      case TokenType::Identifier:
        return peek().is("(") ? parseCall(token, depth) : parseIdentifier(token);
      case TokenType::Operator:
        if (token.is("(")) {
          std::uint32_t inner = parseComparison(depth + 1);
          expect(")", "')'");
          return inner;
        }
        unexpected(token);
      case TokenType::End:
        unexpected(token);
    }
    unexpected(token);
  }

  std::uint32_t parseIdentifier(const Token& token) {
    if (auto slot = resolve_(token.text)) {
      out_.slotsNeeded_ = std::max(out_.slotsNeeded_, *slot + 1);
      return add(Kind::Slot, token.column, {}, 0, *slot);
    }
    const auto& functions = functionNames();
    if (std::find(functions.begin(), functions.end(), token.text) != functions.end()) {
      throw ExpressionSyntaxError("'" + std::string(token.text) + "' is a function; call it as " +
                                      std::string(token.text) + "(...)" + atColumn(token.column),
                                  token.column);
    }
    throw ExpressionSyntaxError(
        "unknown identifier '" + std::string(token.text) + "'" + atColumn(token.column),
        token.column);
  }

  std::uint32_t parseCall(const Token& name, std::size_t depth) {
    struct Entry {
      std::string_view name;
      Kind kind;
      std::size_t minArgs, maxArgs;  // maxArgs 0: unbounded
    };
    static constexpr std::array<Entry, 9> kFunctions = {{
        {"min", Kind::Min, 2, 0},
        {"max", Kind::Max, 2, 0},
        {"log", Kind::Log, 1, 1},
        {"exp", Kind::Exp, 1, 1},
        {"sqrt", Kind::Sqrt, 1, 1},
        {"abs", Kind::Abs, 1, 1},
        {"pow", Kind::Pow, 2, 2},
        {"clip", Kind::Clip, 3, 3},
        {"if", Kind::If, 3, 3},
    }};
    const auto* entry = std::find_if(kFunctions.begin(), kFunctions.end(),
                                     [&](const Entry& e) { return e.name == name.text; });
    if (entry == kFunctions.end()) {
      std::string message = resolve_(name.text)
                                ? "'" + std::string(name.text) + "' is not a function"
                                : "unknown function '" + std::string(name.text) + "'";
      throw ExpressionSyntaxError(message + atColumn(name.column), name.column);
    }
    take();  // "("
    std::vector<std::uint32_t> args;
    if (!peek().is(")")) {
      args.push_back(parseComparison(depth + 1));
      while (peek().is(",")) {
        take();
        args.push_back(parseComparison(depth + 1));
      }
    }
    expect(")", "',' or ')'");
    const bool tooFew = args.size() < entry->minArgs;
    const bool tooMany = entry->maxArgs != 0 && args.size() > entry->maxArgs;
    if (tooFew || tooMany) {
      std::string expected = entry->maxArgs == 0 ? "at least " + std::to_string(entry->minArgs)
                                                 : std::to_string(entry->minArgs);
      const bool plural = entry->maxArgs != 1 || entry->minArgs != 1;
      throw ExpressionSyntaxError("'" + std::string(entry->name) + "' takes " + expected +
                                      (plural ? " arguments" : " argument") + ", got " +
                                      std::to_string(args.size()) + atColumn(name.column),
                                  name.column);
    }
    return add(entry->kind, name.column, args);
  }

  RewardExpression& out_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const Resolver& resolve_;
};

RewardExpression RewardExpression::parse(std::string_view text, const Resolver& resolve) {
  RewardExpression expression;
  expression.text_ = std::string(text);
  // The parser keeps views into the text it tokenizes; tokenize the copy we own.
  Parser(expression, expression.text_, resolve).run();
  return expression;
}

double RewardExpression::evaluate(std::span<const double> slots) const {
  if (nodes_.empty()) throw std::logic_error("evaluating an expression that was never parsed");
  if (slots.size() < slotsNeeded_) {
    throw std::invalid_argument("expression '" + text_ + "' reads slot " +
                                std::to_string(slotsNeeded_ - 1) + " but only " +
                                std::to_string(slots.size()) + " were given");
  }
  return eval(root_, slots);
}

double RewardExpression::eval(std::uint32_t index, std::span<const double> slots) const {
  const Node& node = nodes_[index];
  auto arg = [&](std::uint32_t i) { return eval(args_[node.firstArg + i], slots); };
  auto fail = [&](const std::string& what, const std::string& why = "") -> double {
    throw ExpressionDomainError(
        what + atColumn(node.column) + (why.empty() ? "" : " (" + why + ")"), node.column);
  };
  auto finite = [&](double value, std::string_view what) {
    if (!std::isfinite(value)) fail("the result of " + std::string(what) + " is not finite");
    return value;
  };

  switch (node.kind) {
    case Kind::Number:
      return node.number;
    case Kind::Slot: {
      const double value = slots[node.slot];
      if (!std::isfinite(value)) fail("a value that is not finite was read");
      return value;
    }
    case Kind::Negate:
      return -arg(0);
    case Kind::Add:
      return finite(arg(0) + arg(1), "'+'");
    case Kind::Subtract:
      return finite(arg(0) - arg(1), "'-'");
    case Kind::Multiply:
      return finite(arg(0) * arg(1), "'*'");
    case Kind::Divide: {
      const double numerator = arg(0), denominator = arg(1);
      if (denominator == 0) fail("division by zero");
      return finite(numerator / denominator, "'/'");
    }
    case Kind::Less:
      return arg(0) < arg(1) ? 1.0 : 0.0;
    case Kind::LessEqual:
      return arg(0) <= arg(1) ? 1.0 : 0.0;
    case Kind::Greater:
      return arg(0) > arg(1) ? 1.0 : 0.0;
    case Kind::GreaterEqual:
      return arg(0) >= arg(1) ? 1.0 : 0.0;
    case Kind::Equal:
      return arg(0) == arg(1) ? 1.0 : 0.0;
    case Kind::NotEqual:
      return arg(0) != arg(1) ? 1.0 : 0.0;
    case Kind::Min:
    case Kind::Max: {
      double result = arg(0);
      for (std::uint32_t i = 1; i < node.argCount; ++i) {
        const double value = arg(i);
        result = node.kind == Kind::Min ? std::min(result, value) : std::max(result, value);
      }
      return result;
    }
    case Kind::Log: {
      const double x = arg(0);
      if (x <= 0) fail("log of " + formatNumber(x), "the argument must be > 0");
      return std::log(x);
    }
    case Kind::Exp:
      return finite(std::exp(arg(0)), "exp");
    case Kind::Sqrt: {
      const double x = arg(0);
      if (x < 0) fail("sqrt of " + formatNumber(x), "the argument must be >= 0");
      return std::sqrt(x);
    }
    case Kind::Abs:
      return std::abs(arg(0));
    case Kind::Pow: {
      const double x = arg(0), y = arg(1);
      const double result = std::pow(x, y);
      if (!std::isfinite(result)) {
        fail("pow(" + formatNumber(x) + ", " + formatNumber(y) + ") is undefined or not finite");
      }
      return result;
    }
    case Kind::Clip: {
      const double x = arg(0), lo = arg(1), hi = arg(2);
      if (lo > hi) fail("clip with lo " + formatNumber(lo) + " > hi " + formatNumber(hi));
      return std::clamp(x, lo, hi);
    }
    case Kind::If:
      return arg(0) != 0 ? arg(1) : arg(2);
  }
  throw std::logic_error("unknown expression node");
}

}  // namespace crucible
