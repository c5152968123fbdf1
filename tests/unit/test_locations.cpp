// Where an installed Crucible finds its worker and the Python environment it runs in.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/util/locations.h"
#include "temp_dir.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;

/// Sets (or, with nullopt, unsets) an environment variable for one scope, restoring it after.
class EnvFor {
 public:
  EnvFor(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvFor() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvFor(const EnvFor&) = delete;
  EnvFor& operator=(const EnvFor&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void writeExecutable(const fs::path& file) {
  fs::create_directories(file.parent_path());
  { std::ofstream(file.string()) << "#!/bin/sh\n"; }
  fs::permissions(file, fs::perms::owner_all);
}

/// A prefix laid out as the .deb installs it: usr/bin and usr/share/crucible/worker.
struct InstalledTree {
  test::TempDir root{"crucible-test-installed"};
  fs::path bin = root.path() / "usr" / "bin";
  fs::path worker = root.path() / "usr" / "share" / "crucible" / "worker" / "worker.py";
  fs::path data = root.path() / "data";
  InstalledTree() {
    fs::create_directories(bin);
    fs::create_directories(worker.parent_path());
    { std::ofstream(worker.string()) << "# worker\n"; }
  }
};

TEST(Locations, UserEnvironmentFollowsXdgDataHomeThenHome) {
  EnvFor home("HOME", "/home/kim");
  {
    EnvFor xdg("XDG_DATA_HOME", "/data/home");
    EXPECT_EQ(userPythonEnvironment(), "/data/home/crucible/venv");
  }
  {
    EnvFor relative("XDG_DATA_HOME", "relative/ignored");
    EXPECT_EQ(userPythonEnvironment(), "/home/kim/.local/share/crucible/venv");
  }
  EnvFor noXdg("XDG_DATA_HOME", std::nullopt);
  EXPECT_EQ(userPythonEnvironment(), "/home/kim/.local/share/crucible/venv");
  EnvFor noHome("HOME", std::nullopt);
  EXPECT_EQ(userPythonEnvironment(), "");
}

TEST(Locations, InstalledTreeUsesTheUserEnvironment) {
  const InstalledTree tree;
  EnvFor python("CRUCIBLE_PYTHON", std::nullopt);
  EnvFor workerDir("CRUCIBLE_WORKER_DIR", std::nullopt);
  EnvFor xdg("XDG_DATA_HOME", tree.data.string());
  const fs::path venv = tree.data / "crucible" / "venv";
  writeExecutable(venv / "bin" / "python");

  const WorkerLocation found = locateWorkerFrom(tree.bin.string());
  EXPECT_EQ(found.problem, "");
  EXPECT_EQ(found.workerScript, tree.worker.lexically_normal().string());
  EXPECT_EQ(found.python, (fs::canonical(venv) / "bin" / "python").string());
}

TEST(Locations, InstalledTreeWithoutAnEnvironmentNamesTheCommandThatMakesIt) {
  const InstalledTree tree;
  EnvFor python("CRUCIBLE_PYTHON", std::nullopt);
  EnvFor workerDir("CRUCIBLE_WORKER_DIR", std::nullopt);
  EnvFor xdg("XDG_DATA_HOME", tree.data.string());

  // python3 on PATH is no environment for an installed tree: it has no torch to offer.
  const WorkerLocation found = locateWorkerFrom(tree.bin.string());
  EXPECT_EQ(found.python, "");
  EXPECT_EQ(found.problem,
            "no Python environment for the worker: run `crucible-setup-python` "
            "(it makes " +
                (tree.data / "crucible" / "venv").string() + "), or set CRUCIBLE_PYTHON");
}

TEST(Locations, CruciblePythonOverridesTheUserEnvironment) {
  const InstalledTree tree;
  EnvFor xdg("XDG_DATA_HOME", tree.data.string());
  writeExecutable(tree.data / "crucible" / "venv" / "bin" / "python");
  const fs::path chosen = tree.root.path() / "other" / "python";
  writeExecutable(chosen);
  EnvFor python("CRUCIBLE_PYTHON", chosen.string());

  EXPECT_EQ(locateWorkerFrom(tree.bin.string()).python, chosen.string());
}

TEST(Locations, TclLibraryInAnInstalledPrefixsPrivateFolder) {
  const InstalledTree tree;
  EnvFor noOverride("CRUCIBLE_TCL_LIB", std::nullopt);
  EXPECT_EQ(locateTclLibraryFrom(tree.bin.string()), "");
  const fs::path lib = tree.root.path() / "usr" / "lib" / "crucible" / "libcrucible_tcl.so";
  fs::create_directories(lib.parent_path());
  { std::ofstream(lib.string()) << "x"; }
  EXPECT_EQ(locateTclLibraryFrom(tree.bin.string()), lib.lexically_normal().string());
}

}  // namespace
}  // namespace crucible
