// Vector code over a block's last dim (docs/TCL.md, "Vector code"). A store, a reduction along
// the last axis or a materialisation whose last dim is a multiple of 16 runs that dim in chunks
// of 16 lanes: contiguous loads and stores become vload16/vstore16 (vload_half16 for fp16),
// arithmetic runs on float16/int16 values, and a reduction keeps its 16 interleaved partial
// results in one vector. Each chunk first tests its masks (every mask a load or the store
// reads, all lanes true); a chunk where some lane is masked off runs the scalar code, so
// masked lanes are never read or written. Bounds-checked builds stay scalar.

#include <algorithm>
#include <cstdint>

#include "core/tcl/codegen.h"

namespace crucible::tcl {

namespace {

constexpr int64_t kVectorWidth = 16;
const char* kIota = "(int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)";

// fp16/bf16 rounding and conversion of 16 lanes (the scalar ones are in the prelude), and the
// test that a mask (0 or -1 per lane) is true in every lane.
const char* kVectorPrelude = R"CL(inline int tcl_all16(int16 m) {
  const int8 a = m.lo & m.hi;
  const int4 b = a.lo & a.hi;
  const int2 c = b.lo & b.hi;
  return (c.x & c.y) != 0;
}
inline float16 tcl_rnd_f16x16(float16 x) {
  ushort16 h;
  vstore_half16_rte(x, 0, (__private half*)&h);
  return vload_half16(0, (__private const half*)&h);
}
inline float16 tcl_bf16_to_f32x16(ushort16 h) { return as_float16(convert_uint16(h) << 16); }
inline ushort16 tcl_f32_to_bf16x16(float16 x) {
  const uint16 u = as_uint16(x);
  const uint16 r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  return convert_ushort16(select(r, (u >> 16) | 0x40u, isnan(x)));
}
inline float16 tcl_rnd_bf16x16(float16 x) { return tcl_bf16_to_f32x16(tcl_f32_to_bf16x16(x)); }
)CL";

// Compute dtypes the vector code handles: i1 is an int16 mask (0 or -1 per lane).
bool vectorDType(DType t) {
  return t == DType::FP32 || t == DType::FP16 || t == DType::BF16 || t == DType::I32 ||
         t == DType::I64 || t == DType::I1;
}

std::string vtype(DType t, int64_t w = kVectorWidth) {
  return computeCType(t) + (w == 1 ? "" : std::to_string(w));
}

bool isComparison(const std::string& o) {
  return o == "==" || o == "!=" || o == "<" || o == "<=" || o == ">" || o == ">=";
}

// The integer constant `n` is (through broadcasts and dim changes), if it is one.
std::optional<int64_t> constantInt(const NodeP& n) {
  if (n->op == Op::ConstInt) return n->ival;
  if (n->op == Op::Broadcast || n->op == Op::ExpandDims || n->op == Op::Reshape ||
      n->op == Op::Transpose)
    return constantInt(n->ops[0]);
  return std::nullopt;
}

std::string conjunction(const std::vector<std::string>& conds) {
  std::string all;
  for (const auto& c : conds) all += (all.empty() ? "" : " && ") + c;
  return all;
}

// Whether every load in `n` has a mask.
bool loadsMasked(const NodeP& n) {
  if (!n || !n->hasLoad) return true;
  if (n->op == Op::Load && !n->ops[1]) return false;
  return std::all_of(n->ops.begin(), n->ops.end(), [](const NodeP& o) { return loadsMasked(o); });
}

std::string roundVector(DType t, const std::string& e) {
  if (t == DType::FP16) return "tcl_rnd_f16x16(" + e + ")";
  if (t == DType::BF16) return "tcl_rnd_bf16x16(" + e + ")";
  return "(" + e + ")";
}

// Integer + - * wrap, as the scalar code's tcl_add_int etc.: computed on the unsigned type.
std::string wrapping(DType t, const std::string& a, const std::string& o, const std::string& b,
                     int64_t w = kVectorWidth) {
  const std::string s = vtype(t, w), u = "u" + s;
  return "as_" + s + "(as_" + u + "(" + a + ") " + o + " as_" + u + "(" + b + "))";
}

