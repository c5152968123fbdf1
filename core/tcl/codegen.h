#pragma once
// OpenCL C generation for the block IR. The front end drives it statement by statement; blocks
// are emitted as loop nests with literal bounds over fused expressions (one program = one
// work-group of one work-item, research notes §5.2).

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/tcl/ir.h"

namespace crucible::tcl {

/// A runtime parameter of the generated kernel (constexprs are folded away).
struct Param {
  std::string name;
  Type type;  // pointer: Type{dtype, pointer=true}; scalar: {dtype}
};

class Codegen {
 public:
  /// `checked`: every load, store and atomic checks its address against the storage of the
  /// pointer argument it derives from and records the first out-of-bounds one instead of
  /// touching memory (docs/TCL.md, "Bounds-checked mode").
  explicit Codegen(std::string kernelName, bool checked = false)
      : kernelName_(std::move(kernelName)), checked_(checked) {}
  bool checked() const { return checked_; }

  /// Adds a runtime parameter and returns the node naming it.
  NodeP addParam(const std::string& name, const Type& type);
  NodeP programId(int axis);
  NodeP numPrograms(int axis);

  /// Evaluates `n` into fresh storage (an Array, or a Var for scalars) and returns it.
  NodeP materialize(const NodeP& n, bool force = false);
  /// Declares mutable storage initialised from `n` (loop-carried and if-assigned variables).
  NodeP makeMutable(const NodeP& n);
  /// Writes `value` (same type) into the storage node `dst`.
  void assign(const NodeP& dst, const NodeP& value);
  /// tl.store: all operands already broadcast to one shape; value already in the pointee dtype.
  void store(const NodeP& ptr, const NodeP& value, const NodeP& mask, int line = 0);
  /// tl.atomic_* (`op`: add max min and or xor xchg cas) elementwise over `ptr`'s block, lanes
  /// in row-major order; `cmp` only for cas. Returns the old values (masked lanes: 0).
  NodeP atomic(const std::string& op, const NodeP& ptr, const NodeP& val, const NodeP& cmp,
               const NodeP& mask, int line);
  /// Uninitialised storage of type `t` (an Array, or a Var for scalars) declared here.
  NodeP declare(const Type& t);
  /// Uninitialised storage declared at the top of the kernel (values that must outlive the
  /// scope they are written in, such as a helper's early-return value).
  NodeP declareHoisted(const Type& t);
  /// A mutable scalar Var holding `n`'s element at `idx`.
  NodeP scalarAt(const NodeP& n, const std::vector<std::string>& idx);
  /// dst[idx] = v (v a scalar; dst an Array, or a Var with idx empty).
  void storeAt(const NodeP& dst, const std::vector<std::string>& idx, const NodeP& v);
  /// `for (int k = from; k < to; ++k) {` (closed by end()); returns k's name.
  std::string beginCountedLoop(int64_t from, int64_t to);
  /// `for (;;) {` (closed by end()); breakUnless(c) leaves it when c is false.
  void beginForever();
  void breakUnless(const NodeP& cond);
  /// Opens loops over `shape`; returns the index variables. closeLoops closes them.
  std::vector<std::string> openLoops(const Shape& shape);
  void closeLoops(size_t n);
  /// Opens loops over the first `count` dims of `shape` with the index names `idx`.
  void openLoopsNamed(const Shape& shape, const std::vector<std::string>& idx, size_t count);
  /// sum / max / min over `axis` of `in` (compute dtype = in's dtype), keep_dims false.
  NodeP reduce(const std::string& kind, const NodeP& in, int axis);
  /// tl.cumsum along `axis` (sequential, rounding to in's dtype after every addition).
  NodeP cumsum(const NodeP& in, int axis, bool reverse);
  /// max/min over `axis` with the index of the winner (int32): the first index of the extreme,
  /// a NaN counting as the extreme (numpy's argmax/argmin, which Triton's interpreter uses).
  std::pair<NodeP, NodeP> argReduce(bool isMax, const NodeP& in, int axis);
  /// tl.dot: a [M, K] times b [K, N] accumulated in `accT` (fp32, fp64 or i32) on top of `acc`
  /// ([M, N] in accT, or null for zeros). Packs both operands into private tiles, then runs a
  /// register-blocked micro-kernel (rows x vectors of columns, fma per k). With `inPlace`
  /// (acc an Array in accT whose old value nothing reads again) the result overwrites acc's
  /// storage and acc is returned.
  NodeP dot(const NodeP& a, const NodeP& b, const NodeP& acc, DType accT, bool inPlace = false);

  /// Until the C block now open closes, `from` is read from `to` (storage of the same shape
  /// holding its value) wherever an expression contains it. `fast`, when given, is an equal
  /// cheaper form while the C condition `fastWhen` holds (`(s + arange) % M` is `s + arange`
  /// when that stays in [0, M)): tl.dot's packing loops are emitted twice, the first with the
  /// fast forms (contiguous loads instead of gathers through `to`).
  void substitute(const NodeP& from, const NodeP& to, const NodeP& fast = nullptr,
                  const std::string& fastWhen = {});
  /// Batched tl.dot: a [B, M, K] times b [B, K, N] on top of `acc` ([B, M, N] or null); each
  /// output element sums its products in k order.
  NodeP batchedDot(const NodeP& a, const NodeP& b, const NodeP& acc, DType accT);

  void beginFor(const NodeP& var, const NodeP& lb, const NodeP& ub, const NodeP& step,
                int stepSign);
  void beginIf(const NodeP& cond);
  void beginElse();
  void end();
  void earlyReturn();
  NodeP declareLoopVar(DType dtype);

