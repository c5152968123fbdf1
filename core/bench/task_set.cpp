#include "core/bench/task_set.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>

namespace crucible::bench {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int leadingNumber(const std::string& stem) {
  std::size_t digits = 0;
  while (digits < stem.size() && std::isdigit(static_cast<unsigned char>(stem[digits]))) ++digits;
  if (digits == 0 || digits > 9) return 0;
  return std::stoi(stem.substr(0, digits));
}

std::string withoutNumber(const std::string& stem) {
  const int number = leadingNumber(stem);
  if (number == 0) return stem;
  const std::size_t underscore = stem.find('_');
  return underscore == std::string::npos ? stem : stem.substr(underscore + 1);
}

std::string levelOf(std::string text) {
  if (text.rfind("level", 0) == 0) text = text.substr(5);
  return text;
}

BenchTask taskAt(const fs::path& dir, const std::string& file, const std::string& level,
                 std::string name) {
  BenchTask t;
  t.file = file;
  fs::path rel(file);
  t.id = (rel.parent_path() / rel.stem()).generic_string();
  t.problemId = leadingNumber(rel.stem().string());
  t.name = name.empty() ? withoutNumber(rel.stem().string()) : std::move(name);
  t.level = level;
  t.path = fs::absolute(dir / rel).lexically_normal();
  return t;
}

std::vector<BenchTask> fromIndex(const fs::path& dir, const fs::path& indexPath) {
  std::ifstream in(indexPath);
  json index;
  try {
    index = json::parse(in);
  } catch (const json::exception& e) {
    throw TaskSetError(indexPath.string() + ": not JSON: " + e.what());
  }
  if (!index.is_array()) throw TaskSetError(indexPath.string() + ": expected a JSON array");
  std::vector<BenchTask> tasks;
  for (std::size_t i = 0; i < index.size(); ++i) {
    const json& entry = index[i];
    const std::string where = indexPath.string() + ": entry " + std::to_string(i + 1);
    if (!entry.is_object() || !entry.contains("file") || !entry["file"].is_string()) {
      throw TaskSetError(where + " has no \"file\"");
    }
    const json level = entry.value("level", json());
    const std::string levelText = level.is_string() ? levelOf(level.get<std::string>())
                                                    : (level.is_null() ? "" : level.dump());
    BenchTask t = taskAt(dir, entry["file"].get<std::string>(), levelText,
                         entry.value("name", std::string()));
    if (!fs::is_regular_file(t.path))
      throw TaskSetError(where + ": " + t.path.string() + " is missing");
    tasks.push_back(std::move(t));
  }
  return tasks;
}

std::vector<std::string> pythonFiles(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string stem = e.path().stem().string();
    if (e.is_regular_file() && e.path().extension() == ".py" && !stem.empty() && stem[0] != '_') {
      files.push_back(e.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    const int na = leadingNumber(a), nb = leadingNumber(b);
    return na != nb ? na < nb : a < b;
  });
  return files;
}

std::vector<BenchTask> fromFolder(const fs::path& dir) {
  std::vector<BenchTask> tasks;
  for (const auto& file : pythonFiles(dir)) tasks.push_back(taskAt(dir, file, "", ""));
  if (!tasks.empty()) return tasks;
  std::vector<std::string> levels;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.rfind("level", 0) == 0) levels.push_back(name);
  }
  std::sort(levels.begin(), levels.end(), [](const std::string& a, const std::string& b) {
    return leadingNumber(levelOf(a)) < leadingNumber(levelOf(b));
  });
  for (const auto& level : levels) {
    for (const auto& file : pythonFiles(dir / level)) {
      tasks.push_back(taskAt(dir, level + "/" + file, levelOf(level), ""));
    }
  }
  return tasks;
}

}  // namespace

std::vector<std::string> parseLevels(const std::string& text) {
  std::vector<std::string> levels;
  std::string current;
  for (char c : text + ",") {
    if (c == ',' || c == ' ') {
      if (!current.empty()) levels.push_back(levelOf(current));
      current.clear();
    } else {
      current += c;
    }
  }
  return levels;
}

std::vector<BenchTask> listTasks(const fs::path& dir, const std::vector<std::string>& levels) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw TaskSetError(dir.string() + ": not a folder");
  const fs::path index = dir / "index.json";
  std::vector<BenchTask> tasks = fs::exists(index) ? fromIndex(dir, index) : fromFolder(dir);
  if (!levels.empty()) {
    std::erase_if(tasks, [&](const BenchTask& t) {
      return std::find(levels.begin(), levels.end(), t.level) == levels.end();
    });
  }
  if (tasks.empty()) {
    throw TaskSetError(dir.string() + ": no tasks" +
                       (levels.empty() ? " (no index.json, no .py files, no level folders)"
                                       : " of the levels asked for"));
  }
  return tasks;
}

}  // namespace crucible::bench