// A lane-invariant operand as a vector of `t`'s compute type (an i1 as a 0/-1 mask); a
// per-lane one as it is.
std::string widen(const std::string& code, bool uniform, DType t) {
  if (!uniform) return code;
  if (t == DType::I1) return "((int16)(-(" + code + ")))";
  return "((" + vtype(t) + ")(" + code + "))";
}

// Binary `o` on two operands' vectors of `ot` (their compute type), or nothing where the
// vector code has no form for it.
std::optional<std::string> binaryVector(const std::string& o, DType ot, const std::string& a,
                                        const std::string& b) {
  if (isComparison(o)) {
    if (ot == DType::I1 && o != "==" && o != "!=") return std::nullopt;  // 0/-1, not 0/1
    std::string c = "(" + a + " " + o + " " + b + ")";
    return bitWidth(ot) == 64 ? "convert_int16" + c : c;
  }
  if (ot == DType::I1) {
    if (o == "and" || o == "&") return "(" + a + " & " + b + ")";
    if (o == "or" || o == "|") return "(" + a + " | " + b + ")";
    if (o == "^") return "(" + a + " ^ " + b + ")";
    return std::nullopt;
  }
  if (o == "max" || o == "min")
    return std::string(isFloat(ot) ? "f" : "") + o + "(" + a + ", " + b + ")";
  if (isFloat(ot)) {
    if (o == "+" || o == "-" || o == "*" || o == "/") return roundVector(ot, a + " " + o + " " + b);
    if (o == "%") return roundVector(ot, "fmod(" + a + ", " + b + ")");
    return std::nullopt;
  }
  if (o == "+" || o == "-" || o == "*") return wrapping(ot, a, o, b);
  if (o == "&" || o == "|" || o == "^") return "(" + a + " " + o + " " + b + ")";
  return std::nullopt;
}

// Unary `o` on an operand's vector of `ot`, giving `t`.
std::optional<std::string> unaryVector(const std::string& o, DType ot, DType t,
                                       const std::string& a) {
  if (o == "not" || (o == "~" && ot == DType::I1)) return "(~" + a + ")";
  if (ot == DType::I1) return std::nullopt;
  if (o == "isnan" || o == "isinf" || o == "signbit")
    return isFloat(ot) ? std::optional<std::string>(o + "(" + a + ")") : std::nullopt;
  if (!isFloat(t)) {
    if (o == "~") return "(~" + a + ")";
    if (o == "-") return wrapping(t, "(" + vtype(t) + ")(0)", "-", a);
    return std::nullopt;
  }
  if (o == "-") return "(-" + a + ")";
  if (o == "abs") return roundVector(t, "fabs(" + a + ")");
  if (o == "sigmoid") return roundVector(t, "1.0f / (1.0f + exp(-" + a + "))");
  return roundVector(t, o + "(" + a + ")");
}

// An operand's vector of `from` converted to `t` (two different types).
std::string castVector(DType from, DType t, const std::string& a) {
  if (t == DType::I1) {
    std::string c = "(" + a + " != (" + vtype(from) + ")(0))";
    return bitWidth(from) == 64 ? "convert_int16" + c : c;
  }
  if (from == DType::I1) {
    std::string one = "(" + a + " & (int16)(1))";
    return t == DType::I32 ? one : roundVector(t, "convert_" + vtype(t) + one);
  }
  if (computeCType(from) == computeCType(t)) return roundVector(t, a);
  return roundVector(t, "convert_" + vtype(t) + "(" + a + ")");
}

