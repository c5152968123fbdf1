// crucible: the command-line front end. Dispatches to one file per subcommand.
#include <iostream>
#include <string>
#include <vector>

#include "app/crucible/commands.h"

namespace {
constexpr const char* kUsage =
    "usage: crucible <command> [options]\n"
    "\n"
    "commands:\n"
    "  verify REFERENCE.py CANDIDATE.py   verify a Triton candidate against a PyTorch reference\n"
    "  generate REFERENCE.py              ask a model for candidates; keep the fastest verified\n"
    "  sessions list | show ID            read back stored sessions\n"
    "  tasks synth | list                 synthesize reference tasks; list a task folder\n"
    "  synth REFERENCE.py                 the built-in synthesizer's candidates (unverified)\n"
    "  ir CANDIDATE.py --reference REF.py what each kernel compiles to, by Python line\n"
    "  profile CANDIDATE.py --reference REFERENCE.py   each kernel launch timed, counted and\n"
    "                                     placed against the device's measured peaks\n"
    "  bench DIR                          generate and verify every task; KernelBench metrics\n"
    "  serve                              an evaluation service over HTTP (RL rewards)\n"
    "\n"
    "Run `crucible <command> --help` for a command's options.\n";
}

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "verify") return crucible::cli::runVerify(args, std::cout, std::cerr);
  if (command == "synth") return crucible::cli::runSynth(args, std::cout, std::cerr);
  if (command == "profile") return crucible::cli::runProfile(args, std::cout, std::cerr);
  if (command == "generate") return crucible::cli::runGenerate(args, std::cout, std::cerr);
  if (command == "sessions") return crucible::cli::runSessions(args, std::cout, std::cerr);
  if (command == "tasks") return crucible::cli::runTasks(args, std::cout, std::cerr);
  if (command == "ir") return crucible::cli::runIr(args, std::cout, std::cerr);
  if (command == "bench") return crucible::cli::runBench(args, std::cout, std::cerr);
  if (command == "serve") return crucible::cli::runServe(args, std::cout, std::cerr);
  if (command == "lane") return crucible::cli::runLane(args, std::cout, std::cerr);
  std::cerr << "crucible: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
