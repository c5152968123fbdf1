#include "core/kernel_synth/pointwise_expr.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace crucible::kernel_synth {

using nlohmann::json;

std::string floatLiteral(double x) {
  if (std::isinf(x)) return x > 0 ? "float('inf')" : "float('-inf')";
  if (std::isnan(x)) return "float('nan')";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

namespace {

double number(const json& attrs, const char* key, double fallback) {
  const json& v = attrs.value(key, json());
  return v.is_number() ? v.get<double>() : fallback;
}

std::string tanhOf(const std::string& x) {
  return "(2.0 * tl.sigmoid(2.0 * (" + x + ")) - 1.0)";
}

}  // namespace

namespace {

/// One-operand ops whose form needs nothing but the operand.
std::optional<std::string> plainUnaryExpr(const std::string& op,
                                          const std::vector<std::string>& a) {
  auto x = [&](std::size_t i) { return "(" + a.at(i) + ")"; };
  if (op == "relu") return "tl.maximum(" + a[0] + ", 0.0)";
  if (op == "sigmoid") return "tl.sigmoid(" + a[0] + ")";
  if (op == "tanh") return tanhOf(a[0]);
  if (op == "exp") return "tl.exp(" + a[0] + ")";
  if (op == "log") return "tl.log(" + a[0] + ")";
  if (op == "sqrt") return "tl.sqrt(" + a[0] + ")";
  if (op == "rsqrt") return "tl.rsqrt(" + a[0] + ")";
  if (op == "abs") return "tl.abs(" + a[0] + ")";
  if (op == "neg") return "-" + x(0);
  if (op == "sin") return "tl.sin(" + a[0] + ")";
  if (op == "cos") return "tl.cos(" + a[0] + ")";
  if (op == "erf") return "tl.erf(" + a[0] + ")";
  if (op == "log1p") return "tl.log(1.0 + " + x(0) + ")";
  if (op == "expm1") return "(tl.exp(" + a[0] + ") - 1.0)";
  if (op == "square") return x(0) + " * " + x(0);
  if (op == "reciprocal") return "1.0 / " + x(0);
  if (op == "identity" || op == "to_dtype") return a[0];
  if (op == "silu") return x(0) + " * tl.sigmoid(" + a[0] + ")";
  if (op == "hardswish") {
    return x(0) + " * tl.minimum(tl.maximum(" + x(0) + " + 3.0, 0.0), 6.0) / 6.0";
  }
  if (op == "hardsigmoid") return "tl.minimum(tl.maximum(" + x(0) + " + 3.0, 0.0), 6.0) / 6.0";
  if (op == "relu6") return "tl.minimum(tl.maximum(" + a[0] + ", 0.0), 6.0)";
  if (op == "softsign") return x(0) + " / (1.0 + tl.abs(" + a[0] + "))";
  if (op == "tanhshrink") return x(0) + " - " + tanhOf(a[0]);
  // log(sigmoid(x)) without overflow: min(x, 0) - log(1 + exp(-|x|)).
  if (op == "logsigmoid") {
    return "(tl.minimum(" + a[0] + ", 0.0) - tl.log(1.0 + tl.exp(-tl.abs(" + a[0] + "))))";
  }
  // x * tanh(softplus(x)), softplus with torch's threshold of 20.
  if (op == "mish") {
    return x(0) + " * " +
           tanhOf("tl.where(" + x(0) + " > 20.0, " + x(0) + ", tl.log(1.0 + tl.exp(tl.minimum(" +
                  a[0] + ", 20.0))))");
  }
  if (op == "selu") {
    return "1.0507009873554805 * tl.where(" + x(0) + " > 0.0, " + x(0) +
           ", 1.6732632423543772 * (tl.exp(tl.minimum(" + a[0] + ", 0.0)) - 1.0))";
  }
  return std::nullopt;
}

bool isAttributedUnary(const std::string& op) {
  for (const char* name : {"gelu", "leaky_relu", "elu", "softplus", "hardtanh", "clamp", "pow",
                           "hardshrink", "softshrink", "celu"}) {
    if (op == name) return true;
  }
  return false;
}

/// One-operand ops shaped by their attributes (slopes, bounds, exponents); nullopt and `why`
/// where an attribute has no lowering.
std::optional<std::string> attributedUnaryExpr(const std::string& op, const json& at,
                                               const std::vector<std::string>& a,
                                               std::string& why) {
  auto x = [&](std::size_t i) { return "(" + a.at(i) + ")"; };
  if (op == "gelu") {
    const std::string approx = at.value("approximate", std::string("none"));
    if (approx == "tanh") {
      return "0.5 * " + x(0) + " * (1.0 + " +
             tanhOf("0.7978845608028654 * (" + x(0) + " + 0.044715 * " + x(0) + " * " + x(0) +
                    " * " + x(0) + ")") +
             ")";
    }
    return "0.5 * " + x(0) + " * (1.0 + tl.erf(" + x(0) + " * 0.7071067811865476))";
  }
  if (op == "leaky_relu") {
    return "tl.where(" + x(0) + " > 0.0, " + x(0) + ", " + x(0) + " * " +
           floatLiteral(number(at, "negative_slope", 0.01)) + ")";
  }
  if (op == "elu") {
    return "tl.where(" + x(0) + " > 0.0, " + x(0) + ", " + floatLiteral(number(at, "alpha", 1.0)) +
           " * (tl.exp(" + a[0] + ") - 1.0))";
  }
  if (op == "softplus") {
    const std::string beta = floatLiteral(number(at, "beta", 1.0));
    const std::string bx = "(" + x(0) + " * " + beta + ")";
    // torch: x where beta * x > threshold; log(1 + exp(bx)) / beta elsewhere.
    return "tl.where(" + bx + " > " + floatLiteral(number(at, "threshold", 20.0)) + ", " + x(0) +
           ", tl.log(1.0 + tl.exp(tl.minimum(" + bx + ", 20.0))) / " + beta + ")";
  }
  if (op == "hardshrink") {
    return "tl.where(tl.abs(" + a[0] + ") > " + floatLiteral(number(at, "lambd", 0.5)) + ", " +
           x(0) + ", 0.0)";
  }
  if (op == "softshrink") {
    const std::string l = floatLiteral(number(at, "lambd", 0.5));
    return "tl.where(" + x(0) + " > " + l + ", " + x(0) + " - " + l + ", tl.where(" + x(0) +
           " < -" + l + ", " + x(0) + " + " + l + ", 0.0))";
  }
  if (op == "celu") {
    const std::string alpha = floatLiteral(number(at, "alpha", 1.0));
    return "tl.where(" + x(0) + " > 0.0, " + x(0) + ", " + alpha + " * (tl.exp(tl.minimum(" + a[0] +
           ", 0.0) / " + alpha + ") - 1.0))";
  }
  if (op == "hardtanh" || op == "clamp") {
    const bool ht = op == "hardtanh";
    const json lo = at.value(ht ? "min_val" : "min", ht ? json(-1.0) : json());
    const json hi = at.value(ht ? "max_val" : "max", ht ? json(1.0) : json());
    if ((!lo.is_null() && !lo.is_number()) || (!hi.is_null() && !hi.is_number())) {
      why = op + " with tensor bounds";
      return std::nullopt;
    }
    std::string e = a[0];
    if (lo.is_number()) e = "tl.maximum(" + e + ", " + floatLiteral(lo.get<double>()) + ")";
    if (hi.is_number()) e = "tl.minimum(" + e + ", " + floatLiteral(hi.get<double>()) + ")";
    return e;
  }
  if (op == "pow") {
    const json& e = at.value("exponent", json());
    if (!e.is_number()) {
      why = "pow with a tensor exponent";
      return std::nullopt;
    }
    const double p = e.get<double>();
    if (p == 0.5) return "tl.sqrt(" + a[0] + ")";
    if (p == -0.5) return "tl.rsqrt(" + a[0] + ")";
    if (p == std::floor(p) && p >= 1 && p <= 8) {
      std::string s = x(0);
      for (int i = 1; i < static_cast<int>(p); ++i) s += " * " + x(0);
      return s;
    }
    if (p == -1.0) return "1.0 / " + x(0);
    // Any other exponent as exp(p log x): torch's value for x > 0, and for x = 0 where p > 0;
    // NaN for x < 0, where a non-integer power is NaN in torch too.
    if (p != std::floor(p)) {
      return "tl.exp(" + floatLiteral(p) + " * tl.log(" + a[0] + "))";
    }
    why = "pow with exponent " + floatLiteral(p);
    return std::nullopt;
  }
  why = "no pointwise lowering for " + op;
  return std::nullopt;
}

/// Two-operand ops (and batch norm's five).
std::optional<std::string> binaryExpr(const std::string& op, const json& at,
                                      const std::vector<std::string>& a, std::string& why) {
  auto x = [&](std::size_t i) { return "(" + a.at(i) + ")"; };
  if (op == "add" || op == "sub") {
    const double alpha = number(at, "alpha", 1.0);
    const std::string other = alpha == 1.0 ? x(1) : "(" + floatLiteral(alpha) + " * " + x(1) + ")";
    return x(0) + (op == "add" ? " + " : " - ") + other;
  }
  if (op == "mul") return x(0) + " * " + x(1);
  static const std::map<std::string, std::string> comparisons = {
      {"eq", " == "}, {"ne", " != "}, {"gt", " > "}, {"ge", " >= "}, {"lt", " < "}, {"le", " <= "}};
  if (auto c = comparisons.find(op); c != comparisons.end())
    return "(" + x(0) + c->second + x(1) + ")";
  if (op == "addcmul" && a.size() >= 3) {  // its `value` arrives as a fourth operand
    const std::string value = a.size() > 3 && a[3] != "None" ? x(3) : "1.0";
    return x(0) + " + " + value + " * " + x(1) + " * " + x(2);
  }
  if (op == "lerp" && a.size() == 3) {  // torch's two-sided form, exact at both ends
    const std::string d = "(" + x(1) + " - " + x(0) + ")";
    return "tl.where(tl.abs(" + a[2] + ") < 0.5, " + x(0) + " + " + x(2) + " * " + d + ", " + x(1) +
           " - " + d + " * (1.0 - " + x(2) + "))";
  }
  if (op == "where" && a.size() == 3) return "tl.where(" + a[0] + ", " + a[1] + ", " + a[2] + ")";
  if (op == "masked_fill" && a.size() == 3) {
    return "tl.where(" + a[1] + ", " + a[2] + ", " + a[0] + ")";
  }
  if (op == "div") return x(0) + " / " + x(1);
  if (op == "maximum") return "tl.maximum(" + a[0] + ", " + a[1] + ")";
  if (op == "minimum") return "tl.minimum(" + a[0] + ", " + a[1] + ")";
  if (op == "l1_loss") return "tl.abs(" + x(0) + " - " + x(1) + ")";
  if (op == "binary_cross_entropy_with_logits" || op == "binary_cross_entropy") {
    for (std::size_t i = 2; i < a.size(); ++i) {
      if (a[i] != "None") {
        why = op + " with a weight or pos_weight";
        return std::nullopt;
      }
    }
    if (op == "binary_cross_entropy") {  // torch clamps each log at -100
      return "-(" + x(1) + " * tl.maximum(tl.log(" + a[0] + "), -100.0) + (1.0 - " + x(1) +
             ") * tl.maximum(tl.log(1.0 - " + x(0) + "), -100.0))";
    }
    // max(x, 0) - x y + log(1 + exp(-|x|)): no overflow for large |x|
    return "tl.maximum(" + a[0] + ", 0.0) - " + x(0) + " * " + x(1) +
           " + tl.log(1.0 + tl.exp(-tl.abs(" + a[0] + ")))";
  }
  if (op == "huber_loss") {
    const std::string delta = floatLiteral(number(at, "delta", 1.0));
    const std::string d = "tl.abs(" + x(0) + " - " + x(1) + ")";
    return "tl.where(" + d + " < " + delta + ", 0.5 * " + d + " * " + d + ", " + delta + " * (" +
           d + " - 0.5 * " + delta + "))";
  }
  if (op == "mse_loss") return "(" + x(0) + " - " + x(1) + ") * (" + x(0) + " - " + x(1) + ")";
  if (op == "smooth_l1_loss") {
    const std::string beta = floatLiteral(number(at, "beta", 1.0));
    const std::string d = "tl.abs(" + x(0) + " - " + x(1) + ")";
    return "tl.where(" + d + " < " + beta + ", 0.5 * " + d + " * " + d + " / " + beta + ", " + d +
           " - 0.5 * " + beta + ")";
  }
  if (op == "kl_div") {
    if (at.value("log_target", json(false)) == json(true)) {
      return "tl.exp(" + a[1] + ") * (" + x(1) + " - " + x(0) + ")";
    }
    // xlogy: 0 where the target is 0.
    return "tl.where(" + x(1) + " > 0.0, " + x(1) + " * (tl.log(tl.maximum(" + a[1] +
           ", 1e-38)) - " + x(0) + "), 0.0)";
  }
  if (op == "batch_norm" && a.size() >= 5) {  // eval: running statistics
    std::string e = "(" + x(0) + " - " + x(1) + ") * tl.rsqrt(" + x(2) + " + " +
                    floatLiteral(number(at, "eps", 1e-5)) + ")";
    if (a[3] != "None") e = "(" + e + ") * " + x(3);
    if (a[4] != "None") e = "(" + e + ") + " + x(4);
    return e;
  }
  why = "no pointwise lowering for " + op;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> pointwiseExpr(const OpNode& n, const std::vector<std::string>& a,
                                         std::string& why) {
  const std::string& op = n.op;
  if (op == "to_dtype" && !a.empty()) {
    // Chains compute in fp32; a half-precision value the reference widens to fp32 was rounded
    // to its own precision first (a product's output, say), so it is rounded here too.
    const std::string from = n.attrs.value("from", std::string());
    if ((from == "float16" || from == "bfloat16") && n.dtype == "float32") {
      return "(" + a[0] + ").to(tl." + from + ").to(tl.float32)";
    }
  }
  if (op == "full") {  // one value everywhere; a store broadcasts it over the block
    const json& v = n.attrs.value("value", json());
    if (!v.is_number()) {
      why = "a fill with a value that is not a number";
      return std::nullopt;
    }
    return floatLiteral(v.get<double>());
  }
  if (a.empty()) {
    why = op + " without operands";
    return std::nullopt;
  }
  if (auto e = plainUnaryExpr(op, a)) return e;
  if (isAttributedUnary(op)) return attributedUnaryExpr(op, n.attrs, a, why);
  if (op == "logical_not") return "(" + a[0] + " == 0)";
  if (a.size() < 2) {
    why = op + " needs two operands";
    return std::nullopt;
  }
  return binaryExpr(op, n.attrs, a, why);
}

}  // namespace crucible::kernel_synth
