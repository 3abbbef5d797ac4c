#include "reports/output.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

namespace fs = std::filesystem;

namespace {

// ---- Temporaries in flight, for the signal handler --------------------------------------------------
// Fixed slots (no allocation, lock-free atomics): all a handler may touch. Slots are claimed round-robin,
// so a freed slot's name stays intact long after release, even if a handler on another thread still reads it.
constexpr int kSlots = 64;
struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 claimed (name not yet ours), 2 names a temporary this process created
  char path[PATH_MAX]{};
};
// constinit: zero bytes in .bss, touched only when used (a dynamic initialiser would fault in all 64 pages
// at every start-up, 0.2 ms of each command's run).
constinit Slot g_slots[kSlots]{};
std::atomic<unsigned> g_next_slot{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

extern "C" void remove_temporaries_and_reraise(int sig) {
  const int saved = errno;
  for (auto& s : g_slots)
    if (s.state.load() == 2) ::unlink(s.path);
  errno = saved;
  // SA_RESETHAND restored the default action; the signal is blocked until the handler returns, and then
  // kills the process, so its exit status is the signal's as without the handler.
  ::raise(sig);
}

// The signals whose default action ends the process and that a user, a shell or a scheduler sends: the
// temporaries go with the process (SIGXFSZ: `ulimit -f`; SIGPIPE: a closed pipe; SIGALRM: `timeout -s ALRM`).
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXFSZ};

// Installs the handler for kCleanupSignals where their action is the default (an ignored signal, as under
// nohup, stays ignored; another handler is left alone).
void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kCleanupSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&sa.sa_mask);
      for (int s : kCleanupSignals) sigaddset(&sa.sa_mask, s);
      sa.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

int claim_slot() {
  install_signal_handlers();
  for (int tries = 0; tries < kSlots; ++tries) {
    const int i = static_cast<int>(g_next_slot.fetch_add(1) % kSlots);
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) return i;
  }
  throw std::runtime_error(fmt::format("more than {} output files in flight at once", kSlots));
}

// Blocks kCleanupSignals in this thread for its lifetime: between creating a temporary and
// publishing its name, a signal would otherwise leave it behind.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : kCleanupSignals) sigaddset(&s, sig);
    ::pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

// ---- Checked writes ------------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& path, std::string_view reason) {
  throw InputError(fmt::format("cannot write '{}': {}", path, reason));
}

/// 0 on success, else the errno of the failed write.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), std::min<std::size_t>(data.size(), std::size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// Where a write to `path` goes, after the checks every write makes.
struct Target {
  fs::path path;        // symlinks resolved
  bool exists = false;
  bool regular = true;  // a missing file will be a regular one
  mode_t mode = 0;
};

Target resolve(const std::string& path) {
  Target t;
  t.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return t;  // missing (or unreachable: the write reports why)
  if (S_ISDIR(st.st_mode)) fail(path, "it is a directory");
  if (const auto in = input_file_at(path))
    fail(path, fmt::format("it is the {} this run read{}; an output never replaces an input (choose another name)",
                           in->what, in->path == path ? std::string() : fmt::format(" (as '{}')", in->path)));
  t.exists = true;
  t.regular = S_ISREG(st.st_mode);
  t.mode = st.st_mode & 07777;
  std::error_code ec;
  if (fs::is_symlink(t.path, ec)) {
    t.path = fs::canonical(t.path, ec);  // write through the link: replace its target, keep the link
    if (ec) fail(path, ec.message());
  }
  return t;
}

void write_direct(const std::string& path, const fs::path& target, std::string_view content) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fail(path, std::strerror(errno));
  int err = write_all(fd, content);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) fail(path, std::strerror(err));
}

// A complete copy of a file's new content under <target>.tmp.<pid>, removed unless it lands; so are the
// directories created for it, if still empty.
class Staged {
 public:
  Staged(std::string path, fs::path target) : path_(std::move(path)), target_(std::move(target)) {}
  ~Staged() {
    if (fd_ >= 0) ::close(fd_);
    if (slot_ >= 0) {
      ::unlink(tmp_.c_str());
      g_slots[slot_].state.store(0);
    }
    if (!landed_) {
      std::error_code ec;
      for (const auto& d : created_dirs_) fs::remove(d, ec);  // deepest first; only if empty
    }
  }
  Staged(const Staged&) = delete;
  Staged& operator=(const Staged&) = delete;