// Sixteen consecutive elements of `t` from address `p`, as their compute type.
std::optional<std::string> loadVector(DType t, const std::string& p) {
  switch (t) {
    case DType::FP32:
    case DType::I32:
    case DType::I64:
      return "vload16(0, " + p + ")";
    case DType::FP16:
      return "vload_half16(0, (__global const half*)(" + p + "))";
    case DType::BF16:
      return "tcl_bf16_to_f32x16(vload16(0, " + p + "))";
    case DType::I1:
      return "(convert_int16(vload16(0, " + p + ")) != (int16)(0))";
    default:
      return std::nullopt;
  }
}

}  // namespace

const char* Codegen::vectorPrelude() {
  return kVectorPrelude;
}

int Codegen::lanePosition(const std::vector<std::string>& idx) const {
  int pos = -1;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (idx[d] == laneVar_) {
      if (pos >= 0) return -2;
      pos = static_cast<int>(d);
    } else if (idx[d].find(laneVar_) != std::string::npos) {
      return -2;  // the lane inside index arithmetic (a reshape): not contiguous
    }
  }
  return pos;
}

std::optional<int64_t> Codegen::laneStride(const NodeP& np, const std::vector<std::string>& idx) {
  if (!subst_.empty())
    if (auto it = subst_.find(np.get()); it != subst_.end())
      return laneStride(useFast_ && it->second.fast ? it->second.fast : it->second.to, idx);
  const Node& n = *np;
  const int lane = lanePosition(idx);
  if (lane == -2) return std::nullopt;
  switch (n.op) {
    case Op::ConstInt:
    case Op::ConstFloat:
    case Op::Var:
      return 0;
    case Op::Array:
      return lane < 0 ? std::optional<int64_t>(0) : std::nullopt;
    case Op::Arange:
      return lane == 0 ? 1 : 0;
    case Op::Broadcast:
    case Op::Transpose:
    case Op::Reshape:
    case Op::ExpandDims:
      return laneStride(n.ops[0], viewIndex(n, idx));
    case Op::Binary: {
      auto a = laneStride(n.ops[0], idx), b = laneStride(n.ops[1], idx);
      if (!a || !b) return std::nullopt;
      if (*a == 0 && *b == 0) return 0;
      if (!isInt(n.type.dtype)) return std::nullopt;
      if (n.name == "+") return *a + *b;
      if (n.name == "-") return *a - *b;
      if (n.name == "*") {
        if (auto c = constantInt(n.ops[0]); c && *a == 0) return *c * *b;
        if (auto c = constantInt(n.ops[1]); c && *b == 0) return *a * *c;
      }
      return std::nullopt;
    }
    case Op::Cast: {
      auto a = laneStride(n.ops[0], idx);
      if (!a || *a == 0) return a;
      const DType from = n.ops[0]->type.dtype, to = n.type.dtype;
      if (isInt(from) && isInt(to) && bitWidth(to) >= bitWidth(from)) return a;
      return std::nullopt;
    }
    case Op::PtrAdd: {
      auto a = laneStride(n.ops[0], idx), b = laneStride(n.ops[1], idx);
      if (!a || !b) return std::nullopt;
      return *a + *b;
    }
    default:
      for (const auto& o : n.ops)
        if (o && laneStride(o, idx) != std::optional<int64_t>(0)) return std::nullopt;
      return 0;
  }
}

bool Codegen::maskConds(const NodeP& mask, const std::vector<std::string>& idx,
                        std::vector<std::string>& conds) {
  const std::string key = provenKey(mask, idx);
  if (proven_.count(key)) return true;
  auto push = [&](const std::string& c) {
    if (std::find(conds.begin(), conds.end(), c) == conds.end()) conds.push_back(c);
    proven_.insert(key);
    return true;
  };
  const Node& m = *mask;
  if (m.op == Op::Binary && m.type.dtype == DType::I1 && (m.name == "and" || m.name == "&")) {
    if (!maskConds(m.ops[0], idx, conds) || !maskConds(m.ops[1], idx, conds)) return false;
    proven_.insert(key);
    return true;
  }
  // `offs < n` with offs = base + lane (i32): true in every lane when base + 15 < n, computed
  // in 64 bits so that no lane's i32 index can have wrapped.
  if (m.op == Op::Binary && (m.name == "<" || m.name == "<=") &&
      m.ops[0]->type.dtype == DType::I32 && m.ops[1]->type.dtype == DType::I32 &&
      laneStride(m.ops[0], idx) == std::optional<int64_t>(1) &&
      laneStride(m.ops[1], idx) == std::optional<int64_t>(0)) {
    return push("((long)" + expr(m.ops[0], idx) + " + " + std::to_string(kVectorWidth - 1) + "L " +
                m.name + " (long)" + expr(m.ops[1], idx) + ")");
  }
  auto v = vexpr(mask, idx, conds);
  if (!v) return false;
  return push(v->uniform ? "(" + v->code + ")" : "tcl_all16(" + v->code + ")");
}

