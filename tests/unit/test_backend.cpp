// Backend resolution and the locations the opencl backend needs.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/util/locations.h"
#include "core/verify/verifier.h"
#include "temp_dir.h"

namespace crucible {
namespace {

/// Sets an environment variable for one scope, restoring the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(Backend, ExplicitBackendsAreKept) {
  EXPECT_EQ(resolveBackend("opencl"), "opencl");
  EXPECT_EQ(resolveBackend("interpret"), "interpret");
  EXPECT_THROW(resolveBackend("metal"), BadInput);
}

TEST(Backend, AutoPicksOpenclWithoutAGpuWhenADriverAndTheLibraryExist) {
  if (std::filesystem::exists("/dev/nvidiactl") || std::filesystem::exists("/dev/nvidia0"))
    GTEST_SKIP() << "a GPU is visible: auto picks cuda";
  const test::TempDir temp("crucible-test-icd");
  const auto& dir = temp.path();
  std::filesystem::create_directories(dir / "vendors");
  const auto lib = dir / "libcrucible_tcl.so";
  { std::ofstream(lib.string()) << "x"; }
  ScopedEnv tclLib("CRUCIBLE_TCL_LIB", lib.string());
  {
    ScopedEnv vendors("OCL_ICD_VENDORS", (dir / "vendors").string());
    EXPECT_FALSE(openclDriverRegistered());
    EXPECT_EQ(resolveBackend("auto"), "interpret");  // no driver: the interpreter
    { std::ofstream((dir / "vendors" / "pocl.icd").string()) << "libpocl.so.2"; }
    EXPECT_TRUE(openclDriverRegistered());
    EXPECT_EQ(resolveBackend("auto"), "opencl");
    ScopedEnv noLib("CRUCIBLE_TCL_LIB", (dir / "missing.so").string());
    EXPECT_EQ(resolveBackend("auto"), "interpret");  // no compiler library: the interpreter
  }
}

TEST(Backend, TclLibraryFromTheEnvironment) {
  const test::TempDir dir("crucible-test-tcl");
  const auto lib = dir.path() / "libcrucible_tcl.so";
  { std::ofstream(lib.string()) << "x"; }
  {
    ScopedEnv present("CRUCIBLE_TCL_LIB", lib.string());
    EXPECT_EQ(locateTclLibrary(), lib.string());
    ScopedEnv missing("CRUCIBLE_TCL_LIB", "/nonexistent/libcrucible_tcl.so");
    EXPECT_EQ(locateTclLibrary(), "");
  }
}

}  // namespace
}  // namespace crucible
