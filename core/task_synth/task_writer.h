#pragma once
// Writing a solved synthetic program as a KernelBench-format reference file: class Model with
// __init__ and forward (one operator per line), shapes and module sizes as module-level
// constants, get_inputs() and get_init_inputs().

#include <string>
#include <vector>

#include "core/task_synth/program.h"
#include "core/task_synth/shape_model.h"

namespace crucible::task_synth {

struct TaskText {
  std::string name;              // e.g. "Conv2d_Relu_Sum_plus2"
  std::string description;       // one line for index.json
  std::string source;            // the Python file
  std::vector<std::string> ops;  // distinct operator names, in order of first use
};

/// `origin` says where the task came from (seed and candidate), for the file's docstring.
TaskText writeTask(const Program& program, const ShapeSolution& shapes, const std::string& origin);

/// "max_pool2d" -> "MaxPool2d".
std::string camelName(const std::string& op);

}  // namespace crucible::task_synth
