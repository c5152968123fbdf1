#include "core/util/file_bytes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace crucible {

namespace {
// Small enough to stay in the cache between the read and onBlock, large enough that the
// system calls cost nothing.
constexpr std::size_t kBlock = std::size_t{4} << 20;

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

/// Reads up to `n` bytes, retrying interrupted and short reads; -1 on an error.
long long readSome(int fd, std::byte* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return static_cast<long long>(got);
}
}  // namespace

std::optional<FileBytes> readFileBytes(const std::string& path,
                                       const std::function<void(std::string_view)>& onBlock) {
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return std::nullopt;
  // The size is a hint: a file that grows while it is read is read to its end all the same.
  std::size_t capacity = info.st_size > 0 ? static_cast<std::size_t>(info.st_size) : kBlock;
  FileBytes file;
  file.data = std::make_unique_for_overwrite<std::byte[]>(capacity);
  for (;;) {
    if (file.size == capacity) {
      std::byte probe;
      const long long more = readSome(fd.get(), &probe, 1);
      if (more < 0) return std::nullopt;
      if (more == 0) break;
      capacity *= 2;
      auto grown = std::make_unique_for_overwrite<std::byte[]>(capacity);
      std::memcpy(grown.get(), file.data.get(), file.size);
      file.data = std::move(grown);
      file.data[file.size++] = probe;
      if (onBlock) onBlock({reinterpret_cast<const char*>(&probe), 1});
      continue;
    }
    const std::size_t want = std::min(kBlock, capacity - file.size);
    const long long got = readSome(fd.get(), file.data.get() + file.size, want);
    if (got < 0) return std::nullopt;
    if (onBlock && got > 0) {
      onBlock({reinterpret_cast<const char*>(file.data.get() + file.size),
               static_cast<std::size_t>(got)});
    }
    file.size += static_cast<std::size_t>(got);
    if (static_cast<std::size_t>(got) < want) break;  // the end of the file
  }
  return file;
}

}  // namespace crucible