  const fs::path& target() const { return target_; }

  /// Creates missing parent directories, then writes and closes the temporary, checking each step.
  void write(std::string_view content, std::optional<mode_t> mode) {
    open(mode);
    append(content);
    finish();
  }

  /// Creates missing parent directories and the temporary, open for append().
  void open(std::optional<mode_t> mode) {
    std::error_code ec;
    for (fs::path d = fs::absolute(target_).parent_path(); !d.empty() && !fs::exists(d, ec); d = d.parent_path()) {
      created_dirs_.push_back(d);
      if (d == d.parent_path()) break;
    }
    fs::create_directories(fs::absolute(target_).parent_path(), ec);
    if (ec) fail(path_, fmt::format("cannot create directory '{}': {}", target_.parent_path().string(), ec.message()));

    const int slot = claim_slot();
    int fd = -1;
    {
      const SignalsHeld held;
      // <target>.tmp.<pid>, or .tmp.<pid>.<n> if that name is taken: an existing file is never removed.
      for (int n = 0; n < 100 && fd < 0; ++n) {
        const std::string tmp = fs::absolute(target_).string() + (n == 0 ? fmt::format(".tmp.{}", ::getpid())
                                                                         : fmt::format(".tmp.{}.{}", ::getpid(), n));
        if (tmp.size() >= PATH_MAX) {
          g_slots[slot].state.store(0);
          fail(path_, std::strerror(ENAMETOOLONG));
        }
        std::memcpy(g_slots[slot].path, tmp.c_str(), tmp.size() + 1);
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd >= 0) {
          g_slots[slot].state.store(2);  // ours now: a signal from here on removes it
          tmp_ = tmp;
          slot_ = slot;
        } else if (errno != EEXIST) {
          const int err = errno;
          g_slots[slot].state.store(0);
          fail(path_, std::strerror(err));
        }
      }
    }
    if (fd < 0) {
      g_slots[slot].state.store(0);
      fail(path_, "no free temporary name beside it");
    }
    if (mode) ::fchmod(fd, *mode);  // a replaced file keeps its permissions
    fd_ = fd;
  }

  /// Writes a piece to the open temporary (closing it on failure).
  void append(std::string_view content) {
    if (const int err = write_all(fd_, content)) {
      ::close(fd_);
      fd_ = -1;
      fail(path_, std::strerror(err));
    }
  }

  /// Closes the temporary.
  void finish() {
    // No fsync: the rename makes the file appear whole or not at all for every way ropekit itself can stop (an
    // error, Ctrl-C, kill), which is the promise; surviving a power cut is left to the file system, as numpy's
    // and pandas' writers do (fsync cost 0.5 ms, a twentieth of a fixed-basis suite's run). close() still
    // reports late write errors (NFS, quotas).
    const int err = ::close(fd_) != 0 ? errno : 0;
    fd_ = -1;
    if (err != 0) fail(path_, std::strerror(err));
  }

  /// Renames the temporary onto the target: a reader sees the old file or the new one, never none (unlinking the
  /// old file first saved ext4's writeback, 0.1-0.4 ms, but left a window where the file was missing).
  void land() {
    const SignalsHeld held;
    if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail(path_, std::strerror(errno));
    g_slots[slot_].state.store(0);
    slot_ = -1;
    landed_ = true;
  }

 private:
  std::string path_, tmp_;
  fs::path target_;
  std::vector<fs::path> created_dirs_;
  int slot_ = -1;
  int fd_ = -1;
  bool landed_ = false;
};

struct Held {
  std::string path;
  fs::path target;
  std::string content;
};

}  // namespace

struct OutputBatch::State {
  std::vector<std::unique_ptr<Staged>> staged;
  std::vector<Held> held;
  ~State() {
    while (!staged.empty()) staged.pop_back();  // last first: a directory is removed after the files in it
  }
};

namespace {
OutputBatch::State* g_batch = nullptr;
}  // namespace

