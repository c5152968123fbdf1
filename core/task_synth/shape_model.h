#pragma once
// Shapes of a synthetic program as a constraint problem, solved with Gecode: every tensor's
// rank and dims, and every operator's arguments (dim, keepdim, kernel, stride, padding, groups,
// features), under the catalogue's shape rules and bounds on each dim, the program's FLOPs and
// its bytes. The solver's random branchers, seeded, pick a random feasible assignment; there is
// no retry loop: an assignment is found, or the problem is proved infeasible, or the search
// gives up at its failure limit and says so.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include "core/task_synth/program.h"

namespace crucible::task_synth {

/// Bounds of the problem. The defaults keep an eager reference on a 2-core CPU to a few
/// milliseconds up to a few hundred (a 2^28-FLOP convolution is the slow end).
struct ShapeBounds {
  int maxDim = 1024;                    // every dim in [1, maxDim]
  std::int64_t maxFlops = 1LL << 28;    // the program's total, estimated per operator
  std::int64_t minFlops = 1LL << 14;    // so that programs are not trivially small
  std::int64_t maxBytes = 64LL << 20;   // all tensors and parameters together
  std::int64_t minOutputElements = 16;  // each output of the program
  std::uint64_t failLimit =
      5000;  // the search gives up here (deterministic; hard cases rarely succeed later)

  /// Throws std::invalid_argument naming the bound that is out of range.
  void validate() const;
};
void to_json(nlohmann::json& j, const ShapeBounds& b);

/// One solved program: a shape per tensor and named arguments per compute node.
struct ShapeSolution {
  std::vector<std::vector<int>> shapes;            // indexed like Program::tensors
  std::vector<std::map<std::string, int>> params;  // indexed like Program::nodes
  std::int64_t flops = 0;
  std::int64_t bytes = 0;
  std::uint64_t failures = 0;  // search statistics
  std::uint64_t restarts = 0;
};

class ShapeError : public std::runtime_error {
 public:
  enum class Kind { Infeasible, LimitReached, Cancelled };
  ShapeError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// Solves the program's shapes; the same program, bounds and seed give the same solution.
/// Throws ShapeError when there is none, the failure limit is reached, or `stop` is requested.
ShapeSolution solveShapes(const Program& program, const ShapeBounds& bounds, std::uint64_t seed,
                          std::stop_token stop = {});

/// The number of elements of a shape (1 for a scalar).
std::int64_t elementCount(const std::vector<int>& shape);

}  // namespace crucible::task_synth
