#pragma once
// The CLI's subcommands. main.cpp only dispatches; each command lives in its own file.

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace crucible::cli {

/// `crucible verify REFERENCE CANDIDATE [options]` (verify_command.cpp).
int runVerify(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `crucible generate REFERENCE [options]` (generate_command.cpp).
int runGenerate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `crucible sessions list [--db FILE] [--json]` and `crucible sessions show ID [--db FILE]
/// [--json]` (sessions_command.cpp).
int runSessions(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `crucible tasks synth --ops N --count K --out DIR [...]` and `crucible tasks list [--dir
/// DIR] [--json]` (tasks_command.cpp).
int runTasks(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `crucible tasks export OUT --format verl [...]` (tasks_export.cpp); `bundled` is the corpus
/// used without --dir.
int runTasksExport(const std::vector<std::string>& args, const std::filesystem::path& bundled,
                   std::ostream& out, std::ostream& err);

/// `crucible synth REFERENCE [-n N] [--backend B] [--out DIR] [--json]` (synth_command.cpp).
int runSynth(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `crucible profile CANDIDATE --reference REFERENCE [--backend B] [--calls N] [--json]`
/// (profile_command.cpp).
int runProfile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
/// `crucible ir CANDIDATE --reference REFERENCE [--backend B] [--level L] [--json]`
/// (ir_command.cpp).
int runIr(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `crucible bench DIR [options]` and `crucible bench --compare FILE` (bench_command.cpp).
int runBench(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `crucible serve [options]`, the evaluation service, and `crucible lane`, the per-device
/// process it starts (serve_command.cpp).
int runServe(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int runLane(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace crucible::cli