  /// The Python line of the statement now being generated (0: none); each C line emitted from
  /// here on is attributed to it (a value materialised away from its statement, to the line
  /// that defined it: Node::line).
  void setPythonLine(int line) { pyLine_ = line; }
  /// The whole translation unit.
  std::string source() const;
  /// For each line of source(), the kernel's Python line it was generated for (0: none, as for
  /// the prelude, the helpers and the parameter setup).
  std::vector<int> lineMap() const;
  const std::vector<Param>& params() const { return params_; }
  const std::string& kernelName() const { return kernelName_; }

  /// The C expression for `n` at the block index `idx` (one entry per dim of n's shape).
  std::string expr(const NodeP& n, const std::vector<std::string>& idx);

 private:
  std::string fresh(const char* prefix);
  std::ostream& line();
  /// Everything source() holds before the hoisted declarations and the body.
  std::string header() const;
  std::string linear(const Shape& shape, const std::vector<std::string>& idx) const;
  /// The index into a block of shape `from` of element `idx` of its reshape to `to`.
  std::vector<std::string> reshapeIndex(const Shape& from, const Shape& to,
                                        const std::vector<std::string>& idx) const;
  /// The index into a view's operand (broadcast, transpose, reshape, expand_dims) of its
  /// element `idx`.
  std::vector<std::string> viewIndex(const Node& n, const std::vector<std::string>& idx) const;
  std::string binary(const Node& n, const std::string& a, const std::string& b) const;
  std::string unary(const Node& n, const std::string& a) const;
  std::string roundTo(DType t, const std::string& e) const;
  void dropSubstitutions();  // those declared in blocks that have closed
  /// Runs `emit` under `if (every fast form's condition)` with the fast forms, then under
  /// `else` with the stored values; just once when `n` reaches no substitution with one.
  void withFastForms(const NodeP& n, const std::function<void()>& emit);
  /// Checked mode: the C condition that `ptr` (an address expression of pointer node `n`) lies
  /// in its argument's storage, recording the first access that does not.
  std::string boundsCheck(const NodeP& n, const std::string& ptr, int line, int access);
  std::string atomicHelper(const std::string& op, DType t);
  /// One element of tl.store at `idx` (scalar code: masked store, checked mode's test).
  void storeElement(const NodeP& ptr, const NodeP& value, const NodeP& mask,
                    const std::vector<std::string>& idx, int line);

  // Vector code over a block's last dim (codegen_vector.cpp; docs/TCL.md, "Vector code"): the
  // last dim runs in chunks of kVectorWidth lanes as OpenCL vectors. `laneVar_` names the
  // chunk's first index while an expression is built; a chunk whose masks are not all true
  // runs the scalar code instead. Each returns false, having emitted nothing, when the
  // statement cannot be vectorised (the caller then emits scalar loops).
  struct VExpr {
    std::string code;
    bool uniform;  // the same for every lane: `code` is scalar C
  };
  std::optional<VExpr> vexpr(const NodeP& n, const std::vector<std::string>& idx,
                             std::vector<std::string>& conds);
  std::optional<VExpr> vselect(const NodeP& n, const std::vector<std::string>& idx,
                               std::vector<std::string>& conds);
  std::optional<VExpr> vload(const NodeP& n, const std::vector<std::string>& idx,
                             std::vector<std::string>& conds);
  /// How `n` (integers or pointers) changes from one lane to the next, if it is affine.
  std::optional<int64_t> laneStride(const NodeP& n, const std::vector<std::string>& idx);
  /// Appends C conditions that together mean "mask is true in every lane of the chunk".
  bool maskConds(const NodeP& mask, const std::vector<std::string>& idx,
                 std::vector<std::string>& conds);
  /// Builds `value`'s vector code and the chunk's conditions (`mask`'s, the store's, first).
  std::optional<VExpr> vectorize(const NodeP& value, const NodeP& mask,
                                 const std::vector<std::string>& idx,
                                 std::vector<std::string>& conds);
  std::string provenKey(const NodeP& n, const std::vector<std::string>& idx) const;
  int lanePosition(const std::vector<std::string>& idx) const;
  std::vector<std::string> laneIndex(const Shape& shape);  // fresh names, laneVar_ last
  /// `for (kv = 0; kv < L; kv += W) { if (conds) fast else { per lane: slow(idx) } }` inside
  /// loops over the leading dims.
  void vectorLoop(const Shape& shape, const std::vector<std::string>& idx,
                  const std::vector<std::string>& conds, const std::function<void()>& fast,
                  const std::function<void(const std::vector<std::string>&)>& slow);
  bool storeVector(const NodeP& ptr, const NodeP& value, const NodeP& mask, int line);
  bool fillVector(const std::string& dst, const NodeP& value);
  bool reduceVector(const std::string& kind, const NodeP& in, const std::string& out,
                    const std::string& init);
  static const char* vectorPrelude();  // helpers the vector code calls
  std::string laneVar_;
  std::set<std::string> proven_;  // masks the chunk's conditions prove true in every lane
  bool vectorHelpers_ = false;

  std::string kernelName_;
  std::vector<Param> params_;
  std::ostringstream body_;
  // Where in body_ each line() began, with the Python line then current (lineMap()).
  std::vector<std::pair<std::streamoff, int>> marks_;
  int pyLine_ = 0;
  std::ostringstream hoisted_;
  std::vector<std::string> helpers_;  // functions emitted after the prelude, each once
  bool checked_ = false;
  int indent_ = 1;
  struct Substitution {
    NodeP from, to;
    int indent;  // the C block it was declared in
    NodeP fast;
    std::string fastWhen;
  };
  std::map<const Node*, Substitution> subst_;
  bool useFast_ = false;
  int counter_ = 0;
};

}  // namespace crucible::tcl