OutputBatch::OutputBatch() : state_(std::make_unique<State>()) {
  if (g_batch) throw std::logic_error("OutputBatch: batches do not nest");
  g_batch = state_.get();
}

OutputBatch::~OutputBatch() {
  if (g_batch == state_.get()) g_batch = nullptr;
}  // state_'s Staged files remove their temporaries

void OutputBatch::commit() {
  g_batch = nullptr;
  for (const auto& h : state_->held) write_direct(h.path, h.target, h.content);
  state_->held.clear();
  for (auto& s : state_->staged) s->land();
  state_->staged.clear();
}

void check_output_path(const std::string& path) {
  if (path.empty() || path == "-") return;
  resolve(path);
}

void write_file_atomic(const std::string& path, std::string_view content) {
  const Target t = resolve(path);
  if (t.exists && !t.regular) {
    if (g_batch) g_batch->held.push_back({path, t.path, std::string(content)});
    else write_direct(path, t.path, content);
    return;
  }
  if (g_batch)  // written twice in one batch: the later content wins
    std::erase_if(g_batch->staged, [&](const auto& s) { return s->target() == t.path; });
  auto staged = std::make_unique<Staged>(path, t.path);
  staged->write(content, t.exists ? std::optional<mode_t>(t.mode) : std::nullopt);
  if (g_batch) g_batch->staged.push_back(std::move(staged));
  else staged->land();
}

void emit(const std::string& path, std::string_view content) {
  if (path.empty() || path == "-") {
    std::cout.flush();
    std::fflush(stdout);
    if (const int err = write_all(STDOUT_FILENO, content))
      throw InputError(fmt::format("cannot write standard output: {}", std::strerror(err)));
    return;
  }
  write_file_atomic(path, content);
}

struct OutputStream::State {
  std::string path;
  bool to_stdout = false;
  std::unique_ptr<Staged> staged;  // a regular file's temporary
  int direct_fd = -1;              // a non-regular target (/dev/null, a FIFO), written as it comes
};

OutputStream::OutputStream(const std::string& path) : state_(std::make_unique<State>()) {
  if (g_batch) throw std::logic_error("OutputStream: not inside an OutputBatch");
  state_->path = path;
  if (path.empty() || path == "-") {
    state_->to_stdout = true;
    std::cout.flush();
    std::fflush(stdout);
    return;
  }
  const Target t = resolve(path);
  if (t.exists && !t.regular) {
    state_->direct_fd = ::open(t.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (state_->direct_fd < 0) fail(path, std::strerror(errno));
    return;
  }
  state_->staged = std::make_unique<Staged>(path, t.path);
  state_->staged->open(t.exists ? std::optional<mode_t>(t.mode) : std::nullopt);
}

OutputStream::~OutputStream() {
  if (state_->direct_fd >= 0) ::close(state_->direct_fd);
}  // an uncommitted Staged removes its temporary

void OutputStream::write(std::string_view piece) {
  if (state_->to_stdout) {
    if (const int err = write_all(STDOUT_FILENO, piece))
      throw InputError(fmt::format("cannot write standard output: {}", std::strerror(err)));
  } else if (state_->direct_fd >= 0) {
    if (const int err = write_all(state_->direct_fd, piece)) fail(state_->path, std::strerror(err));
  } else if (state_->staged) {
    state_->staged->append(piece);
  } else {
    throw std::logic_error("OutputStream: write after commit");
  }
}

void OutputStream::commit() {
  if (state_->direct_fd >= 0) {
    const int fd = state_->direct_fd;
    state_->direct_fd = -1;
    if (::close(fd) != 0) fail(state_->path, std::strerror(errno));
  }
  if (state_->staged) {
    state_->staged->finish();
    state_->staged->land();
    state_->staged.reset();
  }
}

bool flush_stdout() {
  errno = 0;
  std::cout.flush();  // flushes stdout too (std::cout is synced with stdio): a failure sets errno here
  int err = errno;
  const bool flushed = std::fflush(stdout) == 0;
  if (!flushed && err == 0) err = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return true;
  std::cerr << "error: cannot write standard output: " << (err ? std::strerror(err) : "a write failed") << "\n";
  return false;
}

}  // namespace ropekit
