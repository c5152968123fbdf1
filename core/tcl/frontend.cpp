#include "core/tcl/frontend.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "core/tcl/lookahead.h"

namespace crucible::tcl {
namespace {

using json = nlohmann::json;

/// A value during abstract interpretation: a Python constexpr, a tensor (block IR node), or
/// a compile-time object (module, builtin, dtype, @jit function, tuple, bound method).
struct Value {
  enum Kind {
    None,
    Int,
    Float,
    Bool,
    Str,
    Tensor,
    DTypeV,
    Module,
    Builtin,
    JitFn,
    Tuple,
    Method,
    Slice
  };
  Kind kind = None;
  int64_t i = 0;
  double f = 0;
  NodeP node;
  DType dtype = DType::I32;
  std::string name;  // module path, builtin name, function name, method name, string
  std::vector<Value> items;

  static Value intV(int64_t v) {
    Value r;
    r.kind = Int;
    r.i = v;
    return r;
  }
  static Value floatV(double v) {
    Value r;
    r.kind = Float;
    r.f = v;
    return r;
  }
  static Value boolV(bool v) {
    Value r;
    r.kind = Bool;
    r.i = v;
    return r;
  }
  static Value tensor(NodeP n) {
    Value r;
    r.kind = Tensor;
    r.node = std::move(n);
    return r;
  }
  static Value named(Kind k, std::string n) {
    Value r;
    r.kind = k;
    r.name = std::move(n);
    return r;
  }
  bool isConst() const { return kind == Int || kind == Float || kind == Bool; }
};

struct ReturnSignal {
  Value value;
};

/// Thrown when a loop's pointer block, compiled as "base + carried scalar offset", turns out to
/// be updated some other way; the kernel is compiled again with that variable carried whole.
struct AffineRetry {
  std::string key;  // "<for line>:<name>"
};

bool fitsI32(int64_t v) {
  return v >= INT32_MIN && v <= INT32_MAX;
}

NodeP constNode(DType t, const Value& v) {
  Type ty{t, false, {}};
  if (isFloat(t)) {
    auto n = makeNode(Op::ConstFloat, ty);
    const_cast<Node&>(*n).fval = v.kind == Value::Float ? v.f : static_cast<double>(v.i);
    return n;
  }
  auto n = makeNode(Op::ConstInt, ty);
  const_cast<Node&>(*n).ival = v.kind == Value::Float ? static_cast<int64_t>(v.f) : v.i;
  return n;
}

int64_t pyFloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

class Frontend {
 public:
  Frontend(const json& spec, std::set<std::string> noAffine)
      : spec_(spec),
        cg_("tcl_" + spec.at("kernel").get<std::string>(), spec.value("checked", false)),
        noAffine_(std::move(noAffine)) {}

  CompiledSource run() {
    const std::string kname = spec_.at("kernel");
    const json& fn = function(kname, 0);
    const json& args = spec_.at("args");
    const json& params = fn.at("args").at("args");
    if (params.size() != args.size())
      throw CompileError(fn.value("lineno", 0),
                         "the kernel takes " + std::to_string(params.size()) +
                             " arguments, the launch specialised " + std::to_string(args.size()));
    frames_.emplace_back();
    for (size_t k = 0; k < params.size(); ++k) {
      std::string name = params[k].at("arg");
      const json& a = args[k];
      std::string kind = a.at("kind");
      Value v;
      if (kind == "constexpr") {
        v = fromJsonValue(a.at("value"), fn.value("lineno", 0));
      } else if (kind == "ptr") {
        DType t;
        if (!dtypeFromName(a.at("dtype"), t))
          throw CompileError(
              fn.value("lineno", 0),
              "unsupported tensor dtype " + a.at("dtype").get<std::string>() + " for " + name);
        v = Value::tensor(cg_.addParam(name, Type{t, true, {}}));
      } else {
        DType t;
        if (!dtypeFromName(kind, t) ||
            !(t == DType::I32 || t == DType::I64 || t == DType::FP32 || t == DType::I1))
          throw CompileError(fn.value("lineno", 0),
                             "unsupported argument kind " + kind + " for " + name);
        v = Value::tensor(cg_.addParam(name, Type{t, false, {}}));
      }
      frames_.back()[name] = v;
    }
    inKernel_ = true;
    try {
      execBlock(fn.at("body"));
    } catch (ReturnSignal&) {
    }
    return {cg_.kernelName(), cg_.source(), cg_.params(), cg_.checked(), cg_.lineMap()};
  }

 private:
  using Scope = std::map<std::string, Value>;

  const json& function(const std::string& name, int line) {
    const json& fns = spec_.at("functions");
    if (!fns.contains(name)) throw CompileError(line, "function " + name + " was not provided");
    return fns.at(name);
  }

  [[noreturn]] void fail(const std::string& msg) { throw CompileError(line_, msg); }
  [[noreturn]] void unsupported(const std::string& what) {
    fail(what + " is not supported by the opencl backend yet");
  }

  Value fromJsonValue(const json& v, int line) {
    if (v.is_null()) return Value{};
    if (v.is_boolean()) return Value::boolV(v.get<bool>());
    if (v.is_number_integer()) return Value::intV(v.get<int64_t>());
    if (v.is_number_float()) return Value::floatV(v.get<double>());
    if (v.is_string()) return Value::named(Value::Str, v.get<std::string>());
    if (v.is_object() && v.contains("$float"))
      return Value::floatV(std::stod(v["$float"].get<std::string>()));
    if (v.is_object() && v.contains("$dtype")) {
      Value r;
      r.kind = Value::DTypeV;
      if (!dtypeFromName(v["$dtype"], r.dtype))
        throw CompileError(line, "unknown dtype " + v["$dtype"].dump());
      return r;
    }
    if (v.is_array()) {
      Value r;
      r.kind = Value::Tuple;
      for (const auto& e : v) r.items.push_back(fromJsonValue(e, line));
      return r;
    }
    throw CompileError(line, "unsupported constant " + v.dump());
  }

  // ---- names -------------------------------------------------------------------------------

  Value lookup(const std::string& name) {
    for (auto it = frames_.back().find(name); it != frames_.back().end();) return it->second;
    const json& g = spec_.value("globals", json::object());
    if (g.contains(name)) {
      const json& d = g.at(name);
      if (d.contains("module")) return Value::named(Value::Module, d["module"]);
      if (d.contains("jit")) return Value::named(Value::JitFn, d["jit"]);
      if (d.contains("value")) return fromJsonValue(d["value"], line_);
      if (d.contains("builtin")) return Value::named(Value::Builtin, d["builtin"]);
    }
    static const std::set<std::string> pyBuiltins = {"range", "float", "int", "min",  "max",
                                                     "len",   "bool",  "abs", "print"};
    if (pyBuiltins.count(name)) return Value::named(Value::Builtin, "py." + name);
    fail("name '" + name + "' is not defined");
  }

  Value attribute(const Value& base, const std::string& attr) {
    if (base.kind == Value::Module) {
      const std::string& m = base.name;
      DType t;
      if (m.rfind("triton.language", 0) == 0 && dtypeFromName(attr, t) && attr != "bool") {
        Value r;
        r.kind = Value::DTypeV;
        r.dtype = t;
        return r;
      }
      static const std::set<std::string> submodules = {
          "math", "extra", "libdevice", "cuda", "random", "core", "standard", "language", "intel"};
      if (submodules.count(attr)) return Value::named(Value::Module, m + "." + attr);
      return Value::named(Value::Builtin, attr);
    }
    if (base.kind == Value::Tensor) {
      if (attr == "dtype") {
        Value r;
        r.kind = Value::DTypeV;
        r.dtype = base.node->type.dtype;
        return r;
      }
      if (attr == "T") return Value::tensor(transpose(base.node, {}, "trans"));
      if (attr == "shape") {
        Value r;
        r.kind = Value::Tuple;
        for (auto d : base.node->type.shape) r.items.push_back(Value::intV(d));
        return r;
      }
      Value r = Value::named(Value::Method, attr);
      r.node = base.node;
      return r;
    }
    if (base.kind == Value::DTypeV && attr == "element_ty") return base;
    unsupported("attribute ." + attr);
  }

  // ---- tensors -----------------------------------------------------------------------------

  static int kindRank(DType t) { return t == DType::I1 ? 0 : (isFloat(t) ? 2 : 1); }

  /// A constexpr made a tensor on its own (Triton's to_tensor).
  NodeP toTensor(const Value& v) {
    if (v.kind == Value::Tensor) return v.node;
    if (v.kind == Value::Bool) return constNode(DType::I1, v);
    if (v.kind == Value::Int) return constNode(fitsI32(v.i) ? DType::I32 : DType::I64, v);
    if (v.kind == Value::Float) return constNode(DType::FP32, v);
    fail("expected a tensor or a number");
  }

  NodeP broadcastTo(const NodeP& n, const Shape& s) {
    if (n->type.shape == s) return n;
    Type t = n->type;
    t.shape = s;
    return makeNode(Op::Broadcast, t, {n});
  }

  NodeP castTo(const NodeP& n, DType t) {
    if (n->type.dtype == t) return n;
    if (n->type.pointer) fail("cannot cast a pointer");
    Type ty = n->type;
    ty.dtype = t;
    return makeNode(Op::Cast, ty, {n});
  }

  /// x.to(t, bitcast=True): the same bits read as `t` (integers of one width convert modulo
  /// 2^n, which is the same thing).
  NodeP bitcast(const NodeP& n, DType t) {
    DType from = n->type.dtype;
    if (n->type.pointer) fail("bitcast of a pointer");
    if (bitWidth(from) != bitWidth(t))
      fail("cannot bitcast " + dtypeName(from) + " to " + dtypeName(t) + " (different widths)");
    if (isFloat(from) == isFloat(t)) {
      if (from != t && isFloat(t)) unsupported("bitcast between fp16 and bf16");
      return castTo(n, t);
    }
    if (bitWidth(t) < 32) unsupported("bitcast between 16-bit floats and integers");
    Type ty = n->type;
    ty.dtype = t;
    return makeNode(Op::Call, ty, {n}, "as_" + computeCType(t));
  }

  /// The tensor dtype a weak (constexpr) scalar takes next to a tensor of dtype `t`.
  DType weakDType(const Value& c, DType t) {
    int kc = c.kind == Value::Bool ? 0 : (c.kind == Value::Int ? 1 : 2);
    if (kc <= kindRank(t)) {
      if (c.kind == Value::Int && isInt(t) && bitWidth(t) <= 32 && !fitsI32(c.i)) return DType::I64;
      return t;
    }
    return kc == 2 ? DType::FP32 : DType::I32;
  }

  Value foldConst(const std::string& op, const Value& a, const Value& b) {
    bool fl = a.kind == Value::Float || b.kind == Value::Float;
    double x = a.kind == Value::Float ? a.f : static_cast<double>(a.i);
    double y = b.kind == Value::Float ? b.f : static_cast<double>(b.i);
    if (op == "==") return Value::boolV(x == y);
    if (op == "!=") return Value::boolV(x != y);
    if (op == "<") return Value::boolV(x < y);
    if (op == "<=") return Value::boolV(x <= y);
    if (op == ">") return Value::boolV(x > y);
    if (op == ">=") return Value::boolV(x >= y);
    if (op == "/") {
      if (y == 0) fail("division by zero in a constant expression");
      return Value::floatV(x / y);
    }
    if (fl) {
      if (op == "+") return Value::floatV(x + y);
      if (op == "-") return Value::floatV(x - y);
      if (op == "*") return Value::floatV(x * y);
      if (op == "//") return Value::floatV(std::floor(x / y));
      if (op == "%") return Value::floatV(x - std::floor(x / y) * y);
      if (op == "**") return Value::floatV(std::pow(x, y));
      fail("unsupported operator " + op + " on constant floats");
    }
    int64_t p = a.i, q = b.i;
    if ((op == "//" || op == "%") && q == 0)
      fail("integer division by zero in a constant expression");
    if (op == "+") return Value::intV(p + q);
    if (op == "-") return Value::intV(p - q);
    if (op == "*") return Value::intV(p * q);
    if (op == "//") return Value::intV(pyFloorDiv(p, q));
    if (op == "%") return Value::intV(p - pyFloorDiv(p, q) * q);
    if (op == "&") return Value::intV(p & q);
    if (op == "|") return Value::intV(p | q);
    if (op == "^") return Value::intV(p ^ q);
    if (op == "<<") return Value::intV(p << q);
    if (op == ">>") return Value::intV(p >> q);
    if (op == "**") return Value::intV(static_cast<int64_t>(std::pow(p, q)));
    fail("unsupported operator " + op + " on constants");
  }

