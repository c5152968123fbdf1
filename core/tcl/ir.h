#pragma once
// The typed block IR: every value is a statically shaped block (or a 0-d scalar) of a dtype.
// Elementwise work stays an expression DAG of Nodes, emitted lazily inside the loop nest of
// whatever consumes it (a store, a reduction, a materialisation), so chains fuse into one loop.
// Storage nodes (Var, Array) name C variables the code generator declared.

#include <memory>
#include <string>
#include <vector>

#include "core/tcl/types.h"

namespace crucible::tcl {

enum class Op {
  ConstInt,    // ival, in type.dtype
  ConstFloat,  // fval
  Var,         // a C scalar variable `name` (parameter, program id, loop variable, result)
  Array,       // a materialised block: C array `name`, row-major over type.shape
  Arange,      // ival = start; 1-D
  Broadcast,   // ops[0] broadcast to type.shape (numpy rules)
  ExpandDims,  // ops[0] with a size-1 dim inserted at `axis`
  Transpose,   // ops[0] with its dims permuted: result dim d is ops[0]'s dim perm[d]
  Reshape,     // ops[0]'s elements in row-major order, laid out in type.shape
  Binary,      // `name` = operator (+ - * / // % & | ^ << >> == != < <= > >=), or
               // "max", "min" (tl.maximum / minimum); operands already in the compute dtype
  Unary,       // `name` = "-", "~", "not", or a math function ("exp", "sqrt", "sigmoid", ...)
  Fma,         // ops[0] * ops[1] + ops[2]
  Cast,        // ops[0] converted to type.dtype
  Select,      // ops[0] ? ops[1] : ops[2]
  PtrAdd,      // ops[0] (pointers) + ops[1] (integer offsets, in elements)
  Load,        // *ops[0] where ops[1] (mask, optional), else ops[2] (other, optional)
  Call,        // the prelude function `name` applied elementwise to ops (scalars broadcast)
};

struct Node;
using NodeP = std::shared_ptr<const Node>;

struct Node {
  Op op;
  Type type;
  std::vector<NodeP> ops;  // null entries allowed for optional Load operands
  std::string name;
  int64_t ival = 0;
  double fval = 0;
  int axis = 0;
  std::vector<int> perm;  // Transpose
  int line = 0;  // Load: the kernel line (bounds-checked mode's report); a value bound to a
                 // name: the line of that statement (the C line map); else 0
  // Pointers: the kernel parameter (C name) the address derives from; "*" when it may come
  // from several (a select between pointer arguments).
  std::string ptrRoot;
  bool hasLoad = false;  // some node below is a Load (must be materialised before stores)
};

NodeP makeNode(Op op, Type type, std::vector<NodeP> ops = {}, std::string name = {});

}  // namespace crucible::tcl
