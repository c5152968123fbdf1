#include "core/bench/report_folder.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/util/atomic_file.h"

namespace crucible::bench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string jsonText(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace

ReportFolder::ReportFolder(fs::path dir, const RunSettings& settings, bool fresh)
    : dir_(std::move(dir)) {
  fs::create_directories(dir_);
  const fs::path runFile = dir_ / "run.json";
  if (fresh) {
    fs::remove(resultsFile());
  } else if (fs::exists(runFile)) {
    std::ifstream in(runFile);
    const auto earlier = json::parse(in).get<RunSettings>();
    if (const auto diff = settings.differenceFrom(earlier); !diff.empty()) {
      throw ReportFolderMismatch(dir_.string() + " holds a run with other settings (" + diff +
                                 "); use another --report folder, or --fresh to replace it");
    }
    std::ifstream rows(resultsFile());
    for (std::string line; std::getline(rows, line);) {
      try {
        TaskResult t = json::parse(line).get<TaskResult>();
        finished_[t.id] = std::move(t);
      } catch (const std::exception&) {
        ++unreadable_;
      }
    }
  }
  writeFileAtomically(runFile, jsonText(json(settings), 2) + "\n");
}

long ReportFolder::resumable() const {
  return std::count_if(finished_.begin(), finished_.end(),
                       [](const auto& row) { return row.second.resumable(); });
}

bool ReportFolder::append(const TaskResult& row) const {
  std::ofstream file(resultsFile(), std::ios::app | std::ios::binary);
  file << jsonText(json(row), -1) << "\n";
  return static_cast<bool>(file);
}

}  // namespace crucible::bench
