#include "core/export/bundle.h"

#include <cctype>
#include <filesystem>
#include <fstream>

#include "core/verify/report_text.h"

namespace crucible {

namespace fs = std::filesystem;

namespace {

constexpr const char* kUnverifiedBanner =
    "UNVERIFIED: exported by deliberate choice; this kernel did not pass Crucible's verification.";

std::string safeStem(const std::string& name) {
  std::string stem;
  for (char c : name) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return stem.empty() ? "task" : stem;
}

bool verified(const BundleInput& input) {
  return input.evaluation && input.evaluation->verdict == Verdict::Verified;
}

void writeAtomically(const fs::path& path, const std::string& text) {
  const fs::path temporary = path.string() + ".part";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw ExportRefused("cannot write " + temporary.string());
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) throw ExportRefused("cannot write " + path.string() + ": " + ec.message());
}

std::string markdownReport(const BundleInput& input) {
  std::string md = "# " + input.taskName + ": exported kernel\n\n";
  if (!verified(input)) md += std::string("> **") + kUnverifiedBanner + "**\n\n";
  md += "* kernel: `" + safeStem(input.taskName) +
        "_kernel.py` (origin: " + (input.origin.empty() ? std::string("unknown") : input.origin) +
        ")\n";
  md += "* reference: `" + safeStem(input.taskName) + "_reference.py`\n\n";
  if (input.evaluation) {
    md += "## Verification\n\n```\n" + renderEvaluationText(*input.evaluation) + "```\n";
  } else {
    md += "## Verification\n\nNever verified.\n";
  }
  return md;
}

}  // namespace

bool isExportableWithoutConfirmation(const BundleInput& input) {
  return verified(input);
}

nlohmann::json bundleReport(const BundleInput& input) {
  const std::string stem = safeStem(input.taskName);
  return {{"unverified", !verified(input)},
          {"task", input.taskName},
          {"origin", input.origin},
          {"evaluation", input.evaluation ? nlohmann::json(*input.evaluation) : nlohmann::json()},
          {"files", {stem + "_kernel.py", stem + "_reference.py", "report.json", "report.md"}}};
}

std::vector<std::string> writeBundle(const std::string& dir, const BundleInput& input,
                                     bool allowUnverified) {
  if (!verified(input) && !allowUnverified) {
    throw ExportRefused(
        "the candidate is not verified (" +
        std::string(input.evaluation ? toString(input.evaluation->verdict) : "never verified") +
        "); exporting it needs a deliberate choice");
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw ExportRefused("cannot create the folder " + dir + ": " + ec.message());
  const std::string stem = safeStem(input.taskName);
  std::string kernel = input.kernelCode;
  if (!verified(input)) kernel = std::string("# ") + kUnverifiedBanner + "\n" + kernel;
  const std::vector<std::pair<fs::path, std::string>> files = {
      {fs::path(dir) / (stem + "_kernel.py"), kernel},
      {fs::path(dir) / (stem + "_reference.py"), input.referenceSource},
      {fs::path(dir) / "report.json", bundleReport(input).dump(2) + "\n"},
      {fs::path(dir) / "report.md", markdownReport(input)}};
  std::vector<std::string> written;
  for (const auto& [path, text] : files) {
    writeAtomically(path, text);
    written.push_back(path.string());
  }
  return written;
}

}  // namespace crucible
