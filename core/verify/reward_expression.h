#pragma once
// The small expression language of reward presets: parsed once into a flat tree, evaluated many
// times over a vector of slot values (variables, params and earlier components).
//
//   expression := additive [ ("<" | "<=" | ">" | ">=" | "==" | "!=") additive ]
//   additive   := term { ("+" | "-") term }
//   term       := unary { ("*" | "/") unary }
//   unary      := ("-" | "+") unary | primary
//   primary    := number | identifier | function "(" expression { "," expression } ")"
//               | "(" expression ")"
//
// Comparisons give 1 or 0 and do not chain. Functions: min(a, b, ...), max(a, b, ...), log(x)
// (natural), exp(x), sqrt(x), abs(x), pow(x, y), clip(x, lo, hi) and if(c, a, b), which
// evaluates only the branch it picks (c != 0 picks a), so `if(speedup > 0, log(speedup), 0)` is
// well defined for every speedup.
//
// Values are always finite. An operation whose result would not be (x / 0, log(x <= 0),
// sqrt(x < 0), pow of a negative base by a fraction, overflow) throws ExpressionDomainError, but
// only when that operation is actually evaluated: the untaken branch of if() never fails.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace crucible {

/// A malformed expression. what() reads "unexpected ')' at column 7"; column() is 1-based.
class ExpressionSyntaxError : public std::invalid_argument {
 public:
  ExpressionSyntaxError(const std::string& message, std::size_t column)
      : std::invalid_argument(message), column_(column) {}
  std::size_t column() const { return column_; }

 private:
  std::size_t column_;
};

/// An evaluation whose value would be undefined or infinite, e.g. "log of 0 at column 12".
class ExpressionDomainError : public std::domain_error {
 public:
  ExpressionDomainError(const std::string& message, std::size_t column)
      : std::domain_error(message), column_(column) {}
  std::size_t column() const { return column_; }

 private:
  std::size_t column_;
};

class RewardExpression {
 public:
  /// Maps an identifier to its slot, or nullopt when the name is not visible.
  using Resolver = std::function<std::optional<std::size_t>(std::string_view)>;

  /// Parses `text`, resolving every identifier through `resolve`; unknown identifiers, unknown
  /// functions and wrong argument counts are syntax errors.
  static RewardExpression parse(std::string_view text, const Resolver& resolve);

  /// The value over `slots` (indexed by what the resolver returned).
  double evaluate(std::span<const double> slots) const;

  const std::string& text() const { return text_; }
  /// The highest slot the expression reads plus one (0 when it reads none).
  std::size_t slotsNeeded() const { return slotsNeeded_; }
  /// The names of the functions the language knows, for messages and documentation.
  static const std::vector<std::string_view>& functionNames();

 private:
  enum class Kind : std::uint8_t {
    Number,
    Slot,
    Negate,
    Add,
    Subtract,
    Multiply,
    Divide,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Equal,
    NotEqual,
    Min,
    Max,
    Log,
    Exp,
    Sqrt,
    Abs,
    Pow,
    Clip,
    If,
  };
  struct Node {
    Kind kind = Kind::Number;
    double number = 0;           // Number
    std::size_t slot = 0;        // Slot
    std::size_t column = 0;      // 1-based, for domain errors
    std::uint32_t firstArg = 0;  // into args_
    std::uint32_t argCount = 0;
  };
  class Parser;

  double eval(std::uint32_t node, std::span<const double> slots) const;

  std::string text_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> args_;  // child node indices, contiguous per node
  std::uint32_t root_ = 0;
  std::size_t slotsNeeded_ = 0;
};

}  // namespace crucible