  Value binop(const std::string& op, const Value& a, const Value& b) {
    if (a.isConst() && b.isConst()) return foldConst(op, a, b);
    if ((a.kind == Value::Str || a.kind == Value::None || b.kind == Value::Str ||
         b.kind == Value::None) &&
        (op == "==" || op == "!=")) {  // constexpr strings and None compare at compile time
      bool same = a.kind == b.kind && a.name == b.name;
      return Value::boolV((op == "==") == same);
    }
    if (a.kind == Value::Str && b.kind == Value::Str && op == "+")
      return Value::named(Value::Str, a.name + b.name);
    if (!(a.kind == Value::Tensor || a.isConst()) || !(b.kind == Value::Tensor || b.isConst()))
      fail("unsupported operands for " + op);
    // Pointer arithmetic.
    if (a.kind == Value::Tensor && a.node->type.pointer) {
      if (op != "+" && op != "-") fail("operator " + op + " on a pointer");
      NodeP off =
          b.kind == Value::Tensor
              ? b.node
              : constNode(b.kind == Value::Int && !fitsI32(b.i) ? DType::I64 : DType::I32, b);
      if (off->type.pointer || isFloat(off->type.dtype))
        fail("a pointer can only be offset by integers");
      if (op == "-") off = makeNode(Op::Unary, off->type, {off}, "-");
      Shape s = shapeOf(a.node, off);
      Type t = a.node->type;
      t.shape = s;
      return Value::tensor(makeNode(Op::PtrAdd, t, {broadcastTo(a.node, s), broadcastTo(off, s)}));
    }
    if (b.kind == Value::Tensor && b.node->type.pointer) {
      if (op == "+") return binop(op, b, a);
      fail("operator " + op + " with a pointer on the right");
    }
    DType ta, tb;
    NodeP na, nb;
    if (a.kind == Value::Tensor && b.kind == Value::Tensor) {
      na = a.node, nb = b.node;
      ta = na->type.dtype, tb = nb->type.dtype;
    } else if (a.kind == Value::Tensor) {
      na = a.node, ta = na->type.dtype;
      tb = weakDType(b, ta);
      nb = constNode(tb, b);
    } else {
      nb = b.node, tb = nb->type.dtype;
      ta = weakDType(a, tb);
      na = constNode(ta, a);
    }
    bool cmp = op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
    DType rt;
    try {
      rt = promote(ta, tb, cmp ? "+" : op);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    if ((op == "//" || op == "<<" || op == ">>" || op == "&" || op == "|" || op == "^") &&
        isFloat(rt))
      fail("operator " + op + " is not defined for floating-point operands (" + dtypeName(rt) +
           ")");
    Shape s = shapeOf(na, nb);
    na = broadcastTo(castTo(na, rt), s);
    nb = broadcastTo(castTo(nb, rt), s);
    return Value::tensor(makeNode(Op::Binary, Type{cmp ? DType::I1 : rt, false, s}, {na, nb}, op));
  }

  Shape shapeOf(const NodeP& a, const NodeP& b) {
    try {
      return broadcastShapes(a->type.shape, b->type.shape);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }

  Value unop(const std::string& op, const Value& a) {
    if (a.kind == Value::Int) {
      if (op == "-") return Value::intV(-a.i);
      if (op == "~") return Value::intV(~a.i);
      if (op == "not") return Value::boolV(!a.i);
      return a;
    }
    if (a.kind == Value::Float) {
      if (op == "-") return Value::floatV(-a.f);
      if (op == "not") return Value::boolV(!a.f);
      return a;
    }
    if (a.kind == Value::Bool)
      return op == "not" || op == "~" ? Value::boolV(!a.i) : unop(op, Value::intV(a.i));
    if (a.kind != Value::Tensor || a.node->type.pointer)
      fail("unsupported operand for unary " + op);
    if (op == "+") return a;
    if (op == "~" && isFloat(a.node->type.dtype)) fail("operator ~ on a floating-point tensor");
    Type t = a.node->type;
    if (op == "not") t.dtype = DType::I1;
    return Value::tensor(
        makeNode(Op::Unary, t, {op == "not" ? castTo(a.node, DType::I1) : a.node}, op));
  }

  NodeP mathArg(const Value& v, const std::string& fn) {
    NodeP n = toTensor(v);
    if (n->type.pointer) fail(fn + " of a pointer");
    if (!isFloat(n->type.dtype))
      fail("tl." + fn + " expects a floating-point tensor, got " + dtypeName(n->type.dtype));
    return n;
  }

  // ---- calls -------------------------------------------------------------------------------

  struct Args {
    std::vector<Value> pos;
    std::map<std::string, Value> kw;
    const Value* get(size_t i, const std::string& name) const {
      if (i < pos.size()) return &pos[i];
      auto it = kw.find(name);
      return it == kw.end() ? nullptr : &it->second;
    }
  };

  int64_t constInt(const Value* v, const std::string& what) {
    if (!v || !(v->kind == Value::Int || v->kind == Value::Bool))
      fail(what + " must be a constexpr integer");
    return v->i;
  }

  Shape shapeArg(const Value* v) {
    if (!v) fail("a shape is required");
    Shape s;
    if (v->kind == Value::Tuple) {
      for (const auto& e : v->items) s.push_back(constInt(&e, "a block dimension"));
    } else {
      s.push_back(constInt(v, "a block dimension"));
    }
    for (auto d : s)
      if (d <= 0 || (d & (d - 1)))
        fail("block dimensions must be powers of 2, got " + shapeString(s));
    if (numel(s) > (1 << 20))
      fail("block of " + std::to_string(numel(s)) + " elements exceeds Triton's 1048576");
    return s;
  }

  DType dtypeArg(const Value* v, DType dflt) {
    if (!v || v->kind == Value::None) return dflt;
    if (v->kind != Value::DTypeV) fail("expected a dtype");
    return v->dtype;
  }

  Value reduce(const std::string& kind, const Args& args) {
    const Value* xv = args.get(0, "input");
    if (!xv) fail("tl." + kind + " needs an input");
    NodeP x = toTensor(*xv);
    const Value* ri = args.get(2, "return_indices");
    if (kind != "sum" && ri && ri->isConst() && ri->i) return argReduce(kind, args, true);
    const Value* ax = args.get(1, "axis");
    bool keep = false;
    if (const Value* k = args.get(kind == "sum" ? 2 : 4, "keep_dims")) keep = k->i != 0;
    DType t = x->type.dtype;
    if (kind == "sum") {
      if (t == DType::I1 || t == DType::I8 || t == DType::I16) t = DType::I32;
      if (const Value* d = args.kw.count("dtype") ? &args.kw.at("dtype") : nullptr)
        t = dtypeArg(d, t);
    } else if (bitWidth(t) < 32) {
      t = isFloat(t) ? DType::FP32 : DType::I32;
    }
    x = castTo(x, t);
    if (x->type.shape.empty()) return Value::tensor(x);
    int rank = static_cast<int>(x->type.shape.size());
    if (!ax || ax->kind == Value::None) {
      NodeP r = x;
      while (!r->type.shape.empty()) r = cg_.reduce(kind, r, 0);
      if (keep)
        for (int d = 0; d < rank; ++d) r = expandDims(r, 0);
      return Value::tensor(r);
    }
    int64_t a = constInt(ax, "axis");
    if (a < 0) a += rank;
    if (a < 0 || a >= rank)
      fail("axis " + std::to_string(ax->i) + " out of range for a block of rank " +
           std::to_string(rank));
    NodeP r = cg_.reduce(kind, x, static_cast<int>(a));
    if (keep) r = expandDims(r, static_cast<int>(a));
    return Value::tensor(r);
  }

  /// tl.reduce(input, axis, combine_fn, keep_dims=False) and tl.associative_scan(input, axis,
  /// combine_fn, reverse=False) with a @jit combine function (or `combine` given here, for
  /// cumprod); `input` a block or a tuple of blocks of one shape. Sequential in index order,
  /// the first element as the initial accumulator: the Triton interpreter's order.
  Value reduceCombine(const std::string& what, const Args& args, bool scan,
                      std::function<Value(const std::vector<Value>&)> combine = nullptr) {
    const Value* xv = args.get(0, "input");
    const Value* ax = args.get(1, "axis");
    if (!xv) fail(what + " needs an input");
    std::string fname;
    if (!combine) {
      const Value* fv = args.get(2, "combine_fn");
      if (!fv || fv->kind != Value::JitFn)
        fail(what + ": combine_fn must be a @triton.jit function");
      fname = fv->name;
    }
    const bool tuple = xv->kind == Value::Tuple;
    std::vector<NodeP> in;
    for (const auto& v : tuple ? xv->items : std::vector<Value>{*xv}) {
      NodeP n = toTensor(v);
      if (n->type.pointer) fail(what + " of pointers");
      if (!in.empty() && n->type.shape != in[0]->type.shape)
        fail(what + ": the inputs' shapes differ (" + shapeString(in[0]->type.shape) + " and " +
             shapeString(n->type.shape) + ")");
      in.push_back(n);
    }
    if (in.empty()) fail(what + " of an empty tuple");
    const int rank = static_cast<int>(in[0]->type.shape.size());
    if (rank == 0) fail(what + " of a scalar");
    const bool flat = !scan && (!ax || ax->kind == Value::None);
    int64_t a = 0;
    if (flat) {
      for (auto& n : in) n = reshape(n, {numel(n->type.shape)}, "reduce");
    } else {
      if (!ax || ax->kind == Value::None) fail(what + " needs an axis");
      a = constInt(ax, "axis");
      if (a < 0) a += rank;
      if (a < 0 || a >= rank)
        fail(what + ": axis out of range for a block of rank " + std::to_string(rank));
    }
    const Value* flag = args.get(3, scan ? "reverse" : "keep_dims");
    const bool opt = flag && flag->isConst() && flag->i;
    const bool reverse = scan && opt, keep = !scan && opt;
    const Shape shape = in[0]->type.shape;
    const int64_t len = shape[a];
    Shape outer = shape;
    outer.erase(outer.begin() + a);
    materializePendingLoads();  // nothing in the caller's frames is computed inside the loops
    std::vector<NodeP> outs, accs;
    for (const auto& n : in)
      outs.push_back(cg_.declare(Type{n->type.dtype, false, scan ? shape : outer}));
    auto idx = cg_.openLoops(outer);
    auto at = [&](const std::string& k) {
      auto full = idx;
      full.insert(full.begin() + a, reverse ? "(" + std::to_string(len - 1) + " - " + k + ")" : k);
      return full;
    };
    for (size_t j = 0; j < in.size(); ++j) {
      accs.push_back(cg_.scalarAt(in[j], at("0")));
      if (scan) cg_.storeAt(outs[j], at("0"), accs[j]);
    }
    const std::string k = cg_.beginCountedLoop(1, len);
    Args cargs;
    for (const auto& acc : accs) cargs.pos.push_back(Value::tensor(acc));
    for (const auto& n : in) cargs.pos.push_back(Value::tensor(cg_.scalarAt(n, at(k))));
    Value r = combine ? combine(cargs.pos) : callJit(fname, cargs);
    std::vector<Value> items = r.kind == Value::Tuple ? r.items : std::vector<Value>{r};
    if (items.size() != in.size())
      fail(what + ": the combine function returns " + std::to_string(items.size()) +
           " values for " + std::to_string(in.size()) + " inputs");
    std::vector<NodeP> next;
    for (size_t j = 0; j < in.size(); ++j) {
      if (!(items[j].kind == Value::Tensor || items[j].isConst()))
        fail(what + ": the combine function must return numbers");
      NodeP v = castTo(toTensor(items[j]), in[j]->type.dtype);
      if (!v->type.shape.empty() || v->type.pointer)
        fail(what + ": the combine function must return scalars, got " + v->type.str());
      next.push_back(cg_.materialize(v, true));  // all new values before any accumulator changes
    }
    for (size_t j = 0; j < in.size(); ++j) {
      cg_.assign(accs[j], next[j]);
      if (scan) cg_.storeAt(outs[j], at(k), accs[j]);
    }
    cg_.end();
    if (!scan)
      for (size_t j = 0; j < in.size(); ++j) cg_.storeAt(outs[j], idx, accs[j]);
    cg_.closeLoops(idx.size());
    std::vector<Value> res;
    for (auto o : outs) {
      if (keep)
        for (int d = 0; d < (flat ? rank : 1); ++d)
          o = expandDims(o, flat ? 0 : static_cast<int>(a));
      res.push_back(Value::tensor(o));
    }
    if (!tuple) return res[0];
    Value t;
    t.kind = Value::Tuple;
    t.items = std::move(res);
    return t;
  }

  /// tl.dot(input, other, acc=None, input_precision=None, allow_tf32=None,
  /// max_num_imprecise_acc=None, out_dtype=tl.float32). Products are exact fp32 (or fp64 /
  /// int32) on the CPU, so every input_precision gives the "ieee" result.
  Value dot(const Args& args) {
    const Value *av = args.get(0, "input"), *bv = args.get(1, "other");
    if (!av || !bv || av->kind != Value::Tensor || bv->kind != Value::Tensor)
      fail("tl.dot needs two blocks");
    NodeP a = av->node, b = bv->node;
    if (a->type.pointer || b->type.pointer) fail("tl.dot of pointers");
    const size_t rank = a->type.shape.size();
    if (!((rank == 2 || rank == 3) && b->type.shape.size() == rank))
      fail("tl.dot needs two 2-D or two 3-D blocks, got " + shapeString(a->type.shape) + " and " +
           shapeString(b->type.shape));
    const Shape &sa = a->type.shape, &sb = b->type.shape;
    if (sa[rank - 1] != sb[rank - 2] || (rank == 3 && sa[0] != sb[0]))
      fail("tl.dot: dimensions do not match: " + shapeString(sa) + " and " + shapeString(sb));
    DType ta = a->type.dtype, tb = b->type.dtype;
    bool ints = isInt(ta) && isInt(tb);
    if (!ints && !(isFloat(ta) && isFloat(tb)))
      fail("tl.dot of " + dtypeName(ta) + " and " + dtypeName(tb));
    if (ints && (bitWidth(ta) != 8 || bitWidth(tb) != 8))
      fail("tl.dot on integers takes int8 operands, got " + dtypeName(ta) + " and " +
           dtypeName(tb));
    DType accT =
        ints ? DType::I32 : (ta == DType::FP64 || tb == DType::FP64 ? DType::FP64 : DType::FP32);
    DType outT = ints ? DType::I32 : dtypeArg(args.get(6, "out_dtype"), accT);
    if (ints && args.kw.count("out_dtype") && dtypeArg(&args.kw.at("out_dtype"), outT) != outT)
      fail("tl.dot on int8 returns int32");
    const Value* accv = args.get(2, "acc");
    Shape outShape = rank == 2 ? Shape{sa[0], sb[1]} : Shape{sa[0], sa[1], sb[2]};
    NodeP acc;
    if (accv && accv->kind != Value::None) {
      acc = toTensor(*accv);
      if (acc->type.pointer) fail("tl.dot: acc is a pointer");
      if (broadcastShapesOr(acc->type.shape, outShape) != outShape)
        fail("tl.dot: acc of shape " + shapeString(acc->type.shape) + " for a " +
             shapeString(outShape) + " product");
      outT = acc->type.dtype;
      acc = broadcastTo(castTo(acc, accT), outShape);
    }
    NodeP r = rank == 2 ? cg_.dot(a, b, acc, accT, acc && accUpdatedInPlace(acc, accT))
                        : cg_.batchedDot(a, b, acc, accT);
    return Value::tensor(castTo(r, outT));
  }

  /// Whether tl.dot may write its result over the accumulator's own storage: the statement is
  /// `acc = tl.dot(a, b, acc)`, `acc = acc + tl.dot(a, b)` or `acc += tl.dot(a, b)`, reading
  /// `acc` nowhere else, and no other name or pending block refers to that storage. A K loop
  /// then updates its carried accumulator without a copy per iteration.
  bool accUpdatedInPlace(const NodeP& acc, DType accT) {
    if (acc->op != Op::Array || acc->type.dtype != accT) return false;
    const json* st = ahead_.current();
    if (!st) return false;
    const std::string& t = st->at("_type");
    const json* target = t == "Assign" && st->at("targets").size() == 1 ? &st->at("targets")[0]
                         : t == "AugAssign"                             ? &st->at("target")
                                                                        : nullptr;
    if (!target || target->at("_type") != "Name") return false;
    const std::string& name = target->at("id");
    auto it = frames_.back().find(name);
    if (it == frames_.back().end() || it->second.kind != Value::Tensor || it->second.node != acc)
      return false;
    if (ahead_.mentionsInCurrent(name) != (t == "Assign" ? 2 : 1)) return false;
    std::set<const Node*> seen;
    std::function<bool(const NodeP&)> refers = [&](const NodeP& n) {
      if (!n || !seen.insert(n.get()).second) return false;
      if (n->op == Op::Array && n->name == acc->name) return true;
      for (const auto& o : n->ops)
        if (refers(o)) return true;
      return false;
    };
    std::function<bool(const Value&)> refersValue = [&](const Value& v) {
      if (v.kind == Value::Tensor) return refers(v.node);
      for (const auto& item : v.items)
        if (refersValue(item)) return true;
      return false;
    };
    for (size_t f = 0; f < frames_.size(); ++f)
      for (const auto& [n, v] : frames_[f])
        if (!(f + 1 == frames_.size() && n == name) && refersValue(v)) return false;
    return true;
  }

  /// tl.rand / randn / randint and their 4x forms: Triton's Philox (n_rounds, default 10) on
  /// the counter (offset low 32 bits, high 32 bits, 0, 0) and key (seed low, seed high), with
  /// Triton's conversions to uniform and normal floats, so streams equal real Triton's.
  Value random(const std::string& name, const Args& args) {
    const Value *sv = args.get(0, "seed"), *ov = args.get(1, "offset");
    if (!sv || !ov) fail("tl." + name + " needs a seed and offsets");
    if (!ov->isConst() && ov->kind != Value::Tensor)
      fail("tl." + name + ": offsets must be integers");
    NodeP seed = toTensor(*sv), off = toTensor(*ov);
    if (seed->type.pointer || !isInt(seed->type.dtype) || !seed->type.shape.empty())
      fail("tl." + name + ": the seed must be an integer scalar");
    if (off->type.pointer || !isInt(off->type.dtype))
      fail("tl." + name + ": offsets must be an integer block");
    const Value* rv = args.get(2, "n_rounds");
    int64_t rounds = rv && rv->kind != Value::None ? constInt(rv, "n_rounds") : 10;
    const Shape& s = off->type.shape;
    auto call = [&](const std::string& fn, DType t, std::vector<NodeP> ops) {
      return makeNode(Op::Call, Type{t, false, s}, std::move(ops), fn);
    };
    auto u32 = [](int64_t v) { return constNode(DType::U32, Value::intV(v)); };
    auto i32 = [](int64_t v) { return constNode(DType::I32, Value::intV(v)); };
    NodeP seed64 = castTo(seed, DType::I64);
    auto scalar = [&](const std::string& fn, NodeP x) {
      return makeNode(Op::Call, Type{DType::U32, false, {}}, {std::move(x)}, fn);
    };
    NodeP k0 = scalar("tcl_lo32", seed64), k1 = scalar("tcl_hi32", seed64);
    NodeP c0 = castTo(off, DType::U32);
    NodeP c1 = bitWidth(off->type.dtype) > 32
                   ? call("tcl_hi32", DType::U32, {castTo(off, DType::I64)})
                   : broadcastTo(u32(0), s);
    std::vector<NodeP> lanes;
    for (int lane = 0; lane < 4; ++lane)
      lanes.push_back(call("tcl_philox_lane", DType::U32,
                           {c0, c1, u32(0), u32(0), k0, k1, i32(rounds), i32(lane)}));
    auto tuple = [](std::vector<Value> items) {
      Value r;
      r.kind = Value::Tuple;
      r.items = std::move(items);
      return r;
    };
    if (name == "randint") return Value::tensor(lanes[0]);
    if (name == "randint4x")
      return tuple({Value::tensor(lanes[0]), Value::tensor(lanes[1]), Value::tensor(lanes[2]),
                    Value::tensor(lanes[3])});
    auto uniform = [&](int lane) {
      return Value::tensor(call("tcl_uniform", DType::FP32, {lanes[lane]}));
    };
    if (name == "rand") return uniform(0);
    if (name == "rand4x") return tuple({uniform(0), uniform(1), uniform(2), uniform(3)});
    auto normal = [&](int a, int sine) {
      return Value::tensor(call("tcl_normal", DType::FP32, {lanes[a], lanes[a + 1], i32(sine)}));
    };
    if (name == "randn") return normal(0, 0);
    return tuple({normal(0, 0), normal(0, 1), normal(2, 0), normal(2, 1)});
  }

  /// Whether `e` is a call of tl.dot without an accumulator (looking the callee up has no
  /// effects, so this never emits code).
  bool isPlainDot(const json& e) {
    if (e.at("_type") != "Call" || e.at("args").size() > 2) return false;
    Value f = eval(e.at("func"));
    if (f.kind != Value::Builtin || f.name != "dot") return false;
    for (const auto& a : e.at("args"))
      if (a.at("_type") == "Starred") return false;
    for (const auto& k : e.at("keywords"))
      if (k.at("arg").is_null() || k.at("arg") == "acc") return false;
    return true;
  }

  /// `x + tl.dot(a, b)` (either order; `dotCall` satisfies isPlainDot) as
  /// tl.dot(a, b, acc=x) when x is an accumulator of the product's type: one pass instead of
  /// a product and an addition, as Triton's own compiler combines them.
  Value addDot(const Value& x, const json& dotCall, bool xOnLeft) {
    Args args;
    for (const auto& a : dotCall.at("args")) args.pos.push_back(eval(a));
    for (const auto& k : dotCall.at("keywords")) args.kw[k.at("arg")] = eval(k.at("value"));
    line_ = dotCall.value("lineno", line_);
    const Value *av = args.get(0, "input"), *bv = args.get(1, "other");
    if (x.kind == Value::Tensor && !x.node->type.pointer && av && bv && av->kind == Value::Tensor &&
        bv->kind == Value::Tensor) {
      DType ta = av->node->type.dtype, tb = bv->node->type.dtype;
      DType accT = isInt(ta) ? DType::I32
                             : (ta == DType::FP64 || tb == DType::FP64 ? DType::FP64 : DType::FP32);
      DType outT = args.kw.count("out_dtype") ? dtypeArg(&args.kw.at("out_dtype"), accT) : accT;
      if (x.node->type.dtype == accT && outT == accT) {
        args.kw["acc"] = x;
        return dot(args);
      }
    }
    Value r = dot(args);
    return xOnLeft ? binop("+", x, r) : binop("+", r, x);
  }

  /// tl.argmax / argmin(input, axis, tie_break_left=True, keep_dims=False), and
  /// tl.max / min(..., return_indices=True) (`withValues`: the (value, index) pair).
  Value argReduce(const std::string& kind, const Args& args, bool withValues) {
    bool isMax = kind == "max" || kind == "argmax";
    const Value* xv = args.get(0, "input");
    if (!xv) fail("tl." + kind + " needs an input");
    NodeP x = toTensor(*xv);
    if (x->type.pointer) fail("tl." + kind + " of pointers");
    const Value* tb =
        withValues ? args.get(3, "return_indices_tie_break_left") : args.get(2, "tie_break_left");
    if (tb && tb->isConst() && !tb->i) unsupported("tl." + kind + " without tie_break_left");
    const Value* k = args.get(withValues ? 4 : 3, "keep_dims");
    bool keep = k && k->isConst() && k->i;
    const Value* ax = args.get(1, "axis");
    int rank = static_cast<int>(x->type.shape.size());
    if (rank == 0) fail("tl." + kind + " of a scalar");
    int64_t a = 0;
    bool flat = !ax || ax->kind == Value::None;
    if (flat) {  // over every axis: the index into the row-major flattened block
      x = reshape(x, {numel(x->type.shape)}, kind);
    } else {
      a = constInt(ax, "axis");
      if (a < 0) a += rank;
      if (a < 0 || a >= rank)
        fail("axis " + std::to_string(ax->i) + " out of range for a block of rank " +
             std::to_string(rank));
    }
    auto [val, idx] = cg_.argReduce(isMax, x, static_cast<int>(a));
    if (keep && flat) {
      for (int d = 0; d < rank; ++d) {
        val = expandDims(val, 0);
        idx = expandDims(idx, 0);
      }
    } else if (keep) {
      val = expandDims(val, static_cast<int>(a));
      idx = expandDims(idx, static_cast<int>(a));
    }
    if (!withValues) return Value::tensor(idx);
    Value r;
    r.kind = Value::Tuple;
    r.items = {Value::tensor(val), Value::tensor(idx)};
    return r;
  }

  /// tl.trans / tl.permute / x.T: `dims` a permutation of the block's dims; empty reverses
  /// them (Triton's trans of an n-D block).
  NodeP transpose(const NodeP& n, std::vector<int64_t> dims, const std::string& name) {
    const int rank = static_cast<int>(n->type.shape.size());
    if (rank == 0) fail("tl." + name + " of a scalar");
    if (dims.empty())
      for (int d = rank - 1; d >= 0; --d) dims.push_back(d);
    std::vector<int> perm;
    std::vector<bool> seen(rank, false);
    for (auto d : dims) {
      if (d < 0) d += rank;
      if (d < 0 || d >= rank || seen[d] || dims.size() != static_cast<size_t>(rank))
        fail("tl." + name + ": dims must be a permutation of the block's " + std::to_string(rank) +
             " dimensions");
      seen[d] = true;
      perm.push_back(static_cast<int>(d));
    }
    bool identity = true;
    for (int d = 0; d < rank; ++d) identity = identity && perm[d] == d;
    if (identity) return n;
    Type t = n->type;
    for (int d = 0; d < rank; ++d) t.shape[d] = n->type.shape[perm[d]];
    auto r = makeNode(Op::Transpose, t, {n});
    const_cast<Node&>(*r).perm = perm;
    return r;
  }

  /// tl.reshape / tl.view (row-major order is kept, so every reorder-free reshape is exact).
  NodeP reshape(const NodeP& n, const Shape& to, const std::string& name) {
    if (n->type.pointer) fail("tl." + name + " of pointers");
    if (numel(n->type.shape) != numel(to))
      fail("tl." + name + ": cannot reshape a block of shape " + shapeString(n->type.shape) +
           " to " + shapeString(to) + " (different sizes)");
    if (n->type.shape == to) return n;
    Type t = n->type;
    t.shape = to;
    return makeNode(Op::Reshape, t, {n});
  }

  /// The shape given to reshape/view/broadcast_to: a tuple, or the dims as separate arguments.
  Shape shapeFromArgs(const Args& args, const char* kwName) {
    Shape s;
    auto add = [&](const Value& v) {
      if (v.kind == Value::Tuple)
        for (const auto& d : v.items) s.push_back(constInt(&d, "a block dimension"));
      else
        s.push_back(constInt(&v, "a block dimension"));
    };
    for (size_t k = 1; k < args.pos.size(); ++k) add(args.pos[k]);
    if (args.kw.count(kwName)) add(args.kw.at(kwName));
    for (auto d : s)
      if (d <= 0) fail("block dimensions must be positive, got " + shapeString(s));
    return s;
  }

  NodeP expandDims(const NodeP& n, int axis) {
    Type t = n->type;
    t.shape.insert(t.shape.begin() + axis, 1);
    auto e = makeNode(Op::ExpandDims, t, {n});
    const_cast<Node&>(*e).axis = axis;
    return e;
  }

  /// A `tl.*` (or Python builtin, `py.*`) call, by name: the aliases first, then one handler
  /// per builtin from the table, and the atomics by prefix.
  Value callBuiltin(std::string name, const Args& args, const std::string& spelled) {
    static const std::map<std::string, std::string> aliases = {
        {"div_rn", "/"}, {"fdiv", "/"}, {"sqrt_rn", "sqrt"}, {"fabs", "abs"}};
    if (auto it = aliases.find(name); it != aliases.end() && it->second != "/") name = it->second;
    if (name.rfind("atomic_", 0) == 0) return atomic(name.substr(7), args);
    const auto& table = builtins();
    if (auto it = table.find(name); it != table.end())
      return (this->*(it->second))(name, args, spelled);
    unsupported(spelled);
  }

  using Builtin = Value (Frontend::*)(const std::string& name, const Args& args,
                                      const std::string& spelled);

  static const std::map<std::string, Builtin>& builtins() {
    static const std::map<std::string, Builtin> table = [] {
      std::map<std::string, Builtin> t = {
          {"program_id", &Frontend::builtinProgramId},
          {"num_programs", &Frontend::builtinProgramId},
          {"arange", &Frontend::builtinArange},
          {"load", &Frontend::builtinLoad},
          {"store", &Frontend::builtinStore},
          {"where", &Frontend::builtinWhere},
          {"maximum", &Frontend::builtinMinMax},
          {"minimum", &Frontend::builtinMinMax},
          {"abs", &Frontend::builtinMath},
          {"fma", &Frontend::builtinFma},
          {"dot", &Frontend::builtinDot},
          {"reduce", &Frontend::builtinReduceCombine},
          {"associative_scan", &Frontend::builtinReduceCombine},
          {"cumprod", &Frontend::builtinCumprod},
          {"argmax", &Frontend::builtinArgReduce},
          {"argmin", &Frontend::builtinArgReduce},
          {"cumsum", &Frontend::builtinCumsum},
          {"trans", &Frontend::builtinPermute},
          {"permute", &Frontend::builtinPermute},
          {"reshape", &Frontend::builtinReshape},
          {"view", &Frontend::builtinReshape},
          {"expand_dims", &Frontend::builtinExpandDims},
          {"broadcast_to", &Frontend::builtinBroadcastTo},
          {"broadcast", &Frontend::builtinBroadcast},
          {"sum", &Frontend::builtinReduce},
          {"max", &Frontend::builtinReduce},
          {"min", &Frontend::builtinReduce},
          {"zeros", &Frontend::builtinFull},
          {"full", &Frontend::builtinFull},
          {"cdiv", &Frontend::builtinCdiv},
          {"cast", &Frontend::builtinCast},
          {"py.float", &Frontend::builtinPyFloat},
          {"py.int", &Frontend::builtinPyInt},
          {"py.min", &Frontend::builtinPyMinMax},
          {"py.max", &Frontend::builtinPyMinMax},
      };
      for (const char* math :
           {"exp",   "exp2", "log",  "log2",  "sqrt", "rsqrt", "sin",     "cos",
            "tan",   "tanh", "erf",  "floor", "ceil", "trunc", "sigmoid", "log1p",
            "expm1", "sinh", "cosh", "asin",  "acos", "atan",  "log10",   "cbrt"})
        t[math] = &Frontend::builtinMath;
      for (const char* random : {"rand", "randn", "randint", "rand4x", "randn4x", "randint4x"})
        t[random] = &Frontend::builtinRandom;
      // Hints about the operand: it is the result.
      for (const char* hint : {"multiple_of", "max_contiguous", "max_constancy"})
        t[hint] = &Frontend::builtinHint;
      for (const char* none : {"debug_barrier", "static_print", "static_assert"})
        t[none] = &Frontend::builtinNothing;
      return t;
    }();
    return table;
  }

  Value builtinProgramId(const std::string& name, const Args& args, const std::string&) {
    int64_t axis = constInt(args.get(0, "axis"), "axis");
    if (axis < 0 || axis > 2) fail("axis must be 0, 1 or 2");
    return Value::tensor(name == "program_id" ? cg_.programId(static_cast<int>(axis))
                                              : cg_.numPrograms(static_cast<int>(axis)));
  }

  Value builtinArange(const std::string&, const Args& args, const std::string&) {
    int64_t lo = constInt(args.get(0, "start"), "tl.arange's start"),
            hi = constInt(args.get(1, "end"), "tl.arange's end");
    int64_t n = hi - lo;
    if (n <= 0 || (n & (n - 1)))
      fail("tl.arange's range must be a power of 2, got " + std::to_string(n));
    auto node = makeNode(Op::Arange, Type{DType::I32, false, {n}});
    const_cast<Node&>(*node).ival = lo;
    return Value::tensor(node);
  }

  Value builtinLoad(const std::string&, const Args& args, const std::string&) { return load(args); }

  Value builtinStore(const std::string&, const Args& args, const std::string&) {
    store(args);
    return Value{};
  }

  Value builtinWhere(const std::string&, const Args& args, const std::string&) {
    const Value *c = args.get(0, "condition"), *x = args.get(1, "x"), *y = args.get(2, "y");
    if (!c || !x || !y) fail("tl.where needs condition, x and y");
    NodeP cn = castTo(toTensor(*c), DType::I1);
    // Promote x and y like a binary operation (weak constants included).
    Value probe = binop("+", *x, *y);
    DType t = probe.kind == Value::Tensor ? probe.node->type.dtype : toTensor(probe)->type.dtype;
    NodeP xn = x->kind == Value::Tensor ? castTo(x->node, t) : constNode(t, *x);
    NodeP yn = y->kind == Value::Tensor ? castTo(y->node, t) : constNode(t, *y);
    Shape s = shapeOf(cn, xn);
    s = broadcastShapesOr(s, yn->type.shape);
    return Value::tensor(makeNode(Op::Select, Type{t, false, s},
                                  {broadcastTo(cn, s), broadcastTo(xn, s), broadcastTo(yn, s)}));
  }

  Value builtinMinMax(const std::string& name, const Args& args, const std::string&) {
    const Value *x = args.get(0, "x"), *y = args.get(1, "y");
    if (!x || !y) fail("tl." + name + " needs two operands");
    if (args.kw.count("propagate_nan")) unsupported("tl." + name + "(propagate_nan=...)");
    Value r = binop("+", *x, *y);  // type and shape by Triton's promotion
    if (r.kind != Value::Tensor)
      return (name == "maximum") == (foldConst(">", *x, *y).i != 0) ? *x : *y;
    auto& n = const_cast<Node&>(*r.node);
    n.name = name == "maximum" ? "max" : "min";
    return r;
  }

  Value builtinMath(const std::string& name, const Args& args, const std::string&) {
    const Value* x = args.get(0, "x");
    if (!x) fail("tl." + name + " needs an operand");
    if (name == "abs" && x->kind == Value::Tensor && !isFloat(x->node->type.dtype))
      return Value::tensor(makeNode(Op::Unary, x->node->type, {x->node}, "abs"));
    NodeP n = mathArg(*x, name);
    return Value::tensor(makeNode(Op::Unary, n->type, {n}, name));
  }

  Value builtinFma(const std::string&, const Args& args, const std::string&) {
    const Value *x = args.get(0, "x"), *y = args.get(1, "y"), *z = args.get(2, "z");
    if (!x || !y || !z) fail("tl.fma needs three operands");
    Value s = binop("+", binop("*", *x, *y), *z);
    NodeP r = s.kind == Value::Tensor ? s.node : toTensor(s);
    const Shape& sh = r->type.shape;
    DType t = r->type.dtype;
    auto prep = [&](const Value& v) {
      return broadcastTo(v.kind == Value::Tensor ? castTo(v.node, t) : constNode(t, v), sh);
    };
    return Value::tensor(makeNode(Op::Fma, r->type, {prep(*x), prep(*y), prep(*z)}));
  }

  Value builtinDot(const std::string&, const Args& args, const std::string&) { return dot(args); }

  Value builtinReduceCombine(const std::string& name, const Args& args, const std::string&) {
    return reduceCombine("tl." + name, args, name == "associative_scan");
  }

  /// associative_scan with multiplication, bf16 promoted to fp32.
  Value builtinCumprod(const std::string&, const Args& args, const std::string&) {
    const Value* xv = args.get(0, "input");
    if (!xv) fail("tl.cumprod needs an input");
    NodeP x = toTensor(*xv);
    if (x->type.dtype == DType::BF16) x = castTo(x, DType::FP32);
    Args a2;
    a2.pos = {Value::tensor(x), args.get(1, "axis") ? *args.get(1, "axis") : Value::intV(0),
              Value{}, args.get(2, "reverse") ? *args.get(2, "reverse") : Value::boolV(false)};
    return reduceCombine("tl.cumprod", a2, true,
                         [&](const std::vector<Value>& v) { return binop("*", v[0], v[1]); });
  }

  Value builtinArgReduce(const std::string& name, const Args& args, const std::string&) {
    return argReduce(name, args, false);
  }

  Value builtinCumsum(const std::string&, const Args& args, const std::string&) {
    const Value* xv = args.get(0, "input");
    if (!xv) fail("tl.cumsum needs an input");
    NodeP x = toTensor(*xv);
    if (x->type.pointer || x->type.shape.empty()) fail("tl.cumsum needs a block of numbers");
    DType t = x->type.dtype;  // Triton's _pick_sum_dtype after bf16 -> fp32
    if (t == DType::BF16) t = DType::FP32;
    if (t == DType::I1 || t == DType::I8 || t == DType::I16) t = DType::I32;
    t = dtypeArg(args.get(3, "dtype"), t);
    int rank = static_cast<int>(x->type.shape.size());
    const Value* ax = args.get(1, "axis");
    int64_t a = ax && ax->kind != Value::None ? constInt(ax, "axis") : 0;
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) fail("tl.cumsum: axis out of range");
    const Value* rv = args.get(2, "reverse");
    return Value::tensor(
        cg_.cumsum(castTo(x, t), static_cast<int>(a), rv && rv->isConst() && rv->i));
  }

  Value builtinPermute(const std::string& name, const Args& args, const std::string&) {
    const Value* xv = args.get(0, "input");
    if (!xv || xv->kind != Value::Tensor) fail("tl." + name + " needs a block");
    std::vector<int64_t> dims;
    for (size_t k = 1; k < args.pos.size(); ++k) {
      if (args.pos[k].kind == Value::Tuple)
        for (const auto& d : args.pos[k].items) dims.push_back(constInt(&d, "a dimension"));
      else
        dims.push_back(constInt(&args.pos[k], "a dimension"));
    }
    if (args.kw.count("dims"))
      for (const auto& d : args.kw.at("dims").items) dims.push_back(constInt(&d, "a dimension"));
    return Value::tensor(transpose(xv->node, dims, name));
  }

  Value builtinReshape(const std::string& name, const Args& args, const std::string&) {
    const Value* xv = args.get(0, "input");
    if (!xv || !(xv->kind == Value::Tensor || xv->isConst())) fail("tl." + name + " needs a block");
    if (const Value* cr = args.kw.count("can_reorder") ? &args.kw.at("can_reorder") : nullptr;
        cr && !cr->isConst())
      fail("tl." + name + ": can_reorder must be a constexpr");
    return Value::tensor(reshape(toTensor(*xv), shapeFromArgs(args, "shape"), name));
  }

  Value builtinExpandDims(const std::string&, const Args& args, const std::string&) {
    const Value* xv = args.get(0, "input");
    const Value* av = args.get(1, "axis");
    if (!xv || !av) fail("tl.expand_dims needs an input and an axis");
    NodeP x = toTensor(*xv);
    std::vector<int64_t> axes;
    if (av->kind == Value::Tuple)
      for (const auto& d : av->items) axes.push_back(constInt(&d, "an axis"));
    else
      axes.push_back(constInt(av, "an axis"));
    const int64_t newRank = static_cast<int64_t>(x->type.shape.size() + axes.size());
    for (auto& a : axes) {
      if (a < 0) a += newRank;
      if (a < 0 || a >= newRank)
        fail("tl.expand_dims: axis out of range for a result of rank " + std::to_string(newRank));
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
      fail("tl.expand_dims: repeated axis");
    for (auto a : axes) x = expandDims(x, static_cast<int>(a));
    return Value::tensor(x);
  }

  Value builtinBroadcastTo(const std::string&, const Args& args, const std::string&) {
    const Value* xv = args.get(0, "input");
    if (!xv) fail("tl.broadcast_to needs an input");
    NodeP x = toTensor(*xv);
    Shape to = shapeFromArgs(args, "shape");
    if (to.size() < x->type.shape.size() || broadcastShapesOr(x->type.shape, to) != to)
      fail("tl.broadcast_to: cannot broadcast a block of shape " + shapeString(x->type.shape) +
           " to " + shapeString(to));
    return Value::tensor(broadcastTo(x, to));
  }

  Value builtinBroadcast(const std::string&, const Args& args, const std::string&) {
    const Value *xv = args.get(0, "input"), *yv = args.get(1, "other");
    if (!xv || !yv) fail("tl.broadcast needs two operands");
    NodeP x = toTensor(*xv), y = toTensor(*yv);
    Shape s = shapeOf(x, y);
    Value r;
    r.kind = Value::Tuple;
    r.items = {Value::tensor(broadcastTo(x, s)), Value::tensor(broadcastTo(y, s))};
    return r;
  }

  Value builtinRandom(const std::string& name, const Args& args, const std::string&) {
    return random(name, args);
  }

  Value builtinReduce(const std::string& name, const Args& args, const std::string&) {
    return reduce(name, args);
  }

  Value builtinFull(const std::string& name, const Args& args, const std::string&) {
    Shape s = shapeArg(args.get(0, "shape"));
    Value v =
        name == "zeros" ? Value::intV(0) : (args.get(1, "value") ? *args.get(1, "value") : Value{});
    DType t = dtypeArg(args.get(name == "zeros" ? 1 : 2, "dtype"), DType::FP32);
    if (!v.isConst()) fail("tl.full's value must be a constexpr");
    return Value::tensor(broadcastTo(constNode(t, v), s));
  }

  Value builtinCdiv(const std::string&, const Args& args, const std::string&) {
    const Value *x = args.get(0, "x"), *d = args.get(1, "div");
    if (!x || !d) fail("tl.cdiv needs two operands");
    return binop("//", binop("-", binop("+", *x, *d), Value::intV(1)), *d);
  }

  Value builtinHint(const std::string& name, const Args& args, const std::string&) {
    const Value* x = args.get(0, "input");
    if (!x) fail("tl." + name + " needs an input");
    return *x;
  }

  Value builtinNothing(const std::string&, const Args&, const std::string&) { return Value{}; }

  Value builtinCast(const std::string&, const Args& args, const std::string&) {
    const Value* x = args.get(0, "input");
    if (!x) fail("tl.cast needs an input");
    return Value::tensor(castTo(toTensor(*x), dtypeArg(args.get(1, "dtype"), DType::FP32)));
  }

  Value builtinPyFloat(const std::string&, const Args& args, const std::string&) {
    const Value* x = args.get(0, "x");
    if (x && x->kind == Value::Str) {
      std::string s = x->name;
      for (auto& ch : s) ch = static_cast<char>(std::tolower(ch));
      if (s == "inf" || s == "+inf") return Value::floatV(INFINITY);
      if (s == "-inf") return Value::floatV(-INFINITY);
      if (s == "nan") return Value::floatV(NAN);
      return Value::floatV(std::stod(s));
    }
    if (x && x->isConst())
      return Value::floatV(x->kind == Value::Float ? x->f : static_cast<double>(x->i));
    fail("float() of a tensor");
  }

  Value builtinPyInt(const std::string&, const Args& args, const std::string&) {
    const Value* x = args.get(0, "x");
    if (x && x->isConst())
      return Value::intV(x->kind == Value::Float ? static_cast<int64_t>(x->f) : x->i);
    fail("int() of a tensor");
  }

  /// Triton's builtin_min/max: constexprs fold, tensors go through tl.minimum/maximum.
  Value builtinPyMinMax(const std::string& name, const Args& args, const std::string& spelled) {
    if (args.pos.size() < 2) unsupported(spelled);
    Value acc = args.pos[0];
    for (size_t k = 1; k < args.pos.size(); ++k) {
      Args pair;
      pair.pos = {acc, args.pos[k]};
      acc = callBuiltin(name == "py.max" ? "maximum" : "minimum", pair, spelled);
    }
    return acc;
  }

  Shape broadcastShapesOr(const Shape& a, const Shape& b) {
    try {
      return broadcastShapes(a, b);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }

  Value load(const Args& args) {
    const Value* pv = args.get(0, "pointer");
    if (!pv || pv->kind != Value::Tensor || !pv->node->type.pointer)
      fail("tl.load expects a pointer or a block of pointers");
    const Value* mv = args.get(1, "mask");
    const Value* ov = args.get(2, "other");
    for (const char* k : {"boundary_check", "padding_option"})
      if (args.kw.count(k) && args.kw.at(k).kind != Value::None &&
          !(args.kw.at(k).kind == Value::Tuple && args.kw.at(k).items.empty()) &&
          !(args.kw.at(k).kind == Value::Str && args.kw.at(k).name.empty()))
        unsupported(std::string("tl.load(") + k + "=...)");
    NodeP p = pv->node;
    NodeP m, o;
    Shape s = p->type.shape;
    if (mv && mv->kind != Value::None) {
      m = castTo(toTensor(*mv), DType::I1);
      s = broadcastShapesOr(s, m->type.shape);
    }
    DType t = p->type.dtype;
    if (ov && ov->kind != Value::None) {
      if (!m) fail("tl.load: `other` without `mask`");
      o = ov->kind == Value::Tensor ? castTo(ov->node, t) : constNode(t, *ov);
      s = broadcastShapesOr(s, o->type.shape);
    }
    p = broadcastTo(p, s);
    if (m) m = broadcastTo(m, s);
    if (o) o = broadcastTo(o, s);
    auto ld = makeNode(Op::Load, Type{t, false, s}, {p, m, o});
    const_cast<Node&>(*ld).line = line_;
    return Value::tensor(ld);
  }

  void store(const Args& args) {
    const Value* pv = args.get(0, "pointer");
    const Value* vv = args.get(1, "value");
    const Value* mv = args.get(2, "mask");
    if (!pv || pv->kind != Value::Tensor || !pv->node->type.pointer)
      fail("tl.store expects a pointer or a block of pointers");
    if (!vv) fail("tl.store needs a value");
    if (args.kw.count("boundary_check")) unsupported("tl.store(boundary_check=...)");
    NodeP p = pv->node;
    DType t = p->type.dtype;
    NodeP v = vv->kind == Value::Tensor ? castTo(vv->node, t) : constNode(t, *vv);
    if (v->type.pointer) fail("tl.store of a pointer value");
    Shape s = broadcastShapesOr(p->type.shape, v->type.shape);
    NodeP m;
    if (mv && mv->kind != Value::None) {
      m = castTo(toTensor(*mv), DType::I1);
      s = broadcastShapesOr(s, m->type.shape);
    }
    if (s != p->type.shape)
      fail("tl.store: value shape " + shapeString(v->type.shape) +
           " does not fit the pointer block " + shapeString(p->type.shape));
    // Loads not yet evaluated must read memory as it was before this store.
    materializePendingLoads(true);
    cg_.store(p, broadcastTo(v, s), m ? broadcastTo(m, s) : nullptr, line_);
  }

  /// tl.atomic_add / max / min / and / or / xor / xchg (pointer, val, mask=None, sem=None,
  /// scope=None) and tl.atomic_cas(pointer, cmp, val, sem=None, scope=None): the old values.
  Value atomic(const std::string& op, const Args& args) {
    static const std::set<std::string> ops = {"add", "max", "min",  "and",
                                              "or",  "xor", "xchg", "cas"};
    const std::string what = "tl.atomic_" + op;
    if (!ops.count(op)) unsupported(what);
    const bool cas = op == "cas";
    const Value* pv = args.get(0, "pointer");
    if (!pv || pv->kind != Value::Tensor || !pv->node->type.pointer)
      fail(what + " expects a pointer or a block of pointers");
    const Value* vv = args.get(cas ? 2 : 1, "val");
    const Value* cv = cas ? args.get(1, "cmp") : nullptr;
    const Value* mv = cas ? nullptr : args.get(2, "mask");
    if (!vv || (cas && !cv)) fail(what + (cas ? " needs cmp and val" : " needs a value"));
    static const std::set<std::string> sems = {"acquire", "release", "acq_rel", "relaxed"};
    static const std::set<std::string> scopes = {"gpu", "cta", "sys"};
    for (auto [key, pos, allowed] :
         {std::tuple{"sem", 3, &sems}, std::tuple{"scope", 4, &scopes}}) {
      const Value* x = args.get(pos, key);
      if (!x || x->kind == Value::None) continue;
      if (x->kind != Value::Str || !allowed->count(x->name))
        fail(what + ": unknown " + key + " " +
             (x->kind == Value::Str ? "'" + x->name + "'" : "value"));
    }
    NodeP p = pv->node;
    const DType t = p->type.dtype;
    if (t == DType::I1 || bitWidth(t) < 16 || t == DType::I16)
      fail(what + " does not support " + dtypeName(t));
    if ((t == DType::FP16 || t == DType::BF16) && op != "add")
      fail(what + " does not support " + dtypeName(t));
    if (isFloat(t) && (op == "and" || op == "or" || op == "xor"))
      fail(what + " does not support floating-point " + dtypeName(t));
    const Shape& s = p->type.shape;
    auto operand = [&](const Value& v, const char* name) {
      NodeP n = v.kind == Value::Tensor ? castTo(v.node, t) : constNode(t, v);
      if (n->type.pointer) fail(what + ": " + name + " is a pointer");
      if (broadcastShapesOr(n->type.shape, s) != s)
        fail(what + ": " + name + " of shape " + shapeString(n->type.shape) +
             " does not fit the pointer block " + shapeString(s));
      return broadcastTo(n, s);
    };
    NodeP val = operand(*vv, "val"), cmp = cas ? operand(*cv, "cmp") : nullptr, m;
    if (mv && mv->kind != Value::None) {
      m = castTo(toTensor(*mv), DType::I1);
      if (broadcastShapesOr(m->type.shape, s) != s)
        fail(what + ": mask of shape " + shapeString(m->type.shape) +
             " does not fit the pointer block " + shapeString(s));
      m = broadcastTo(m, s);
    }
    materializePendingLoads(true);  // loads before the atomic read memory as it was
    return Value::tensor(cg_.atomic(op, p, val, cmp, m, line_));
  }

  /// Evaluates the named blocks that still contain loads and that later statements may read
  /// (a dead name costs nothing). At a bare tl.store its own operands are already evaluated.
  void materializePendingLoads(bool atStore = false) {
    for (size_t f = 0; f < frames_.size(); ++f) {
      std::set<std::string> live = ahead_.namesAhead(f, atStore && ahead_.currentIsCallOf("store"));
      for (auto& [name, v] : frames_[f])
        if (v.kind == Value::Tensor && v.node->hasLoad && v.node->op != Op::Array &&
            v.node->op != Op::Var && live.count(name))
          v.node = cg_.materialize(v.node);
    }
  }

  /// Whether computing `n`'s values (its loads' addresses aside) costs more than a few
  /// instructions per element (a transcendental or a prelude call), so that a block read twice
  /// is better computed once.
  static bool costlyValue(const NodeP& n, std::set<const Node*>& seen) {
    if (!n || !seen.insert(n.get()).second || n->op == Op::Load) return false;
    if (costlyOp(*n) && !(n->op == Op::Binary && !isFloat(n->type.dtype))) return true;
    for (const auto& o : n->ops)
      if (costlyValue(o, seen)) return true;
    return false;
  }

  /// A transcendental, a prelude call or an integer division (tens of cycles each).
  static bool costlyOp(const Node& n) {
    static const std::set<std::string> cheap = {"-",    "~",     "not",   "abs",   "floor",
                                                "ceil", "trunc", "isnan", "isinf", "signbit"};
    return n.op == Op::Call || (n.op == Op::Unary && !cheap.count(n.name)) ||
           (n.op == Op::Binary && !isFloat(n.type.dtype) && (n.name == "//" || n.name == "%"));
  }

  /// Before a runtime loop: the costly, load-free block subexpressions of the values the loop
  /// reads (index math such as `offs // OW % OH`, or a matmul's `offs_am % M`) are computed
  /// once into storage that the loop body reads instead of redoing them every iteration.
  void hoistInvariants(const json& loop) {
    std::set<const Node*> seen;
    std::function<void(const NodeP&)> visit = [&](const NodeP& n) {
      if (!n || n->hasLoad || n->type.shape.empty() || !seen.insert(n.get()).second) return;
      if (n->op == Op::Array || n->op == Op::Var) return;
      if (costlyOp(*n) && !n->type.pointer && numel(n->type.shape) <= kMaxHoistedElements) {
        NodeP stored = cg_.materialize(n, true);
        if (auto [fast, when] = wrapFreeForm(n); fast)
          cg_.substitute(n, stored, fast, when);
        else
          cg_.substitute(n, stored);
        return;
      }
      for (const auto& o : n->ops) visit(o);
    };
    for (const auto& name : ahead_.namesIn(loop)) {
      auto it = frames_.back().find(name);
      if (it == frames_.back().end()) continue;
      if (it->second.kind == Value::Tensor) visit(it->second.node);
    }
  }
  static constexpr int64_t kMaxHoistedElements = 16384;

  /// `(s + tl.arange(a, b)) % m` (s, m integer scalars; the tutorial matmul's `offs_am`) is
  /// `s + arange` whenever 0 <= s + a and s + b <= m: that form and the C condition (its
  /// scalars computed now), or a null node.
  std::pair<NodeP, std::string> wrapFreeForm(const NodeP& n) {
    if (n->op != Op::Binary || n->name != "%" || n->type.shape.size() != 1) return {};
    const NodeP& sum = n->ops[0];
    NodeP m = n->ops[1];
    if (m->op == Op::Broadcast) m = m->ops[0];
    if (!m->type.shape.empty() || sum->op != Op::Binary || sum->name != "+") return {};
    NodeP s = sum->ops[0], r = sum->ops[1];
    if (s->op == Op::Arange) std::swap(s, r);
    if (s->op == Op::Broadcast) s = s->ops[0];
    if (r->op != Op::Arange || !s->type.shape.empty()) return {};
    NodeP sv = cg_.materialize(castTo(s, DType::I64), true);
    NodeP mv = cg_.materialize(castTo(m, DType::I64), true);
    std::string lo = std::to_string(r->ival), hi = std::to_string(r->ival + n->type.shape[0]);
    std::string when =
        "(" + sv->name + " + " + lo + " >= 0 && " + sv->name + " + " + hi + " <= " + mv->name + ")";
    return {sum, when};
  }

  Value callJit(const std::string& fname, const Args& args) {
    const json& fn = function(fname, line_);
    const json& a = fn.at("args");
    const json& params = a.at("args");
    const json& defaults = a.value("defaults", json::array());
    Scope scope;
    size_t firstDefault = params.size() - defaults.size();
    for (size_t k = 0; k < params.size(); ++k) {
      std::string pname = params[k].at("arg");
      if (const Value* v = args.get(k, pname))
        scope[pname] = *v;
      else if (k >= firstDefault)
        scope[pname] = eval(defaults[k - firstDefault]);
      else
        fail(fname + "() missing argument '" + pname + "'");
    }
    if (args.pos.size() > params.size())
      fail(fname + "() takes " + std::to_string(params.size()) + " arguments");
    if (frames_.size() > 64) fail("recursion is not supported");
    int savedLine = line_;
    bool savedKernel = inKernel_;
    int savedDepth = depth_, savedLoops = loopDepth_;
    inKernel_ = false;
    depth_ = 0;
    loopDepth_ = 0;
    frames_.push_back(std::move(scope));
    rets_.emplace_back();
    if (returnsInControlFlow(fn.at("body"), false))  // may need the flag of an early return
      rets_.back().flag = cg_.makeMutable(constNode(DType::I1, Value::boolV(false)));
    Value result;
    try {
      execBlock(fn.at("body"));
    } catch (ReturnSignal& r) {
      result = r.value;
    }
    if (rets_.back().active) result = rets_.back().value();
    rets_.pop_back();
    frames_.pop_back();
    inKernel_ = savedKernel;
    depth_ = savedDepth;
    loopDepth_ = savedLoops;
    line_ = savedLine;
    cg_.setPythonLine(line_);  // the rest of the calling statement is the caller's line
    return result;
  }

  Value call(const json& e) {
    Value f = eval(e.at("func"));
    Args args;
    for (const auto& a : e.at("args")) {
      if (a.at("_type") == "Starred") unsupported("*args in a call");
      args.pos.push_back(eval(a));
    }
    for (const auto& k : e.at("keywords")) {
      if (k.at("arg").is_null()) unsupported("**kwargs in a call");
      args.kw[k.at("arg")] = eval(k.at("value"));
    }
    if (f.kind == Value::Builtin) return callBuiltin(f.name, args, spelling(e.at("func")));
    if (f.kind == Value::JitFn) return callJit(f.name, args);
    if (f.kind == Value::Method) {
      Value self = Value::tensor(f.node);
      if (f.name == "to") {
        DType to = dtypeArg(args.get(0, "dtype"), f.node->type.dtype);
        const Value* bc = args.get(2, "bitcast");
        if (bc && bc->isConst() && bc->i) return Value::tensor(bitcast(f.node, to));
        return Value::tensor(castTo(f.node, to));
      }
      static const std::set<std::string> methods = {
          "sum",     "max",     "min",         "argmax",  "argmin",       "trans",
          "permute", "cumsum",  "reshape",     "view",    "reduce",       "exp",
          "exp2",    "log",     "log2",        "sqrt",    "abs",          "sin",
          "cos",     "sigmoid", "expand_dims", "cumprod", "broadcast_to", "associative_scan"};
      if (methods.count(f.name)) {
        Args a2 = args;
        a2.pos.insert(a2.pos.begin(), self);
        return callBuiltin(f.name, a2, "." + f.name + "()");
      }
      unsupported("the tensor method ." + f.name + "()");
    }
    fail(spelling(e.at("func")) + " is not callable in a kernel");
  }

  /// How the user wrote a callee, with `triton.language` shortened to `tl`.
  std::string spelling(const json& e) {
    if (e.at("_type") == "Name") return e.at("id");
    if (e.at("_type") == "Attribute") {
      std::string base = spelling(e.at("value"));
      return base + "." + e.at("attr").get<std::string>();
    }
    return "this call";
  }

  // ---- expressions -------------------------------------------------------------------------

  static std::string opName(const std::string& t) {
    static const std::map<std::string, std::string> ops = {
        {"Add", "+"},     {"Sub", "-"},    {"Mult", "*"},  {"Div", "/"},    {"FloorDiv", "//"},
        {"Mod", "%"},     {"BitAnd", "&"}, {"BitOr", "|"}, {"BitXor", "^"}, {"LShift", "<<"},
        {"RShift", ">>"}, {"Pow", "**"},   {"Eq", "=="},   {"NotEq", "!="}, {"Lt", "<"},
        {"LtE", "<="},    {"Gt", ">"},     {"GtE", ">="},  {"USub", "-"},   {"UAdd", "+"},
        {"Invert", "~"},  {"Not", "not"}};
    auto it = ops.find(t);
    return it == ops.end() ? t : it->second;
  }

  Value eval(const json& e) {
    if (e.contains("lineno")) line_ = e.at("lineno");
    const std::string& t = e.at("_type");
    if (t == "Constant") return fromJsonValue(e.at("value"), line_);
    if (t == "Name") return lookup(e.at("id"));
    if (t == "Attribute") return attribute(eval(e.at("value")), e.at("attr"));
    if (t == "BinOp") {
      if (e.at("op").at("_type") == "Add") {
        const json &l = e.at("left"), &r = e.at("right");
        if (isPlainDot(r)) return addDot(eval(l), r, true);
        if (isPlainDot(l)) return addDot(eval(r), l, false);
      }
      Value a = eval(e.at("left")), b = eval(e.at("right"));
      line_ = e.value("lineno", line_);
      std::string op = opName(e.at("op").at("_type"));
      if (op == "**" || op == "@") unsupported("operator " + op + " on tensors");
      return binop(op, a, b);
    }
    if (t == "UnaryOp") return unop(opName(e.at("op").at("_type")), eval(e.at("operand")));
    if (t == "Compare") {
      if (e.at("ops").size() != 1) unsupported("chained comparisons");
      Value a = eval(e.at("left")), b = eval(e.at("comparators")[0]);
      std::string op = opName(e.at("ops")[0].at("_type"));
      if (op == "Is" || op == "IsNot") {
        bool same = a.kind == b.kind && (a.kind == Value::None || (a.isConst() && a.i == b.i));
        return Value::boolV(op == "Is" ? same : !same);
      }
      if (op == "In" || op == "NotIn") unsupported("'in' comparisons");
      return binop(op, a, b);
    }
    if (t == "BoolOp") {
      std::string op = e.at("op").at("_type") == "And" ? "and" : "or";
      Value acc = eval(e.at("values")[0]);
      for (size_t k = 1; k < e.at("values").size(); ++k) {
        if (acc.isConst()) {  // Python short-circuit on constexprs
          bool truth = acc.kind == Value::Float ? acc.f != 0 : acc.i != 0;
          if ((op == "and" && !truth) || (op == "or" && truth)) return acc;
          acc = eval(e.at("values")[k]);
          continue;
        }
        Value b = eval(e.at("values")[k]);
        if (acc.kind != Value::Tensor || !acc.node->type.shape.empty())
          fail("'" + op + "' on blocks (use & and |)");
        NodeP x = castTo(acc.node, DType::I1), y = castTo(toTensor(b), DType::I1);
        if (!y->type.shape.empty()) fail("'" + op + "' on blocks (use & and |)");
        acc = Value::tensor(makeNode(Op::Binary, Type{DType::I1, false, {}}, {x, y}, op));
      }
      return acc;
    }
    if (t == "Call") return call(e);
    if (t == "Tuple" || t == "List") {
      Value r;
      r.kind = Value::Tuple;
      for (const auto& x : e.at("elts")) r.items.push_back(eval(x));
      return r;
    }
    if (t == "IfExp") {
      Value c = eval(e.at("test"));
      if (!c.isConst()) unsupported("a conditional expression on a runtime value");
      return (c.kind == Value::Float ? c.f != 0 : c.i != 0) ? eval(e.at("body"))
                                                            : eval(e.at("orelse"));
    }
    if (t == "Subscript") return subscript(e);
    if (t == "Slice") {
      if (!e.at("lower").is_null() || !e.at("upper").is_null() || !e.at("step").is_null())
        unsupported("slicing with bounds");
      Value r;
      r.kind = Value::Slice;
      return r;
    }
    if (t == "JoinedStr") return Value::named(Value::Str, "");
    unsupported("'" + t + "'");
  }

  Value subscript(const json& e) {
    Value base = eval(e.at("value"));
    const json& sl = e.at("slice");
    if (base.kind == Value::Tuple) {
      Value k = eval(sl);
      int64_t i = constInt(&k, "a tuple index");
      if (i < 0) i += static_cast<int64_t>(base.items.size());
      if (i < 0 || i >= static_cast<int64_t>(base.items.size())) fail("tuple index out of range");
      return base.items[i];
    }
    if (base.kind != Value::Tensor) fail("subscript of a non-tensor");
    std::vector<json> elts;
    if (sl.at("_type") == "Tuple")
      for (const auto& x : sl.at("elts")) elts.push_back(x);
    else
      elts.push_back(sl);
    NodeP n = base.node;
    int dim = 0;
    for (const auto& x : elts) {
      Value v = eval(x);
      if (v.kind == Value::None) {
        n = expandDims(n, dim);
        ++dim;
      } else if (v.kind == Value::Slice) {
        ++dim;
      } else {
        unsupported("indexing a block with values (only None and : are allowed)");
      }
    }
    if (dim - static_cast<int>(elts.size()) + static_cast<int>(base.node->type.shape.size()) <
            static_cast<int>(elts.size()) - 0 &&
        static_cast<int>(n->type.shape.size()) < dim)
      fail("too many indices for a block of shape " + shapeString(base.node->type.shape));
    return Value::tensor(n);
  }

  // ---- statements --------------------------------------------------------------------------

  /// Compiles `body`'s statements from `from` on.
  void execBlock(const json& body, size_t from = 0) {
    LookaheadScope scope(ahead_, body, frames_.size() - 1);
    for (size_t k = from; k < body.size(); ++k) {
      ahead_.at(k);
      const int before = rets_.empty() ? 0 : rets_.back().count;
      exec(body[k]);
      if (stopBlock_) {  // a return ended this block
        stopBlock_ = false;
        return;
      }
      if (!rets_.empty() && rets_.back().count != before && k + 1 < body.size()) {
        // A helper's early return may have happened: the rest runs only if it did not.
        execGuarded(body, k + 1);
        return;
      }
    }
  }

  /// The rest of a helper's block (its statements from `from` on) after a statement that may
  /// have returned early. The statements stay in `body` (not a copy) because the Lookahead
  /// caches what a statement mentions by its address.
  void execGuarded(const json& body, size_t from) {
    const NodeP flag = rets_.back().flag;
    const json rest(body.begin() + static_cast<std::ptrdiff_t>(from), body.end());
    auto carried = carryVariables({&rest});
    Scope storage = frames_.back();
    cg_.beginIf(makeNode(Op::Unary, flag->type, {flag}, "not"));
    ++depth_;
    execBlock(body, from);
    std::vector<std::string> dropped;
    writeBack(carried, storage, "in the if branch", &dropped);
    frames_.back() = storage;
    for (const auto& n : dropped) frames_.back().erase(n);
    --depth_;
    cg_.end();
  }

  /// Whether `stmts` hold a return nested in an if, for or while (`nested`: already inside).
  static bool returnsInControlFlow(const json& stmts, bool nested) {
    for (const auto& st : stmts) {
      const std::string& t = st.at("_type");
      if (t == "Return" && nested) return true;
      if ((t == "If" || t == "For" || t == "While") &&
          (returnsInControlFlow(st.at("body"), true) ||
           returnsInControlFlow(st.at("orelse"), true)))
        return true;
    }
    return false;
  }

  /// `return v` inside a helper's runtime control flow: v goes to the call's result storage
  /// (declared at the kernel's top on the first such return) and the call's flag is set.
  void helperReturn(const Value& v) {
    RetSlot& r = rets_.back();
    if (loopDepth_ > 0)
      unsupported("return inside a loop of a @jit helper (Triton does not allow it either)");
    if (!r.flag) fail("internal error: early return without a flag");
    std::vector<Value> items = v.kind == Value::Tuple ? v.items : std::vector<Value>{v};
    const bool none = v.kind == Value::None;
    if (!r.active) {
      r.active = true;
      r.tuple = v.kind == Value::Tuple;
      r.none = none;
      if (!none)
        for (const auto& it : items) {
          if (!(it.kind == Value::Tensor || it.isConst()))
            unsupported("returning this kind of value from runtime control flow in a @jit helper");
          Type t = toTensor(it)->type;
          if (t.pointer)
            unsupported("returning a pointer from runtime control flow in a @jit helper");
          r.storage.push_back(cg_.declareHoisted(t));
        }
    }
    if (none != r.none || r.tuple != (v.kind == Value::Tuple) ||
        (!none && items.size() != r.storage.size()))
      fail("the @jit helper returns values of different kinds on different paths");
    std::vector<NodeP> vals;
    for (size_t j = 0; j < r.storage.size(); ++j) {
      const NodeP& dst = r.storage[j];
      // a constant takes the storage's dtype, unless it is a float for integer storage
      const bool floatIntoInt = items[j].kind == Value::Float && !isFloat(dst->type.dtype);
      NodeP n = items[j].kind == Value::Tensor || floatIntoInt
                    ? toTensor(items[j])
                    : constNode(dst->type.dtype, items[j]);
      if (n->type.pointer != dst->type.pointer || n->type.dtype != dst->type.dtype ||
          broadcastShapesOr(n->type.shape, dst->type.shape) != dst->type.shape)
        fail("the @jit helper returns " + n->type.str() + " here and " + dst->type.str() +
             " on another path");
      vals.push_back(cg_.materialize(broadcastTo(n, dst->type.shape), true));
    }
    for (size_t j = 0; j < vals.size(); ++j) cg_.assign(r.storage[j], vals[j]);
    cg_.assign(r.flag, constNode(DType::I1, Value::boolV(true)));
    ++r.count;
  }

  void execWhile(const json& s) {
    if (!s.at("orelse").empty()) unsupported("while ... else");
    materializePendingLoads();
    hoistInvariants(s);
    auto carried = carryVariables({&s.at("body")});
    Scope storage = frames_.back();
    cg_.beginForever();
    ++depth_;
    ++loopDepth_;
    Value c = eval(s.at("test"));
    if (c.isConst() || c.kind == Value::None) {
      if (c.kind != Value::None && (c.kind == Value::Float ? c.f != 0 : c.i != 0))
        unsupported("a while loop whose condition is always true (Triton has no break)");
      cg_.breakUnless(constNode(DType::I1, Value::boolV(false)));
    } else {
      if (c.kind != Value::Tensor || !c.node->type.shape.empty() || c.node->type.pointer)
        fail("a while condition must be a scalar, got " +
             (c.kind == Value::Tensor ? c.node->type.str() : std::string("a non-tensor")));
      cg_.breakUnless(castTo(c.node, DType::I1));
      execBlock(s.at("body"));
      writeBack(carried, storage, "in the loop");
    }
    --loopDepth_;
    --depth_;
    cg_.end();
    frames_.back() = storage;
  }

  void bind(const json& target, const Value& v) {
    const std::string& t = target.at("_type");
    if (t == "Name") {
      // A named scalar is computed once, here (index math such as program ids would otherwise
      // be recomputed inside every loop that uses it); blocks stay lazy so chains fuse.
      // An expensive block that later statements read twice or more (softmax's exp, used by
      // the sum and the store) is computed once into storage too.
      Value bound = v;
      // The value's own line, for the C line map: where it is evaluated later (ahead of a
      // store, or once for several readers) its code is attributed to this statement.
      if (v.kind == Value::Tensor && v.node->line == 0 && v.node->op != Op::Var &&
          v.node->op != Op::Array && v.node->op != Op::ConstInt && v.node->op != Op::ConstFloat)
        const_cast<Node&>(*v.node).line = line_;
      if (v.kind == Value::Tensor && v.node->type.shape.empty() && v.node->op != Op::Var &&
          v.node->op != Op::ConstInt && v.node->op != Op::ConstFloat)
        bound.node = cg_.materialize(v.node);
      std::set<const Node*> seen;
      if (v.kind == Value::Tensor && !v.node->type.shape.empty() && !v.node->type.pointer &&
          v.node->op != Op::Array && costlyValue(v.node, seen) &&
          ahead_.readsAhead(frames_.size() - 1, target.at("id")) >= 2)
        bound.node = cg_.materialize(v.node);
      frames_.back()[target.at("id")] = bound;
      return;
    }
    if (t == "Tuple" || t == "List") {
      if (v.kind != Value::Tuple || v.items.size() != target.at("elts").size())
        fail("cannot unpack this value");
      for (size_t k = 0; k < v.items.size(); ++k) bind(target.at("elts")[k], v.items[k]);
      return;
    }
    unsupported("assignment to '" + t + "'");
  }

  void exec(const json& s) {
    line_ = s.value("lineno", line_);
    cg_.setPythonLine(line_);
    const std::string& t = s.at("_type");
    if (t == "Expr") {
      eval(s.at("value"));
    } else if (t == "Assign") {
      Value v = eval(s.at("value"));
      for (const auto& target : s.at("targets")) bind(target, v);
    } else if (t == "AnnAssign") {
      if (!s.at("value").is_null()) bind(s.at("target"), eval(s.at("value")));
    } else if (t == "AugAssign") {
      const json& target = s.at("target");
      if (target.at("_type") != "Name")
        unsupported("augmented assignment to '" + target.at("_type").get<std::string>() + "'");
      if (s.at("op").at("_type") == "Add" && affine_.count(target.at("id")) &&
          advanceAffineBy(target.at("id"), eval(s.at("value"))))
        return;
      Value cur = lookup(target.at("id"));
      Value r = s.at("op").at("_type") == "Add" && isPlainDot(s.at("value"))
                    ? addDot(cur, s.at("value"), true)
                    : binop(opName(s.at("op").at("_type")), cur, eval(s.at("value")));
      frames_.back()[target.at("id")] = r;
    } else if (t == "Pass") {
    } else if (t == "Return") {
      Value v = s.at("value").is_null() ? Value{} : eval(s.at("value"));
      if (inKernel_ && depth_ > 0) {
        cg_.earlyReturn();
        stopBlock_ = true;  // the rest of this block is dead
        return;
      }
      if (!inKernel_ && (depth_ > 0 || rets_.back().active)) {
        helperReturn(v);
        stopBlock_ = true;
        return;
      }
      throw ReturnSignal{v};
    } else if (t == "If") {
      execIf(s);
    } else if (t == "For") {
      execFor(s);
    } else if (t == "Assert") {
      // device_assert semantics need a checked mode; constexpr asserts are checked here.
      Value c = eval(s.at("test"));
      if (c.isConst() && !(c.kind == Value::Float ? c.f != 0 : c.i != 0)) fail("assertion failed");
    } else if (t == "While") {
      execWhile(s);
    } else if (t == "Break" || t == "Continue") {
      fail(std::string(t == "Break" ? "break" : "continue") +
           " is not supported: Triton kernels have no break or continue");
    } else {
      unsupported("the statement '" + t + "'");
    }
  }

  static void assignedNames(const json& stmts, std::set<std::string>& out) {
    std::function<void(const json&)> target = [&](const json& t) {
      if (t.at("_type") == "Name")
        out.insert(t.at("id"));
      else if (t.contains("elts"))
        for (const auto& x : t.at("elts")) target(x);
    };
    for (const auto& s : stmts) {
      const std::string& t = s.at("_type");
      if (t == "Assign")
        for (const auto& x : s.at("targets")) target(x);
      if (t == "AugAssign" || t == "AnnAssign") target(s.at("target"));
      if (t == "For") {
        target(s.at("target"));
        assignedNames(s.at("body"), out);
        assignedNames(s.at("orelse"), out);
      }
      if (t == "If" || t == "While") {
        assignedNames(s.at("body"), out);
        assignedNames(s.at("orelse"), out);
      }
    }
  }

  /// Gives each pre-existing variable that `bodies` assign its own mutable storage, so that
  /// control flow can update it; returns the carried names.
  std::vector<std::string> carryVariables(const std::vector<const json*>& bodies,
                                          const std::set<std::string>& skip = {}) {
    std::set<std::string> names;
    for (const auto* b : bodies) assignedNames(*b, names);
    for (const auto& n : skip) names.erase(n);
    std::vector<std::string> carried;
    materializePendingLoads();
    for (const auto& n : names) {
      auto it = frames_.back().find(n);
      if (it == frames_.back().end()) continue;
      Value& v = it->second;
      if (v.kind == Value::Tensor || v.isConst()) {
        v = Value::tensor(cg_.makeMutable(toTensor(v)));
        carried.push_back(n);
      }
    }
    return carried;
  }

  /// At the end of a loop body or branch: writes the carried variables' new values back.
  /// `dropped` (a guarded rest of a helper): a variable that changes type is listed there
  /// instead of failing (the caller forgets it).
  void writeBack(const std::vector<std::string>& carried, const Scope& storage, const char* where,
                 std::vector<std::string>* dropped = nullptr) {
    std::vector<std::pair<NodeP, NodeP>> updates;
    for (const auto& n : carried) {
      const NodeP& dst = storage.at(n).node;
      auto it = frames_.back().find(n);
      Value v = it->second;
      if (v.kind == Value::Tensor && v.node == dst) continue;
      if (!(v.kind == Value::Tensor || v.isConst()))
        fail("variable " + n + " changes kind " + where);
      NodeP nv = v.kind == Value::Tensor ? v.node : constNode(dst->type.dtype, v);
      if (v.kind == Value::Tensor && !(nv->type == dst->type)) {
        if (nv->type.pointer == dst->type.pointer && nv->type.dtype == dst->type.dtype &&
            nv->type.shape.empty() == dst->type.shape.empty() &&
            broadcastShapesOr(nv->type.shape, dst->type.shape) == dst->type.shape)
          nv = broadcastTo(nv, dst->type.shape);
        else if (dropped) {
          dropped->push_back(n);
          continue;
        } else
          fail(std::string(where == std::string("in the loop") ? "Loop-carried variable "
                                                               : "Mismatched type for ") +
               n + " has initial type " + dst->type.str() + " but is assigned " + nv->type.str() +
               " " + where);
      }
      updates.push_back({dst, nv});
    }
    // A new value that reads no other carried storage, and its own only at the element being
    // written, is assigned in place; the others go through temporaries first (they may read
    // storage another update overwrites).
    std::set<std::string> storageNames;
    for (auto& [dst, nv] : updates) storageNames.insert(dst->name);
    std::vector<std::pair<NodeP, NodeP>> temps;
    for (auto& [dst, nv] : updates) {
      bool inPlace = updates.size() == 1 || nv->op == Op::Var || nv->op == Op::Array ||
                     readsOnlyOwnElement(nv, dst->name, storageNames, false);
      temps.push_back({dst, inPlace ? nv : cg_.materialize(nv, true)});
    }
    for (auto& [dst, tmp] : temps) cg_.assign(dst, tmp);
  }

  /// Whether `n` reads none of `storage` but `own`, and `own` only elementwise (not below a
  /// broadcast or an inserted dimension, which read other elements).
  static bool readsOnlyOwnElement(const NodeP& n, const std::string& own,
                                  const std::set<std::string>& storage, bool reindexed) {
    if (!n) return true;
    if (n->op == Op::Var || n->op == Op::Array) {
      if (!storage.count(n->name)) return true;
      return n->name == own && !(reindexed && n->op == Op::Array);
    }
    bool below =
        reindexed || n->op == Op::Broadcast || n->op == Op::ExpandDims || n->op == Op::Transpose;
    for (const auto& o : n->ops)
      if (!readsOnlyOwnElement(o, own, storage, below)) return false;
    return true;
  }

  void execIf(const json& s) {
    Value c = eval(s.at("test"));
    if (c.isConst() || c.kind == Value::None) {
      bool truth = c.kind == Value::Float ? c.f != 0 : (c.kind == Value::None ? false : c.i != 0);
      execBlock(truth ? s.at("body") : s.at("orelse"));
      return;
    }
    if (c.kind != Value::Tensor || !c.node->type.shape.empty())
      fail("if on a block (only scalars can be tested)");
    NodeP cond = castTo(c.node, DType::I1);
    Scope before = frames_.back();
    auto carried = carryVariables({&s.at("body"), &s.at("orelse")});
    Scope storage = frames_.back();
    cg_.beginIf(cond);
    ++depth_;
    execBlock(s.at("body"));
    writeBack(carried, storage, "in the if branch");
    frames_.back() = storage;
    if (!s.at("orelse").empty()) {
      cg_.beginElse();
      execBlock(s.at("orelse"));
      writeBack(carried, storage, "in the else branch");
      frames_.back() = storage;
    }
    --depth_;
    cg_.end();
  }

  /// How many statements in `stmts` (nested ones included) assign `name`.
  static int assignments(const json& stmts, const std::string& name) {
    int count = 0;
    for (const auto& st : stmts) {
      std::set<std::string> names;
      assignedNames(json::array({st}), names);
      count += static_cast<int>(names.count(name));
      if (st.at("_type") == "For" || st.at("_type") == "If" || st.at("_type") == "While")
        count += assignments(st.at("body"), name) + assignments(st.at("orelse"), name);
    }
    return count;
  }

  /// The loop's pointer blocks that are only ever advanced by `p += <scalar>` statements at
  /// the top of its body (the matmul K loop's `a_ptrs += BLOCK_K * stride_ak`). Each is bound
  /// to "its value at loop entry + a carried i64 offset", so an iteration updates one scalar
  /// instead of a block of pointers and loads keep their affine, contiguous addresses.
  std::vector<std::string> affineCarries(const json& loop) {
    std::vector<std::string> out;
    std::map<std::string, int> increments;
    for (const auto& st : loop.at("body"))
      if (st.at("_type") == "AugAssign" && st.at("op").at("_type") == "Add" &&
          st.at("target").at("_type") == "Name")
        ++increments[st.at("target").at("id")];
    for (const auto& [name, count] : increments) {
      std::string key = std::to_string(loop.value("lineno", 0)) + ":" + name;
      auto it = frames_.back().find(name);
      if (noAffine_.count(key) || it == frames_.back().end() || affine_.count(name)) continue;
      const Value& v = it->second;
      if (v.kind != Value::Tensor || !v.node->type.pointer || v.node->type.shape.empty() ||
          v.node->hasLoad || assignments(loop.at("body"), name) != count)
        continue;
      NodeP off = cg_.makeMutable(constNode(DType::I64, Value::intV(0)));
      Type t = v.node->type;
      NodeP start = makeNode(Op::PtrAdd, t, {v.node, broadcastTo(off, t.shape)});
      affine_[name] = {start, off, key, frames_.size()};
      it->second = Value::tensor(start);
      out.push_back(name);
    }
    return out;
  }

  /// `p += d` on an affine pointer block: d must be an integer scalar; it is computed now.
  bool advanceAffineBy(const std::string& name, const Value& d) {
    auto it = affine_.find(name);
    if (it == affine_.end() || it->second.frame != frames_.size()) return false;
    NodeP dn = toTensor(d);
    if (dn->type.pointer || !isInt(dn->type.dtype) || !dn->type.shape.empty())
      throw AffineRetry{it->second.key};
    NodeP cur = lookup(name).node;
    NodeP step = cg_.materialize(castTo(dn, DType::I64), true);
    frames_.back()[name] =
        Value::tensor(makeNode(Op::PtrAdd, cur->type, {cur, broadcastTo(step, cur->type.shape)}));
    return true;
  }

  /// End of an iteration: the offset absorbs this iteration's steps.
  void advanceAffine(const std::string& name) {
    Affine a = affine_.at(name);
    affine_.erase(name);
    NodeP n = lookup(name).node, total;
    while (n != a.start) {
      if (n->op != Op::PtrAdd || n->ops[1]->op != Op::Broadcast) throw AffineRetry{a.key};
      NodeP step = n->ops[1]->ops[0];
      total = total ? makeNode(Op::Binary, step->type, {total, step}, "+") : step;
      n = n->ops[0];
    }
    if (total) cg_.assign(a.offset, makeNode(Op::Binary, a.offset->type, {a.offset, total}, "+"));
  }

  void execFor(const json& s) {
    const json& it = s.at("iter");
    if (!s.at("orelse").empty()) unsupported("for ... else");
    if (s.at("target").at("_type") != "Name") unsupported("a for loop over several targets");
    std::string var = s.at("target").at("id");
    if (it.at("_type") != "Call") unsupported("for loops over anything but range()");
    Value f = eval(it.at("func"));
    if (f.kind != Value::Builtin ||
        (f.name != "py.range" && f.name != "range" && f.name != "static_range"))
      unsupported("for loops over " + spelling(it.at("func")));
    std::vector<Value> a;
    for (const auto& x : it.at("args")) a.push_back(eval(x));
    if (a.empty() || a.size() > 3) fail("range() takes 1 to 3 arguments");
    Value lb = a.size() > 1 ? a[0] : Value::intV(0), ub = a.size() > 1 ? a[1] : a[0],
          st = a.size() > 2 ? a[2] : Value::intV(1);
    bool allConst = lb.isConst() && ub.isConst() && st.isConst();
    if (f.name == "static_range") {
      if (!allConst) fail("tl.static_range needs constexpr bounds");
      if (st.i == 0) fail("range() step must not be zero");
      for (int64_t k = lb.i; st.i > 0 ? k < ub.i : k > ub.i; k += st.i) {
        frames_.back()[var] = Value::intV(k);
        execBlock(s.at("body"));
      }
      return;
    }
    NodeP nlb = toTensor(lb), nub = toTensor(ub), nst = toTensor(st);
    for (const NodeP* n : {&nlb, &nub, &nst})
      if ((*n)->type.pointer || isFloat((*n)->type.dtype) || !(*n)->type.shape.empty())
        fail("range() bounds must be integer scalars");
    DType t = promote(promote(nlb->type.dtype, nub->type.dtype, "+"), nst->type.dtype, "+");
    if (t == DType::I1) t = DType::I32;
    int sign = st.isConst() ? (st.i > 0 ? 1 : (st.i < 0 ? -1 : 0)) : 0;
    if (st.isConst() && st.i == 0) fail("range() step must not be zero");
    Scope before = frames_.back();
    frames_.back().erase(var);
    materializePendingLoads();
    hoistInvariants(s);
    std::vector<std::string> affine = affineCarries(s);
    auto carried = carryVariables({&s.at("body")}, {affine.begin(), affine.end()});
    Scope storage = frames_.back();
    NodeP iv = cg_.declareLoopVar(t);
    cg_.beginFor(iv, castTo(nlb, t), castTo(nub, t), castTo(nst, t), sign);
    ++depth_;
    ++loopDepth_;
    frames_.back()[var] = Value::tensor(iv);
    execBlock(s.at("body"));
    writeBack(carried, storage, "in the loop");
    for (const auto& n : affine) advanceAffine(n);
    --loopDepth_;
    --depth_;
    cg_.end();
    frames_.back() = storage;
    (void)before;
  }

  const json& spec_;
  Codegen cg_;
  std::vector<Scope> frames_;
  Lookahead ahead_;  // the statements still to compile, per frame
  int line_ = 0;
  int depth_ = 0;  // nesting of runtime control flow
  bool inKernel_ = false;
  bool stopBlock_ = false;  // a return just ended the block being executed
  int loopDepth_ = 0;       // runtime loops around the current point of this kernel or helper
  /// The result of a helper call that returns from inside runtime control flow.
  struct RetSlot {
    NodeP flag;                  // i1 storage: set once the call has returned
    std::vector<NodeP> storage;  // the returned value(s)
    bool active = false, tuple = false, none = false;
    int count = 0;  // early returns compiled so far
    Value value() const {
      if (none) return Value{};
      if (!tuple) return Value::tensor(storage.at(0));
      Value t;
      t.kind = Value::Tuple;
      for (const auto& n : storage) t.items.push_back(Value::tensor(n));
      return t;
    }
  };
  std::vector<RetSlot> rets_;
  struct Affine {
    NodeP start;   // the block at loop entry + the offset: what the name is bound to
    NodeP offset;  // the carried i64 scalar (elements)
    std::string key;
    size_t frame;  // the kernel or helper frame the loop is in
  };
  std::map<std::string, Affine> affine_;  // pointer blocks of the loops being compiled
  std::set<std::string> noAffine_;
};

}  // namespace

CompiledSource compileSpec(const nlohmann::json& spec) {
  std::set<std::string> noAffine;
  for (;;) {
    try {
      return Frontend(spec, noAffine).run();
    } catch (const AffineRetry& r) {
      if (!noAffine.insert(r.key).second) throw CompileError(0, "internal error: " + r.key);
    }
  }
}

}  // namespace crucible::tcl
