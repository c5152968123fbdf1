// Backend resolution and the locations the opencl backend needs.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/util/locations.h"
#include "core/verify/verifier.h"

namespace crucible {
namespace {

TEST(Backend, OpenclIsAcceptedAndAutoNeverPicksItYet) {
  EXPECT_EQ(resolveBackend("opencl"), "opencl");
  EXPECT_EQ(resolveBackend("interpret"), "interpret");
  // auto moves to opencl only once the whole corpus passes on it (docs/TCL.md, "Status").
  EXPECT_NE(resolveBackend("auto"), "opencl");
  EXPECT_THROW(resolveBackend("metal"), BadInput);
}

TEST(Backend, TclLibraryFromTheEnvironment) {
  const char* saved = std::getenv("CRUCIBLE_TCL_LIB");
  const std::string before = saved ? saved : "";
  const auto lib = std::filesystem::temp_directory_path() / "crucible-test-libcrucible_tcl.so";
  { std::ofstream(lib.string()) << "x"; }
  ::setenv("CRUCIBLE_TCL_LIB", lib.c_str(), 1);
  EXPECT_EQ(locateTclLibrary(), lib.string());
  ::setenv("CRUCIBLE_TCL_LIB", "/nonexistent/libcrucible_tcl.so", 1);
  EXPECT_EQ(locateTclLibrary(), "");
  if (saved) {
    ::setenv("CRUCIBLE_TCL_LIB", before.c_str(), 1);
  } else {
    ::unsetenv("CRUCIBLE_TCL_LIB");
  }
  std::filesystem::remove(lib);
}

}  // namespace
}  // namespace crucible
