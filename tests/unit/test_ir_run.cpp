// inspectKernels (core/inspect/ir_run) as the workbench calls it on a worker thread: bad input
// named, and a stop request honoured.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <stop_token>
#include <string>

#include "core/inspect/ir_run.h"
#include "core/verify/bad_input.h"

namespace crucible::inspect {
namespace {

namespace fs = std::filesystem;

IrRequest exampleRequest() {
  const fs::path dir =
      fs::path(CRUCIBLE_TEST_DATA_DIR) / ".." / "resources" / "examples" / "row_softmax";
  IrRequest request;
  request.candidatePath = (dir / "candidate.py").string();
  request.referencePath = (dir / "reference.py").string();
  request.backend = "interpret";
  return request;
}

TEST(IrRun, AStopRequestEndsTheRunAsCancelled) {
  std::stop_source stop;
  stop.request_stop();
  try {
    inspectKernels(exampleRequest(), stop.get_token());
    FAIL() << "a stopped run returned a report";
  } catch (const BadInput& e) {
    FAIL() << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cancelled");
  }
}

TEST(IrRun, BadInputNamesTheFile) {
  IrRequest request = exampleRequest();
  request.candidatePath = "/nonexistent/cand.py";
  EXPECT_THROW(
      {
        try {
          inspectKernels(request);
        } catch (const BadInput& e) {
          EXPECT_EQ(std::string(e.what()), "/nonexistent/cand.py: cannot read the file");
          throw;
        }
      },
      BadInput);
  request = exampleRequest();
  request.backend = "tpu";
  EXPECT_THROW(inspectKernels(request), BadInput);
}

}  // namespace
}  // namespace crucible::inspect
