#pragma once
// The service's lanes: one worker process per device (`crucible lane`), each pinned to its GPU
// through CUDA_VISIBLE_DEVICES, the CPU as a lane of its own (docs/SERVE.md).

#include <optional>
#include <string>
#include <vector>

namespace crucible::serve {

struct LaneSpec {
  std::string name;        // "cuda:0", "cpu"
  std::string backend;     // cuda | opencl | interpret
  std::optional<int> gpu;  // the GPU a cuda lane is pinned to
  bool operator==(const LaneSpec&) const = default;
};

/// Reads `--lanes`: a comma-separated list of `cuda:N`, `cpu` and `cpu:N` (CPU lanes run
/// `cpuBackend`, opencl or interpret; several of them suit a Ray cluster of CPU nodes). Throws
/// RequestError (400) naming a bad item or a repeat.
std::vector<LaneSpec> parseLanes(const std::string& text, const std::string& cpuBackend);

/// Where a Ray lane's stand-in comes from: the Python with ray ($CRUCIBLE_RAY_PYTHON, else the
/// checkout's .venv-verl) and integrations/ray/crucible_ray/lane.py beside the worker. `problem`
/// says what is missing, if anything.
struct RayTools {
  std::string python, bridge, problem;
};
RayTools locateRayTools();

/// Whether a job asking for `backend` ("" or "auto": any) can run on `lane`.
bool laneServes(const LaneSpec& lane, const std::string& backend);

}  // namespace crucible::serve
