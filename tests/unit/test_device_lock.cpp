// The parent's side of the device lock (core/verify/device_lock.h): where the lock files are
// made, and the shared hold that keeps comparisons out of other jobs' timings. The workers' side
// is tested in tests/worker/test_device_lock.py.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "core/verify/device_lock.h"
#include "temp_dir.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A worker timing: the lock held exclusive through a descriptor of its own.
class ExclusiveHolder {
 public:
  explicit ExclusiveHolder(const fs::path& prefix)
      : fd_(open((prefix.string() + ".rw").c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~ExclusiveHolder() { close(fd_); }
  bool tryLock() { return flock(fd_, LOCK_EX | LOCK_NB) == 0; }
  void unlock() { flock(fd_, LOCK_UN); }

 private:
  int fd_;
};

TEST(DeviceLock, OnlyCudaLocksByDefaultAndTheSettingDecides) {
  test::TempDir tmp;
  ScopedEnv tmpdir("TMPDIR", tmp.path().string());
  {
    ScopedEnv mode("CRUCIBLE_DEVICE_LOCK", "auto");
    EXPECT_FALSE(deviceLockPrefix("opencl"));
    auto cuda = deviceLockPrefix("cuda");
    ASSERT_TRUE(cuda);
    EXPECT_EQ(cuda->filename(), "cuda");
    EXPECT_TRUE(fs::exists(cuda->string() + ".gate"));
    EXPECT_TRUE(fs::exists(cuda->string() + ".rw"));
    struct stat info {};
    ASSERT_EQ(stat(cuda->parent_path().c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);  // no one else can swap the files
  }
  {
    ScopedEnv mode("CRUCIBLE_DEVICE_LOCK", "on");
    auto cpu = deviceLockPrefix("interpret");
    ASSERT_TRUE(cpu);
    EXPECT_EQ(cpu->filename(), "cpu");
  }
  ScopedEnv mode("CRUCIBLE_DEVICE_LOCK", "off");
  EXPECT_FALSE(deviceLockPrefix("cuda"));
}

TEST(DeviceLock, AFolderSomeoneElseCouldChangeIsNotUsed) {
  test::TempDir tmp;
  ScopedEnv tmpdir("TMPDIR", tmp.path().string());
  ScopedEnv mode("CRUCIBLE_DEVICE_LOCK", "on");
  const fs::path dir = tmp.path() / ("crucible-" + std::to_string(getuid()) + "-locks");
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::all);  // world-writable
  EXPECT_FALSE(deviceLockPrefix("cuda"));
  fs::remove(dir);
  fs::create_directory_symlink(tmp.path(), dir);  // a link to a folder elsewhere
  EXPECT_FALSE(deviceLockPrefix("cuda"));
}

TEST(DeviceLock, TheSharedHoldWaitsForATimingAndKeepsTheNextOneOut) {
  test::TempDir tmp;
  ScopedEnv tmpdir("TMPDIR", tmp.path().string());
  ScopedEnv mode("CRUCIBLE_DEVICE_LOCK", "on");
  const auto prefix = deviceLockPrefix("cuda");
  ASSERT_TRUE(prefix);
  ExclusiveHolder timing(*prefix);
  ASSERT_TRUE(timing.tryLock());
  {
    // A timing runs: the comparison waits for it, here no longer than its limit.
    SharedDeviceHold hold(prefix, 200ms);
    EXPECT_FALSE(hold.held());
  }
  timing.unlock();
  {
    SharedDeviceHold hold(prefix, 200ms);
    EXPECT_TRUE(hold.held());
    EXPECT_FALSE(timing.tryLock());  // no timing starts while the comparison runs
  }
  EXPECT_TRUE(timing.tryLock());  // released with the hold
  timing.unlock();
  SharedDeviceHold none(std::nullopt);
  EXPECT_FALSE(none.held());
}

}  // namespace
}  // namespace crucible
