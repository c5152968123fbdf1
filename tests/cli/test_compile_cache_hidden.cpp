// The reference's torch.compile caches outlive each job (a warm cache spares most of the
// compile), so they must be out of every candidate's reach: one that could read them would see
// code made from the reference, and one that could write them could plant a compiled kernel for
// the next verification's baseline. A candidate that knows the exact folder tries both. This
// holds the walls together: under bubblewrap the folder is outside the sandbox's view
// altogether; without it (GPU machines) the kernel's file rules hide it (hiddenFolders, pinned
// by HiddenFolders.OnlyTheBaselineSeesItsCompileCaches).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/cli_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string readAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CompileCache, ACandidateCanNeitherReadNorWriteTheBaselinesCompileCache) {
  const fs::path dir =
      fs::temp_directory_path() / ("crucible-compile-cache-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path cache = dir / "xdg" / "crucible" / "baseline";
  fs::create_directories(cache);
  std::ofstream(cache / "secret.txt") << "what the reference compiled to";

  const fs::path example =
      fs::path(CRUCIBLE_TEST_SOURCE_DIR) / "resources" / "examples" / "silu_residual";
  std::string honest = readAll(example / "candidate.py");
  // The candidate pries at the folder it was told of: a read it manages shows in its outputs
  // (off by 1000), a write shows as a file there.
  const std::string prying = "\nCACHE = " + json(cache.string()).dump() + R"(


def _pry():
    seen = False
    try:
        with open(CACHE + "/secret.txt") as f:
            seen = bool(f.read())
    except Exception:
        pass
    try:
        with open(CACHE + "/planted.txt", "w") as f:
            f.write("a kernel for the next baseline")
    except Exception:
        pass
    return seen


class Prying(ModelNew):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = _pry()

    def forward(self, x, residual):
        out = super().forward(x, residual)
        return out + 1000.0 if self.seen or _pry() else out


ModelNew = Prying
)";
  const fs::path candidate = dir / "candidate.py";
  std::ofstream(candidate) << honest << prying;

  const auto run = test::runCli(
      {"verify", (example / "reference.py").string(), candidate.string(), "--json", "--no-db",
       "--reps", "3", "--trials", "2", "--backend", "interpret", "--no-compile-baseline"},
      {{"XDG_CACHE_HOME", (dir / "xdg").string()}});
  // 0 verified, 1 not (a prying candidate may well be flagged for its file access): either way
  // the verification ran to its end.
  ASSERT_TRUE(run.exitCode == 0 || run.exitCode == 1) << run.exitCode << ": " << run.err;
  const json j = json::parse(run.out);
  if (!j["sandboxed"].get<bool>()) {
    fs::remove_all(dir);
    GTEST_SKIP() << "no sandbox on this machine: " << j["sandbox_note"];
  }
  // That this is the folder the baseline's caches live in under XDG_CACHE_HOME is pinned by
  // HiddenFolders.OnlyTheBaselineSeesItsCompileCaches (a cold torch.compile here costs a minute).
  EXPECT_FALSE(fs::exists(cache / "planted.txt"));
  EXPECT_EQ(readAll(cache / "secret.txt"), "what the reference compiled to");
  EXPECT_TRUE(j["correct"].get<bool>())
      << "the candidate read the cache: " << run.out.substr(0, 2000);
  // Its attempts were seen: the outputs ran (not a crash) and the walls said no.
  EXPECT_NE(j["verdict"], "error") << run.out.substr(0, 2000);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace crucible
