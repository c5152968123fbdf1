#include "core/serve/verl_dataset.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "core/generate/prompt_library.h"

namespace crucible::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// index.json's `ops` per file, where the folder has one.
std::map<std::string, json> opsByFile(const fs::path& dir) {
  std::map<std::string, json> ops;
  std::ifstream in(dir / "index.json");
  if (!in) return ops;
  const json index = json::parse(in, nullptr, false);
  if (!index.is_array()) return ops;
  for (const json& entry : index) {
    if (entry.is_object() && entry.contains("file") && entry.contains("ops")) {
      ops[entry["file"].get<std::string>()] = entry["ops"];
    }
  }
  return ops;
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

VerlDataset verlRows(const fs::path& dir, const std::vector<bench::BenchTask>& tasks,
                     const VerlExportOptions& options) {
  const auto ops = opsByFile(dir);
  const auto prompt = generate::builtinPromptTemplate(options.promptTemplate);
  struct Row {
    std::size_t opCount;
    std::string level, id;
    json row;
  };
  std::vector<Row> rows;
  for (const auto& task : tasks) {
    generate::GenerateRequest request;
    request.referencePath = task.path.string();
    request.referenceSource = readText(task.path);
    request.referenceName = task.name;
    request.backend = options.backend;
    json messages = json::array();
    for (const auto& m : generate::buildPrompt(prompt, request)) {
      messages.push_back({{"role", m.role}, {"content", m.content}});
    }
    const auto found = ops.find(task.file);
    const json taskOps = found != ops.end() ? found->second : json::array();
    rows.push_back(
        {taskOps.size(), task.level, task.id,
         json{{"data_source", options.dataSource},
              {"prompt", messages},
              {"ability", "triton_kernel"},
              {"reward_model", {{"style", "rule"}, {"ground_truth", request.referenceSource}}},
              {"extra_info",
               {{"task", task.id},
                {"name", task.name},
                {"level", task.level},
                {"ops", taskOps},
                {"op_count", taskOps.size()},
                {"backend", options.backend}}}}});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.opCount, a.level, a.id) < std::tie(b.opCount, b.level, b.id);
  });
  VerlDataset out;
  const std::size_t every = options.testFraction > 0
                                ? static_cast<std::size_t>(std::lround(1 / options.testFraction))
                                : 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool test = every > 0 && i % every == every - 1;
    json row = std::move(rows[i].row);
    auto& list = test ? out.test : out.train;
    row["extra_info"]["split"] = test ? "test" : "train";
    row["extra_info"]["index"] = list.size();
    list.push_back(std::move(row));
  }
  return out;
}

}  // namespace crucible::serve
