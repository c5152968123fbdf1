#include "core/task_synth/task_writer.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace crucible::task_synth {

namespace {

std::string tensorName(const Program& p, int t) {
  if (p.tensors[t].producer >= 0) return "t" + std::to_string(p.tensors[t].producer + 1);
  const auto inputs = p.inputs();
  return "x" + std::to_string(std::find(inputs.begin(), inputs.end(), t) - inputs.begin());
}

std::string moduleName(const ComputeNode& node, int n) {
  return std::string(node.op->name) + "_" + std::to_string(n + 1);
}

std::string shapeTuple(const std::vector<int>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

/// Fills an operator's call template: {0} {1} {2} are inputs, other names are arguments.
std::string fillTemplate(std::string_view pattern, const std::vector<std::string>& inputs,
                         const std::map<std::string, std::string>& args) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    const auto close = pattern.find('}', i);
    const std::string key(pattern.substr(i + 1, close - i - 1));
    if (std::isdigit(static_cast<unsigned char>(key[0]))) {
      out += inputs.at(static_cast<std::size_t>(std::stoi(key)));
    } else {
      out += args.at(key);
    }
    i = close;
  }
  return out;
}

/// The module constructor's constants (name, value) for a node with an nn.Module.
std::vector<std::pair<std::string, int>> moduleConstants(const ComputeNode& node, int n,
                                                         const std::map<std::string, int>& p) {
  const std::string prefix = moduleName(node, n) + "_";
  if (node.op->rule == ShapeRule::Linear) {
    return {{prefix + "in_features", p.at("in_features")},
            {prefix + "out_features", p.at("out_features")}};
  }
  return {{prefix + "in_channels", p.at("in_channels")},
          {prefix + "out_channels", p.at("out_channels")},
          {prefix + "kernel_size", p.at("kernel")},
          {prefix + "stride", p.at("stride")},
          {prefix + "padding", p.at("pad")}};
}

std::string moduleConstructor(const ComputeNode& node, int n) {
  const std::string prefix = moduleName(node, n) + "_";
  if (node.op->rule == ShapeRule::Linear) {
    return "nn.Linear(" + prefix + "in_features, " + prefix + "out_features)";
  }
  const std::string cls = node.op->spatialDims == 1 ? "nn.Conv1d" : "nn.Conv2d";
  const std::string indent = "\n            ";
  return cls + "(" + indent + prefix + "in_channels, " + prefix +
         "out_channels, kernel_size=" + prefix + "kernel_size," + indent + "stride=" + prefix +
         "stride, padding=" + prefix + "padding)";
}

}  // namespace

std::string camelName(const std::string& op) {
  std::string out;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

TaskText writeTask(const Program& p, const ShapeSolution& s, const std::string& origin) {
  TaskText task;
  const int count = static_cast<int>(p.nodes.size());
  for (int n = 0; n < std::min(count, 3); ++n) {
    task.name += (n ? "_" : "") + camelName(std::string(p.nodes[n].op->name));
  }
  if (count > 3) task.name += "_plus" + std::to_string(count - 3);

  std::vector<std::string> forward, steps;
  std::vector<std::pair<std::string, int>> constants;
  std::vector<std::string> modules;
  for (int n = 0; n < count; ++n) {
    const auto& node = p.nodes[n];
    const std::string op(node.op->name);
    if (std::find(task.ops.begin(), task.ops.end(), op) == task.ops.end()) task.ops.push_back(op);
    std::vector<std::string> inputs;
    for (int t : node.inputs) inputs.push_back(tensorName(p, t));
    std::map<std::string, std::string> args{{"module", moduleName(node, n)}};
    for (const auto& [key, value] : s.params[n]) {
      args[key] = key == "keepdim" ? (value ? "True" : "False") : std::to_string(value);
    }
    if (hasModule(node.op->rule)) {
      for (auto& c : moduleConstants(node, n, s.params[n])) constants.push_back(c);
      modules.push_back("self." + moduleName(node, n) + " = " + moduleConstructor(node, n));
    }
    const std::string out = tensorName(p, node.output);
    forward.push_back(out + " = " + fillTemplate(node.op->call, inputs, args));
    std::string step = out + " = " + op + "(";
    for (std::size_t i = 0; i < inputs.size(); ++i) step += (i ? ", " : "") + inputs[i];
    steps.push_back(step + ")");
  }
  std::string returned;
  const auto outputs = p.outputs();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    returned += (i ? ", " : "") + tensorName(p, outputs[i]);
  }
  std::string joinedSteps;
  for (std::size_t i = 0; i < steps.size(); ++i) joinedSteps += (i ? "; " : "") + steps[i];
  task.description = "Synthetic program of " + std::to_string(count) + " operator" +
                     (count == 1 ? "" : "s") + ": " + joinedSteps + ".";

  std::ostringstream py;
  py << "\"\"\"Synthetic task " << task.name << " (" << origin << ").\n\n"
     << "A DAG of " << count << " PyTorch operator" << (count == 1 ? "" : "s")
     << " sampled by `crucible tasks synth`;\nshapes solved as a constraint problem.\n\"\"\"\n"
     << "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";
  const auto inputs = p.inputs();
  for (int t : inputs) py << tensorName(p, t) << "_shape = " << shapeTuple(s.shapes[t]) << "\n";
  for (const auto& [name, value] : constants) py << name << " = " << value << "\n";
  std::string opList;
  for (const auto& op : task.ops) opList += (opList.empty() ? "" : ", ") + op;
  py << "\n\nclass Model(nn.Module):\n    \"\"\"" << count << " operator" << (count == 1 ? "" : "s")
     << " (" << opList << "); forward has one per line.\"\"\"\n\n"
     << "    def __init__(self):\n        super().__init__()\n";
  for (const auto& m : modules) py << "        " << m << "\n";
  py << "\n    def forward(self";
  for (int t : inputs) py << ", " << tensorName(p, t);
  py << "):\n";
  for (const auto& line : forward) py << "        " << line << "\n";
  py << "        return " << returned << "\n\n\ndef get_inputs():\n";
  std::string list;
  for (int t : inputs) {
    const std::string name = tensorName(p, t);
    py << "    " << name << " = torch.randn(" << name << "_shape)\n";
    list += (list.empty() ? "" : ", ") + name;
  }
  py << "    return [" << list << "]\n\n\ndef get_init_inputs():\n    return []\n";
  task.source = py.str();
  return task;
}

}  // namespace crucible::task_synth
