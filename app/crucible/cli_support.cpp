#include "app/crucible/cli_support.h"

#include <filesystem>

namespace crucible::cli {

const char* const kVerifyOptionsHelp =
    "  --backend auto|interpret|cuda|opencl   where the kernels run (default auto)\n"
    "  --trials N                 correctness trials with fresh inputs (default 5)\n"
    "  --reward tritonrl|drtriton|kevin|kernelgym   reward preset (default tritonrl)\n"
    "  --timeout SECONDS          wall-clock limit for the candidate (default 300)\n"
    "  --atol X --rtol X          fp32 tolerances (default 1e-4)\n"
    "  --atol-half X --rtol-half X   fp16/bf16 tolerances (default 1e-2)\n"
    "  --reps N                   timed repetitions (default 20 on CPU, 100 on GPU)\n"
    "  --threads N                CPU threads for the reference and the candidate alike\n"
    "                             (default 1; 0: PyTorch's default, every core)\n"
    "  --seed N                   seed for the weights (default 42); inputs come from a\n"
    "                             secret seed drawn afresh for each run\n"
    "  --no-compile-baseline      do not time torch.compile(reference)\n";

const std::string& optionValue(const std::vector<std::string>& args, std::size_t& i) {
  if (i + 1 >= args.size()) throw BadInput(args[i] + " needs a value");
  return args[++i];
}

const std::string& backendOption(const std::vector<std::string>& args, std::size_t& i) {
  const std::string& b = optionValue(args, i);
  if (b != "auto" && b != "interpret" && b != "cuda" && b != "opencl") {
    throw BadInput("--backend: expected auto, interpret, cuda or opencl");
  }
  return b;
}

double numberOption(const std::vector<std::string>& args, std::size_t& i, double low) {
  const std::string& name = args[i];
  const std::string& v = optionValue(args, i);
  try {
    std::size_t used = 0;
    const double x = std::stod(v, &used);
    if (used != v.size() || !(x >= low)) throw std::invalid_argument(v);
    return x;
  } catch (const std::exception&) {
    throw BadInput(name + ": '" + v + "' is not a number >= " + std::to_string(low));
  }
}

bool parseVerifyOption(const std::vector<std::string>& args, std::size_t& i,
                       VerifyRequest& request) {
  const std::string& a = args[i];
  if (a == "--backend") {
    request.backend = optionValue(args, i);
  } else if (a == "--trials") {
    request.trials = static_cast<int>(numberOption(args, i, 1));
  } else if (a == "--reward") {
    request.rewardPreset = optionValue(args, i);
  } else if (a == "--timeout") {
    request.timeoutSeconds = numberOption(args, i, 1);
  } else if (a == "--atol") {
    request.tolerances.fp32.atol = numberOption(args, i, 0);
  } else if (a == "--rtol") {
    request.tolerances.fp32.rtol = numberOption(args, i, 0);
  } else if (a == "--atol-half") {
    request.tolerances.fp16.atol = numberOption(args, i, 0);
  } else if (a == "--rtol-half") {
    request.tolerances.fp16.rtol = numberOption(args, i, 0);
  } else if (a == "--reps") {
    request.timingReps = static_cast<int>(numberOption(args, i, 1));
  } else if (a == "--threads") {
    request.threads = static_cast<int>(numberOption(args, i, 0));
  } else if (a == "--seed") {
    request.seed = static_cast<int>(numberOption(args, i, 0));
  } else if (a == "--no-compile-baseline") {
    request.compileBaseline = false;
  } else {
    return false;
  }
  return true;
}

store::TaskInput taskFor(const std::string& referencePath, const std::string& source) {
  namespace fs = std::filesystem;
  const fs::path path(referencePath);
  store::TaskInput task;
  task.name = path.stem() == "reference" && path.has_parent_path()
                  ? fs::absolute(path).parent_path().filename().string()
                  : path.stem().string();
  task.path = fs::absolute(path).string();
  task.source = source;
  return task;
}

}  // namespace crucible::cli
