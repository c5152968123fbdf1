#include "core/serve/lanes.h"

#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/serve/eval_request.h"
#include "core/util/locations.h"

namespace crucible::serve {

std::vector<LaneSpec> parseLanes(const std::string& text, const std::string& cpuBackend) {
  std::vector<LaneSpec> lanes;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    LaneSpec lane;
    if (item == "cpu" || (item.rfind("cpu:", 0) == 0 && item.size() > 4 && item.size() <= 7 &&
                          item.find_first_not_of("0123456789", 4) == std::string::npos)) {
      lane = {item, cpuBackend, std::nullopt};  // cpu:N: more CPU lanes (a Ray cluster's nodes)
    } else if (item.rfind("cuda:", 0) == 0 && item.size() > 5 &&
               item.find_first_not_of("0123456789", 5) == std::string::npos && item.size() <= 8) {
      const int gpu = std::stoi(item.substr(5));
      lane = {item, "cuda", gpu};
    } else {
      throw RequestError(400, "lane '" + item + "' is neither cuda:N, cpu nor cpu:N");
    }
    if (!seen.insert(lane.name).second) throw RequestError(400, "lane '" + item + "' twice");
    lanes.push_back(lane);
  }
  return lanes;
}

RayTools locateRayTools() {
  namespace fs = std::filesystem;
  // The bridge and the Python with ray sit beside the worker in a source checkout.
  const fs::path repo = fs::path(locateWorker().workerScript).parent_path() / ".." / "..";
  const char* python = std::getenv("CRUCIBLE_RAY_PYTHON");
  RayTools tools;
  tools.python = python ? python : (repo / ".venv-verl" / "bin" / "python").string();
  tools.bridge = (repo / "integrations" / "ray" / "crucible_ray" / "lane.py").string();
  for (const std::string& needed : {tools.python, tools.bridge}) {
    std::error_code ec;
    if (!fs::exists(needed, ec)) {
      tools.problem = "Ray lanes need " + needed +
                      " (scripts/setup.sh makes .venv-verl; CRUCIBLE_RAY_PYTHON names another)";
    }
  }
  return tools;
}

bool laneServes(const LaneSpec& lane, const std::string& backend) {
  if (backend.empty() || backend == "auto") return true;
  if (backend == lane.backend) return true;
  return backend == "interpret" && lane.backend != "cuda";  // the interpreter runs on the CPU
}

}  // namespace crucible::serve
