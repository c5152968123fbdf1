#include "core/kernel_synth/rewrite_attention.h"

#include <cmath>
#include <limits>
#include <utility>

namespace crucible::kernel_synth {

using nlohmann::json;

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

Shape swappedLast(Shape s) {
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

std::optional<Shape> swappedLast(const std::optional<Shape>& s) {
  return s ? std::optional<Shape>(swappedLast(*s)) : std::nullopt;
}

/// An attention mask: a boolean one keeps the scores where it is true (SDPA's sense) or where
/// it is false (nn.MultiheadAttention's); any other is added to the scores.
struct Mask {
  std::string value;  // empty: none
  bool trueKeeps = true;
};

/// softmax(q k^T * scale [causal] [mask]) v for q (..., L, E), k and v (..., S, E), written as
/// `out` with the given shape.
void attend(GraphBuilder& b, const OpNode& from, const std::string& base, const std::string& q,
            const std::string& k, const std::string& v, double scale, bool causal, const Mask& mask,
            const std::string& out, const Shape& outShape, const std::optional<Shape>& outAlt) {
  const std::string kt =
      b.emit(from, base + "kt", "transpose", {b.ref(k)}, {{"dim0", -2}, {"dim1", -1}},
             swappedLast(b.shapeOf(k)), swappedLast(b.altOf(k)));
  Shape scores = b.shapeOf(q);
  scores.back() = b.shapeOf(k)[b.shapeOf(k).size() - 2];
  std::optional<Shape> scoresAlt = b.altOf(q);
  const auto kAlt = b.altOf(k);
  if (scoresAlt && kAlt) {
    scoresAlt->back() = (*kAlt)[kAlt->size() - 2];
  } else {
    scoresAlt.reset();
  }
  std::string s = b.emit(from, base + "scores", "matmul", {b.ref(q), b.ref(kt)}, json::object(),
                         scores, scoresAlt);
  s = b.op(from, base + "scaled", "mul", {b.ref(s), b.number(scale)});
  if (causal) {
    s = b.op(from, base + "causal", "tril", {b.ref(s)},
             {{"diagonal", 0}, {"fill", kMinusInfinity}});
  }
  if (!mask.value.empty()) {
    const bool boolean = b.dtypeOf(mask.value) == "bool";
    const Operand scoresRef = b.ref(s), minusInf = b.number(kMinusInfinity);
    const std::vector<Operand> inputs =
        !boolean         ? std::vector<Operand>{scoresRef, b.ref(mask.value)}
        : mask.trueKeeps ? std::vector<Operand>{b.ref(mask.value), scoresRef, minusInf}
                         : std::vector<Operand>{b.ref(mask.value), minusInf, scoresRef};
    s = b.emit(from, base + "masked", boolean ? "where" : "add", inputs, json::object(),
               b.shapeOf(s), b.altOf(s));
  }
  const std::string p = b.op(from, base + "weights", "softmax", {b.ref(s)}, {{"dim", -1}});
  b.emit(from, out, "matmul", {b.ref(p), b.ref(v)}, json::object(), outShape, outAlt);
}

/// `shape` with the batch's extent from `alt` (at `from` there, at `to` in shape).
std::optional<Shape> onAltBatch(Shape shape, const std::optional<Shape>& alt, int from, int to) {
  if (!alt) return std::nullopt;
  shape[to] = (*alt)[from];
  return shape;
}

}  // namespace

bool rewriteAttention(GraphBuilder& b, const OpNode& n) {
  if (n.inputs.size() < 3) return false;
  const json dropout = n.attrs.value("dropout_p", json(0.0));
  if (!dropout.is_number() || dropout.get<double>() != 0.0) return false;
  for (int i = 0; i < 3; ++i) {
    if (!n.inputs[i].isRef()) return false;
  }
  const std::string q = n.inputs[0].ref, k = n.inputs[1].ref, v = n.inputs[2].ref;
  if (b.shapeOf(q).size() < 2 || b.shapeOf(k).size() < 2) return false;
  const json scale = n.attrs.value("scale", json());
  const std::string mask = n.inputs.size() > 3 && n.inputs[3].isRef() ? n.inputs[3].ref : "";
  attend(b, n, n.name + "__", q, k, v,
         scale.is_number() ? scale.get<double>()
                           : 1.0 / std::sqrt(static_cast<double>(b.shapeOf(q).back())),
         n.attrs.value("is_causal", false), Mask{mask, true}, n.name, n.shape, n.altShape);
  return true;
}

bool rewriteMultiHeadAttention(GraphBuilder& b, const OpNode& n) {
  // inputs: query, key, value, attn_mask, in_proj_weight, in_proj_bias, out_proj weight and bias
  if (n.inputs.size() != 8 || !n.inputs[4].isRef() || !n.inputs[6].isRef()) return false;
  for (int i = 0; i < 3; ++i) {
    if (!n.inputs[i].isRef() || b.shapeOf(n.inputs[i].ref).size() != 3) return false;
  }
  const json heads = n.attrs.value("num_heads", json());
  const bool batchFirst = n.attrs.value("batch_first", false);
  const Shape qs = b.shapeOf(n.inputs[0].ref);
  const std::int64_t e = qs[2];
  if (!heads.is_number_integer() || heads.get<std::int64_t>() < 1 ||
      e % heads.get<std::int64_t>() != 0) {
    return false;
  }
  const std::int64_t h = heads.get<std::int64_t>(), d = e / h;
  const int batchAt = batchFirst ? 0 : 1, seqAt = batchFirst ? 1 : 0;
  const std::string base = n.name + "__";
  const std::optional<Shape> qAlt = b.altOf(n.inputs[0].ref);

  // q, k, v: the input projection's slices, then the heads as (N, H, L, D)
  const char* parts[] = {"q", "k", "v"};
  std::string projected[3];
  for (int i = 0; i < 3; ++i) {
    const std::string slice = std::to_string(i * e) + ":" + std::to_string((i + 1) * e);
    const std::string p = parts[i];
    const std::string w =
        b.emit(n, base + "w" + p, "index", {n.inputs[4]}, {{"key", slice}}, {e, e}, std::nullopt);
    Operand bias = n.inputs[5];
    if (bias.isRef()) {
      bias = b.ref(
          b.emit(n, base + "b" + p, "index", {n.inputs[5]}, {{"key", slice}}, {e}, std::nullopt));
    }
    const std::string x = n.inputs[i].ref;
    const std::string lin = b.emit(n, base + p + "_proj", "linear", {b.ref(x), b.ref(w), bias},
                                   json::object(), b.shapeOf(x), b.altOf(x));
    const Shape xs = b.shapeOf(x);
    const Shape split = {xs[0], xs[1], h, d};
    const std::string viewed =
        b.emit(n, base + p + "_split", "reshape", {b.ref(lin)}, {{"shape", split}}, split,
               onAltBatch(split, b.altOf(x), batchAt, batchAt));
    const Shape headsShape = {xs[batchAt], h, xs[seqAt], d};
    const std::optional<Shape> headsAlt = onAltBatch(headsShape, b.altOf(x), batchAt, 0);
    projected[i] = batchFirst ? b.emit(n, base + p + "_heads", "transpose", {b.ref(viewed)},
                                       {{"dim0", 1}, {"dim1", 2}}, headsShape, headsAlt)
                              : b.emit(n, base + p + "_heads", "permute", {b.ref(viewed)},
                                       {{"dims", {1, 2, 0, 3}}}, headsShape, headsAlt);
  }
  const std::string mask = n.inputs[3].isRef() ? n.inputs[3].ref : "";
  const Shape perHead = {qs[batchAt], h, qs[seqAt], d};
  attend(b, n, base, projected[0], projected[1], projected[2],
         1.0 / std::sqrt(static_cast<double>(d)), n.attrs.value("is_causal", false),
         Mask{mask, false}, base + "attended", perHead, onAltBatch(perHead, qAlt, batchAt, 0));

  // the heads back side by side in the input's layout, then the output projection
  const Shape joined = {qs[0], qs[1], h, d};
  const std::optional<Shape> joinedAlt = onAltBatch(joined, qAlt, batchAt, batchAt);
  const std::string back = batchFirst
                               ? b.emit(n, base + "merged", "transpose", {b.ref(base + "attended")},
                                        {{"dim0", 1}, {"dim1", 2}}, joined, joinedAlt)
                               : b.emit(n, base + "merged", "permute", {b.ref(base + "attended")},
                                        {{"dims", {2, 0, 1, 3}}}, joined, joinedAlt);
  const std::string flat =
      b.emit(n, base + "flat", "reshape", {b.ref(back)}, {{"shape", qs}}, qs, qAlt);
  b.emit(n, n.name, "linear", {b.ref(flat), n.inputs[6], n.inputs[7]}, json::object(), n.shape,
         n.altShape);
  return true;
}

}  // namespace crucible::kernel_synth
