#include "ropekit/core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"

namespace ropekit {

namespace {

// An input read by this process, pinned by its open descriptor: while it is open the inode cannot be freed
// and reused by a new file, so device and inode identify the input exactly.
struct Recorded {
  dev_t dev;
  ino_t ino;
  int fd;
  InputFile file;
};

// Inputs pinned by an open descriptor at most (a run reads a handful; merge reads one per shard). Beyond, an input
// is remembered by device and inode alone: a new file could reuse a deleted one's inode and be refused as an
// output, never the reverse (an input overwritten).
constexpr std::size_t kMaxPinned = 64;

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<Recorded>& registry() {
  static std::vector<Recorded> r;
  return r;
}

// Lets go of inputs deleted since (no name can reach them, so no output can overwrite them). Caller holds the lock.
void prune(std::vector<Recorded>& r) {
  std::erase_if(r, [](const Recorded& e) {
    if (e.fd < 0) return false;  // not pinned: kept
    struct stat st {};
    if (::fstat(e.fd, &st) == 0 && st.st_nlink > 0) return false;
    ::close(e.fd);
    return true;
  });
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "another kind of file";
}

// "<what> = '<path>' (must be <constraint>)".
[[noreturn]] void fail(std::string_view what, const std::string& path, std::string_view constraint) {
  throw InputError(fmt::format("{} = {} (must be {})", what, quote(path), constraint));
}

[[noreturn]] void fail_errno(std::string_view what, const std::string& path) {
  fail(what, path, fmt::format("a readable file: {}", std::strerror(errno)));
}

void check_stat(const struct stat& st, std::string_view what, const std::string& path, std::uint64_t max_bytes) {
  if (!S_ISREG(st.st_mode)) fail(what, path, fmt::format("a regular file, not {}", kind_of(st.st_mode)));
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    fail(what, path, fmt::format("at most {} bytes, {} MiB: it has {} bytes", max_bytes, max_bytes >> 20, st.st_size));
}

// Closes the descriptor unless released to the registry.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_file(const std::string& path, std::string_view what, std::uint64_t max_bytes) {
  // A NUL ends the name the system sees: "g.csv\0.zip" would read g.csv (issue 20 item 14; Python strings hold NULs).
  if (const auto nul = path.find('\0'); nul != std::string::npos)
    fail(what, path.substr(0, std::min<std::size_t>(nul, 200)) + "\\x00...",
         "a path without NUL characters: the system reads only the part before one");
  // stat first: a FIFO or a device is refused without opening it (opening a FIFO blocks for a writer).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail_errno(what, path);
  check_stat(st, what, path, max_bytes);
  // O_NONBLOCK: should the name be swapped for a FIFO after the stat, open still returns and fstat refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) fail_errno(what, path);
  Fd guard{fd};
  if (::fstat(fd, &st) != 0) fail_errno(what, path);
  check_stat(st, what, path, max_bytes);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a regular file: plain blocking reads

  std::string text;
  std::size_t total = 0;
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  for (;;) {
    // The whole file and one byte (to see the end) first, then 1 MiB at a time should it have grown;
    // at most one byte beyond the cap: a file that grew past it is refused, not read on.
    const std::uint64_t next = total < size + 1 ? size + 1 - total : std::uint64_t{1} << 20;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(next, max_bytes + 1 - total));
    text.resize(total + want);
    const ssize_t n = ::read(fd, text.data() + total, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(what, path);
    }
    if (n == 0) break;
    total += static_cast<std::size_t>(n);
    if (total > max_bytes)
      fail(what, path, fmt::format("at most {} bytes, {} MiB: it grew past that while read", max_bytes, max_bytes >> 20));
  }
  text.resize(total);

  const std::lock_guard lock(registry_mutex());
  auto& r = registry();
  prune(r);
  const auto pinned = std::count_if(r.begin(), r.end(), [](const Recorded& e) { return e.fd >= 0; });
  const bool pin = static_cast<std::size_t>(pinned) < kMaxPinned;
  r.push_back({st.st_dev, st.st_ino, pin ? fd : -1, InputFile{std::string(what), path, fnv1a64(text)}});
  if (pin) guard.fd = -1;  // else the guard closes it
  return text;
}

std::optional<InputFile> input_file_at(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const std::lock_guard lock(registry_mutex());
  auto& r = registry();
  prune(r);
  for (const auto& e : r)
    if (e.dev == st.st_dev && e.ino == st.st_ino) return e.file;
  return std::nullopt;
}

std::vector<InputFile> input_files_read() {
  const std::lock_guard lock(registry_mutex());
  auto& r = registry();
  prune(r);
  std::vector<InputFile> out;
  for (const auto& e : r) out.push_back(e.file);
  return out;
}

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace ropekit
