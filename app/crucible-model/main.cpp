// crucible-model: the embedded LLM engine, a long-lived child that speaks JSON lines on
// stdin/stdout (docs/MODEL_PROTOCOL.md). A crash or out-of-memory here never takes the GUI down.
#include <cstdlib>
#include <iostream>
#include <string>

#include "core/model/protocol_server.h"
#include "model/torch_decoder.h"

int main(int argc, char** argv) {
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
  const int rc =
      crucible::model::serveProtocol(std::cin, std::cout, crucible::model::makeTorchDecoder);
  std::cout.flush();
  std::_Exit(rc);  // the stdin reader may still be blocked; leave without unwinding it
}
