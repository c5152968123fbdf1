#include "core/kernel_synth/row_ops.h"

#include <nlohmann/json.hpp>

#include "core/kernel_synth/lowering_support.h"
#include "core/kernel_synth/pointwise_expr.h"

namespace crucible::kernel_synth {

using nlohmann::json;

namespace {

std::string red(const std::string& fn, const std::string& x, const std::string& fill) {
  return "tl." + fn + "(tl.where(fmask, " + x + ", " + fill + "), axis=1)[:, None]";
}

double attrNumber(const OpNode& n, const char* key, double fallback) {
  const json v = n.attrs.value(key, json(fallback));
  return v.is_number() ? v.get<double>() : fallback;
}

bool isNorm(const std::string& op) {
  return op == "layer_norm" || op == "batch_norm" || op == "group_norm" || op == "instance_norm";
}

/// Index of the weight among a norm's inputs: (x, weight, bias) or (x, mean, var, weight, bias).
std::size_t normWeight(const std::string& op) {
  return op == "batch_norm" || op == "instance_norm" ? 3 : 1;
}

}  // namespace

std::optional<NormParts> normParts(const OpNode& n, const std::vector<std::string>& args) {
  if (!isNorm(n.op)) return std::nullopt;
  const std::string v = var(n.name);
  const std::size_t wi = normWeight(n.op);
  const std::string w = wi < args.size() ? args[wi] : "None";
  const std::string bias = wi + 1 < args.size() ? args[wi + 1] : "None";
  std::string e =
      v + "_c * tl.rsqrt(" + v + "_var + " + floatLiteral(attrNumber(n, "eps", 1e-5)) + ")";
  if (w != "None") e = "(" + e + ") * " + w;
  if (bias != "None") e = "(" + e + ") + " + bias;
  return NormParts{args.at(0), std::string(kBody) + v + " = " + e + origin(n)};
}

bool rowOpReads(const OpNode& node, std::size_t input) {
  if (node.op == "nll_loss") return input < 2;  // the weight is absent (partition refuses it)
  return !((node.op == "batch_norm" || node.op == "instance_norm") && (input == 1 || input == 2));
}

bool rowOpChannelOperand(const OpNode& node, std::size_t input) {
  return input > 0 &&
         (node.op == "batch_norm" || node.op == "instance_norm" || node.op == "group_norm");
}

std::optional<std::string> rowOpLines(const OpNode& n, const std::vector<std::string>& args,
                                      std::string& why) {
  const std::string v = var(n.name);
  const std::string where = origin(n);
  const std::string& x = args.at(0);
  const std::string& op = n.op;
  const std::string b = kBody;
  if (op == "sum") return b + v + " = " + red("sum", x, "0.0") + where;
  if (op == "mean") return b + v + " = " + red("sum", x, "0.0") + " / R" + where;
  if (op == "amax" || op == "max") return b + v + " = " + red("max", x, "float('-inf')") + where;
  if (op == "amin" || op == "min") return b + v + " = " + red("min", x, "float('inf')") + where;
  if (op == "argmax" || op == "argmin") {
    const bool mx = op == "argmax";
    return b + v + " = " + red(mx ? "argmax" : "argmin", x, mx ? "float('-inf')" : "float('inf')") +
           where;
  }
  if (op == "var") {
    const bool unbiased = n.attrs.value("unbiased", json(true)) == json(true);
    return b + v + "_c = tl.where(fmask, " + x + " - " + red("sum", x, "0.0") + " / R, 0.0)\n" + b +
           v + " = tl.sum(" + v + "_c * " + v + "_c, axis=1)[:, None] / " +
           (unbiased ? "(R - 1)" : "R") + where;
  }
  if (op == "logsumexp" || op == "softmax" || op == "log_softmax" || op == "cross_entropy") {
    std::string s = b + v + "_max = " + red("max", x, "float('-inf')") + "\n" + b + v +
                    "_exp = tl.exp(" + x + " - " + v + "_max)\n" + b + v +
                    "_sum = " + red("sum", v + "_exp", "0.0") + "\n";
    if (op == "logsumexp") return s + b + v + " = " + v + "_max + tl.log(" + v + "_sum)" + where;
    if (op == "softmax") return s + b + v + " = " + v + "_exp / " + v + "_sum" + where;
    if (op == "log_softmax")
      return s + b + v + " = " + x + " - " + v + "_max - tl.log(" + v + "_sum)" + where;
    // cross_entropy: -log p[target], the target's logit picked out of the row by its class;
    // with label smoothing e, (1 - e) of that and e of the mean of -log p over the classes.
    const json& smoothing = n.attrs.value("label_smoothing", json(0.0));
    const double e = smoothing.is_number() ? smoothing.get<double>() : 0.0;
    std::string pick = v + "_pick";
    if (e != 0.0) {
      pick = "(" + floatLiteral(1.0 - e) + " * " + v + "_pick + " + floatLiteral(e) + " * " +
             red("sum", x, "0.0") + " / R)";
    }
    return s + b + v +
           "_pick = " + red("sum", "tl.where(cols == " + args.at(1) + ", " + x + ", 0.0)", "0.0") +
           "\n" + b + v + " = " + v + "_max + tl.log(" + v + "_sum) - " + pick + where;
  }
  if (op == "nll_loss") {  // -input[target]: the target's entry picked out of the row
    return b + v + " = -" +
           red("sum", "tl.where(cols == " + args.at(1) + ", " + x + ", 0.0)", "0.0") + where;
  }
  if (const auto norm = normParts(n, args)) {
    // Statistics of the row (biased variance, as every torch norm uses), then the affine part.
    return b + v + "_mean = " + red("sum", x, "0.0") + " / R\n" + b + v + "_c = tl.where(fmask, " +
           x + " - " + v + "_mean, 0.0)\n" + b + v + "_var = tl.sum(" + v + "_c * " + v +
           "_c, axis=1)[:, None] / R\n" + norm->apply;
  }
  if (op == "cumsum") {
    // In fp64: a scan adds in another order than torch's running sum, and over thousands of
    // elements fp32 rounding alone would leave the 1e-4 tolerance.
    return b + v + " = tl.cumsum(tl.where(fmask, " + x +
           ", 0.0).to(tl.float64), axis=1).to(tl.float32)" + where;
  }
  if (op == "prod") {  // in fp64: a product of thousands of factors drifts in fp32
    return b + v + " = tl.reduce(tl.where(fmask, " + x +
           ", 1.0).to(tl.float64), 1, _multiply)[:, None].to(tl.float32)" + where;
  }
  if (op == "cumprod") {  // in fp64 too: a scan multiplies in another order than torch
    return b + v + " = tl.cumprod(tl.where(fmask, " + x +
           ", 1.0).to(tl.float64), axis=1).to(tl.float32)" + where;
  }
  if (op == "cosine_similarity") {
    const std::string& y = args.at(1);
    const double ceps = attrNumber(n, "eps", 1e-8);
    return b + v + "_dot = " + red("sum", x + " * " + y, "0.0") + "\n" + b + v +
           "_xx = " + red("sum", x + " * " + x, "0.0") + "\n" + b + v +
           "_yy = " + red("sum", y + " * " + y, "0.0") + "\n" + b + v + " = " + v +
           "_dot / tl.sqrt(tl.maximum(" + v + "_xx * " + v + "_yy, " + floatLiteral(ceps * ceps) +
           "))" + where;
  }
  why = "no row lowering for " + op;
  return std::nullopt;
}

}  // namespace crucible::kernel_synth