std::string Codegen::provenKey(const NodeP& n, const std::vector<std::string>& idx) const {
  std::string k = std::to_string(reinterpret_cast<uintptr_t>(n.get()));
  for (const auto& i : idx) k += "|" + i;
  return k;
}

std::optional<Codegen::VExpr> Codegen::vectorize(const NodeP& value, const NodeP& mask,
                                                 const std::vector<std::string>& idx,
                                                 std::vector<std::string>& conds) {
  // First pass: the chunk's conditions (the store's mask first: where it is all true the
  // scalar code evaluates every lane's value). Second pass: the code, with the masks those
  // conditions prove true in every lane folded to 1 (a `tl.where(mask, ...)` on a load's
  // mask picks its first operand).
  proven_.clear();
  std::optional<VExpr> v;
  if (!mask || maskConds(mask, idx, conds)) v = vexpr(value, idx, conds);
  if (v) {
    std::vector<std::string> again;
    v = vexpr(value, idx, again);
  }
  proven_.clear();
  laneVar_.clear();
  return v;
}

std::optional<Codegen::VExpr> Codegen::vexpr(const NodeP& np, const std::vector<std::string>& idx,
                                             std::vector<std::string>& conds) {
  if (!subst_.empty())
    if (auto it = subst_.find(np.get()); it != subst_.end())
      return vexpr(useFast_ && it->second.fast ? it->second.fast : it->second.to, idx, conds);
  if (proven_.count(provenKey(np, idx))) return VExpr{"1", true};
  const Node& n = *np;
  const int lane = lanePosition(idx);
  if (lane == -2) return std::nullopt;
  // Built only where it is the answer: expr() may emit code.
  auto uniform = [&] { return std::optional<VExpr>(VExpr{expr(np, idx), true}); };
  // A per-lane result, or nothing where the vector code has no form for the node.
  auto perLane = [](std::optional<std::string> code) -> std::optional<VExpr> {
    if (!code) return std::nullopt;
    return VExpr{std::move(*code), false};
  };
  const DType t = n.type.dtype;
  if (n.type.pointer)  // a pointer value only as a lane-invariant scalar
    return laneStride(np, idx) == std::optional<int64_t>(0) ? uniform() : std::nullopt;
  switch (n.op) {
    case Op::ConstInt:
    case Op::ConstFloat:
    case Op::Var:
      return uniform();
    case Op::Array: {
      if (lane < 0) return uniform();
      if (lane + 1 != static_cast<int>(idx.size()) || !vectorDType(t)) return std::nullopt;
      std::string v = "vload16(0, " + n.name + " + " + linear(n.type.shape, idx) + ")";
      return VExpr{t == DType::I1 ? "(" + v + " != (int16)(0))" : v, false};
    }
    case Op::Arange:
      if (lane < 0) return uniform();
      return VExpr{"((int16)(" + idx[0] + " + " + std::to_string(n.ival) + ") + " + kIota + ")",
                   false};
    case Op::Broadcast:
    case Op::Transpose:
    case Op::Reshape:
    case Op::ExpandDims:
      return vexpr(n.ops[0], viewIndex(n, idx), conds);
    case Op::Binary: {
      auto a = vexpr(n.ops[0], idx, conds);
      if (!a) return std::nullopt;
      auto b = vexpr(n.ops[1], idx, conds);
      if (!b) return std::nullopt;
      if (a->uniform && b->uniform) return uniform();
      const DType ot = n.ops[0]->type.dtype;  // operands are already in the compute dtype
      if (!vectorDType(ot)) return std::nullopt;
      return perLane(
          binaryVector(n.name, ot, widen(a->code, a->uniform, ot), widen(b->code, b->uniform, ot)));
    }
    case Op::Unary: {
      auto a = vexpr(n.ops[0], idx, conds);
      if (!a) return std::nullopt;
      if (a->uniform) return uniform();
      const DType ot = n.ops[0]->type.dtype;
      if (!vectorDType(ot)) return std::nullopt;
      return perLane(unaryVector(n.name, ot, t, a->code));
    }
    case Op::Fma: {
      std::vector<VExpr> v;
      for (const auto& o : n.ops) {
        auto e = vexpr(o, idx, conds);
        if (!e) return std::nullopt;
        v.push_back(*e);
      }
      if (v[0].uniform && v[1].uniform && v[2].uniform) return uniform();
      if (!isFloat(t) || !vectorDType(t)) return std::nullopt;
      return VExpr{roundVector(t, "fma(" + widen(v[0].code, v[0].uniform, t) + ", " +
                                      widen(v[1].code, v[1].uniform, t) + ", " +
                                      widen(v[2].code, v[2].uniform, t) + ")"),
                   false};
    }
    case Op::Cast: {
      auto a = vexpr(n.ops[0], idx, conds);
      if (!a) return std::nullopt;
      if (a->uniform) return uniform();
      const DType from = n.ops[0]->type.dtype;
      if (!vectorDType(from) || !vectorDType(t)) return std::nullopt;
      if (from == t) return a;
      return VExpr{castVector(from, t, a->code), false};
    }
    case Op::Select:
      return vselect(np, idx, conds);
    case Op::Load:
      return vload(np, idx, conds);
    case Op::PtrAdd:
    case Op::Call:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Codegen::VExpr> Codegen::vselect(const NodeP& np, const std::vector<std::string>& idx,
                                               std::vector<std::string>& conds) {
  // The scalar code loads only the chosen operand, the vector code both (as Triton does):
  // only loads under a mask, which the chunk's conditions then prove true in every lane.
  const Node& n = *np;
  if (!loadsMasked(n.ops[1]) || !loadsMasked(n.ops[2])) return std::nullopt;
  auto c = vexpr(n.ops[0], idx, conds);
  if (!c) return std::nullopt;
  auto a = vexpr(n.ops[1], idx, conds);
  if (!a) return std::nullopt;
  if (c->uniform && c->code == "1") return a;  // a mask the chunk's conditions prove
  auto b = vexpr(n.ops[2], idx, conds);
  if (!b) return std::nullopt;
  if (c->uniform && a->uniform && b->uniform) return VExpr{expr(np, idx), true};
  const DType t = n.type.dtype;
  if (!vectorDType(t)) return std::nullopt;
  std::string C = widen(c->code, c->uniform, DType::I1);
  if (bitWidth(t) == 64) C = "convert_long16(" + C + ")";
  return VExpr{
      "(" + C + " ? " + widen(a->code, a->uniform, t) + " : " + widen(b->code, b->uniform, t) + ")",
      false};
}

std::optional<Codegen::VExpr> Codegen::vload(const NodeP& np, const std::vector<std::string>& idx,
                                             std::vector<std::string>& conds) {
  const Node& n = *np;
  auto s = laneStride(n.ops[0], idx);
  if (!s) return std::nullopt;
  if (*s == 0) {
    // The same address in every lane: a scalar load, if its mask and other are too.
    std::vector<std::string> none;
    for (size_t k = 1; k < n.ops.size(); ++k)
      if (n.ops[k]) {
        auto e = vexpr(n.ops[k], idx, none);
        if (!e || !e->uniform) return std::nullopt;
      }
    return VExpr{expr(np, idx), true};
  }
  if (*s != 1) return std::nullopt;
  if (n.ops[1] && !maskConds(n.ops[1], idx, conds)) return std::nullopt;
  auto code = loadVector(n.type.dtype, expr(n.ops[0], idx));
  if (!code) return std::nullopt;
  return VExpr{std::move(*code), false};
}

std::vector<std::string> Codegen::laneIndex(const Shape& shape) {
  std::vector<std::string> idx;
  const std::string base = fresh("i");
  for (size_t d = 0; d + 1 < shape.size(); ++d) idx.push_back(base + "_" + std::to_string(d));
  laneVar_ = fresh("kv");
  idx.push_back(laneVar_);
  return idx;
}

void Codegen::vectorLoop(const Shape& shape, const std::vector<std::string>& idx,
                         const std::vector<std::string>& conds, const std::function<void()>& fast,
                         const std::function<void(const std::vector<std::string>&)>& slow) {
  vectorHelpers_ = true;
  openLoopsNamed(shape, idx, shape.size() - 1);
  const std::string& kv = idx.back();
  line() << "for (int " << kv << " = 0; " << kv << " < " << shape.back() << "; " << kv
         << " += " << kVectorWidth << ") {\n";
  ++indent_;
  if (conds.empty()) {
    fast();
  } else {
    line() << "if (" << conjunction(conds) << ") {\n";
    ++indent_;
    fast();
    --indent_;
    line() << "} else {\n";
    ++indent_;
    const std::string l = fresh("l");
    line() << "for (int " << l << " = 0; " << l << " < " << kVectorWidth << "; ++" << l << ") {\n";
    ++indent_;
    auto sidx = idx;
    sidx.back() = "(" + kv + " + " + l + ")";
    slow(sidx);
    --indent_;
    line() << "}\n";
    --indent_;
    line() << "}\n";
  }
  --indent_;
  line() << "}\n";
  closeLoops(shape.size() - 1);
}

bool Codegen::storeVector(const NodeP& ptr, const NodeP& value, const NodeP& mask, int kline) {
  const Shape& shape = ptr->type.shape;
  const DType t = ptr->type.dtype;
  if (checked_ || shape.empty() || shape.back() % kVectorWidth != 0 ||
      !(t == DType::FP32 || t == DType::FP16 || t == DType::BF16 || t == DType::I32 ||
        t == DType::I64))
    return false;
  const auto idx = laneIndex(shape);
  std::vector<std::string> conds;
  if (laneStride(ptr, idx) != std::optional<int64_t>(1)) {
    laneVar_.clear();
    return false;
  }
  const std::string p = expr(ptr, idx);
  auto v = vectorize(value, mask, idx, conds);
  if (!v) return false;
  const std::string V = v->uniform ? "((" + vtype(t) + ")(" + v->code + "))" : v->code;
  std::string st;
  if (t == DType::FP16)
    st = "vstore_half16_rte(" + V + ", 0, (__global half*)(" + p + "))";
  else if (t == DType::BF16)
    st = "vstore16(tcl_f32_to_bf16x16(" + V + "), 0, " + p + ")";
  else
    st = "vstore16(" + V + ", 0, " + p + ")";
  vectorLoop(
      shape, idx, conds, [&] { line() << st << ";\n"; },
      [&](const std::vector<std::string>& sidx) { storeElement(ptr, value, mask, sidx, kline); });
  return true;
}

bool Codegen::fillVector(const std::string& dst, const NodeP& value) {
  const Shape& shape = value->type.shape;
  const DType t = value->type.dtype;
  if (checked_ || value->type.pointer || shape.empty() || shape.back() % kVectorWidth != 0 ||
      !vectorDType(t))
    return false;
  const auto idx = laneIndex(shape);
  std::vector<std::string> conds;
  auto v = vectorize(value, nullptr, idx, conds);
  if (!v) return false;
  std::string V = v->uniform ? (t == DType::I1 ? "((int16)(" + v->code + "))"
                                               : "((" + vtype(t) + ")(" + v->code + "))")
                             : (t == DType::I1 ? "(" + v->code + " & (int16)(1))" : v->code);
  vectorLoop(
      shape, idx, conds,
      [&] {
        line() << "vstore16(" << V << ", 0, " << dst << " + " << linear(shape, idx) << ");\n";
      },
      [&](const std::vector<std::string>& sidx) {
        line() << dst << "[" << linear(shape, sidx) << "] = " << expr(value, sidx) << ";\n";
      });
  return true;
}

bool Codegen::reduceVector(const std::string& kind, const NodeP& in, const std::string& out,
                           const std::string& init) {
  const Shape& shape = in->type.shape;
  const DType t = in->type.dtype;
  if (checked_ || !(t == DType::FP32 || t == DType::I32 || t == DType::I64)) return false;
  const auto idx = laneIndex(shape);
  std::vector<std::string> conds;
  auto v = vectorize(in, nullptr, idx, conds);
  if (!v) return false;
  const std::string ct = computeCType(t), vt = vtype(t), acc = fresh("vacc"), x = fresh("vx");
  auto combine = [&](const std::string& a, const std::string& b, int64_t w) {
    if (kind == "sum") return isFloat(t) ? "(" + a + " + " + b + ")" : wrapping(t, a, "+", b, w);
    return std::string(isFloat(t) ? "f" : "") + kind + "(" + a + ", " + b + ")";
  };
  const std::string V = v->uniform ? "((" + vt + ")(" + v->code + "))" : v->code;
  // The reduced dim is the block's last; the kept dims are the leading loops.
  const Shape outShape(shape.begin(), shape.end() - 1);
  const std::vector<std::string> outIdx(idx.begin(), idx.end() - 1);
  const std::string& kv = idx.back();
  openLoopsNamed(shape, idx, outShape.size());
  vectorHelpers_ = true;
  line() << vt << " " << acc << " = (" << vt << ")(" << init << ");\n";
  line() << "for (int " << kv << " = 0; " << kv << " < " << shape.back() << "; " << kv
         << " += " << kVectorWidth << ") {\n";
  ++indent_;
  if (conds.empty()) {
    line() << acc << " = " << combine(acc, V, kVectorWidth) << ";\n";
  } else {
    // A chunk with a lane masked off: its values come from the scalar code (`other` where
    // masked) and are combined alike.
    line() << vt << " " << x << ";\n";
    line() << "if (" << conjunction(conds) << ") {\n";
    line() << "  " << x << " = " << V << ";\n";
    line() << "} else {\n";
    ++indent_;
    const std::string tv = fresh("tv"), l = fresh("l");
    auto sidx = idx;
    sidx.back() = "(" + kv + " + " + l + ")";
    line() << ct << " " << tv << "[" << kVectorWidth << "];\n";
    line() << "for (int " << l << " = 0; " << l << " < " << kVectorWidth << "; ++" << l << ") "
           << tv << "[" << l << "] = " << expr(in, sidx) << ";\n";
    line() << x << " = vload16(0, " << tv << ");\n";
    --indent_;
    line() << "}\n";
    line() << acc << " = " << combine(acc, x, kVectorWidth) << ";\n";
  }
  --indent_;
  line() << "}\n";
  // Pairwise, lane l with lane l + w (w = 8, 4, 2, 1), as the scalar lanes code combines them.
  std::string cur = acc;
  for (int64_t w = kVectorWidth / 2; w >= 1; w /= 2) {
    const std::string nx = fresh("vr");
    line() << vtype(t, w) << " " << nx << " = " << combine(cur + ".lo", cur + ".hi", w) << ";\n";
    cur = nx;
  }
  line() << out << (outShape.empty() ? "" : "[" + linear(outShape, outIdx) + "]") << " = " << cur
         << ";\n";
  closeLoops(outShape.size());
  return true;
}

}  // namespace crucible::tcl
