// crucible-model: the embedded LLM engine, a long-lived child that speaks JSON lines on
// stdin/stdout (docs/MODEL_PROTOCOL.md). A crash or out-of-memory here never takes the GUI down.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "core/llm/protocol_server.h"
#include "core/llm/torch/torch_decoder.h"

namespace {

/// PyTorch's CPU threads wait for each other through OpenMP, whose threads by default spin
/// while they wait. On a machine that is also verifying, a spinning thread holds a core its
/// partner needs, and every parallel region waits out a time slice; passive waits keep decoding
/// at its share of the CPU (docs/PERFORMANCE.md has the figures). OpenMP reads the policy when
/// the library loads, before main, so the
/// engine starts itself again with it set, unless the caller chose one.
void waitPassivelyUnlessTold(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = '\0';
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  // By its own path, so that the process keeps its name; on failure it goes on as it is.
  ::execv(self, argv);
}

}  // namespace

int main(int argc, char** argv) {
  waitPassivelyUnlessTold(argv);
  if (argc > 1) {
    const std::string arg = argv[1];
    (arg == "--help" || arg == "-h" ? std::cout : std::cerr)
        << "usage: crucible-model   (requests as JSON lines on stdin; see "
           "docs/MODEL_PROTOCOL.md)\n";
    return arg == "--help" || arg == "-h" ? 0 : 2;
  }
  std::ios::sync_with_stdio(false);
  // std::cin is tied to std::cout: every read on the stdin thread would flush std::cout while
  // the main thread writes it, a data race that under load put stray "\n" lines in the output.
  std::cin.tie(nullptr);
  const int rc = crucible::llm::serveProtocol(std::cin, std::cout, crucible::llm::makeTorchDecoder);
  std::cout.flush();
  std::_Exit(rc);  // the stdin reader may still be blocked; leave without unwinding it
}
