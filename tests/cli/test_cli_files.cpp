// Files on the command line as a user meets them: inputs that are not files, outputs that cannot be
// written, an output named like an input, a signal or a full disk in the middle of a write.
// The binary is spawned directly (fork/exec) to set limits and send signals; every run has a timeout,
// so a regression that blocks or eats memory fails the test instead of hanging it.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "tests/support.hpp"

using ropekit::test::ScratchDir;
using ropekit::test::slurp;
using ropekit::test::source_path;

namespace fs = std::filesystem;

namespace {

struct Limits {
  rlim_t file_size = RLIM_INFINITY;  ///< RLIMIT_FSIZE, with SIGXFSZ ignored: writes beyond fail with EFBIG
  rlim_t memory = rlim_t{4} << 30;   ///< RLIMIT_AS: a regression reading /dev/zero fails instead of exhausting the machine
};

struct Outcome {
  bool timed_out = false;
  int exit_code = -1;  ///< -1 if killed by a signal
  int signal = 0;
  std::string out, err;
};

class Child {
 public:
  /// Starts `ropekit args...` with stdout to stdout_path (default: a scratch file) and default actions for
  /// the signals ropekit cleans up after (a test runner may have them ignored, and that would be inherited).
  Child(const std::vector<std::string>& args, const Limits& limits = {}, const std::string& stdout_path = "")
      : io_("spawn-io"), out_(stdout_path.empty() ? io_.file("stdout") : stdout_path), err_(io_.file("stderr")) {
    std::vector<std::string> words = {ROPEKIT_CLI};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer reserves terabytes of address space for its shadow memory, so RLIMIT_AS would stop it at
    // start-up; its own resident-memory cap does the same job (a runaway read dies instead). Set before fork.
    const std::string asan_options = "ASAN_OPTIONS=hard_rss_limit_mb=" + std::to_string(limits.memory >> 20);
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e)
      if (std::string_view(*e).rfind("ASAN_OPTIONS=", 0) != 0) envp.push_back(*e);
    envp.push_back(const_cast<char*>(asan_options.c_str()));
    envp.push_back(nullptr);
#endif
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0) ::_exit(126);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXFSZ}) ::signal(sig, SIG_DFL);
      if (limits.file_size != RLIM_INFINITY) {
        const rlimit fsize{limits.file_size, limits.file_size};
        ::setrlimit(RLIMIT_FSIZE, &fsize);
        ::signal(SIGXFSZ, SIG_IGN);
      }
#if defined(__SANITIZE_ADDRESS__)
      ::execve(argv[0], argv.data(), envp.data());
#else
      const rlimit as{limits.memory, limits.memory};
      ::setrlimit(RLIMIT_AS, &as);
      ::execv(argv[0], argv.data());
#endif
      ::_exit(127);
    }
  }
  ~Child() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }

  /// True once the child has exited (reaps it).
  bool exited() {
    if (reaped_) return true;
    const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) reaped_ = true;
    return reaped_;
  }

  Outcome wait(double timeout_seconds = 60) {
    Outcome o;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    while (!exited()) {
      if (std::chrono::steady_clock::now() > deadline) {
        o.timed_out = true;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status_, 0);
        reaped_ = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status_)) o.exit_code = WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) o.signal = WTERMSIG(status_);
    if (out_.rfind("/dev/", 0) != 0) o.out = slurp(out_);
    o.err = slurp(err_);
    return o;
  }

 private:
  ScratchDir io_;
  std::string out_, err_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

Outcome run(const std::vector<std::string>& args, const Limits& limits = {}, const std::string& stdout_path = "") {
  return Child(args, limits, stdout_path).wait();
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::size_t pos = 0;
  while ((pos = s.find_first_not_of(' ', pos)) != std::string::npos) {
    const auto end = std::min(s.find(' ', pos), s.size());
    w.push_back(s.substr(pos, end - pos));
    pos = end;
  }
  return w;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::map<std::string, std::string> contents_of(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename().string()] = slurp(e.path().string());
  return files;
}

// The one-line error of bad input: exit 2, "error: ..." containing `expect`, nothing on stdout.
void check_refused(const Outcome& r, const std::string& expect) {
  CAPTURE(r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find(expect) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("inputs that are not files (/dev/zero, a FIFO) are refused at once, with no output") {
  // Before: /dev/zero was read until memory ran out, and a FIFO config blocked forever.
  ScratchDir dir("notfile");
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string out = dir.file("out.csv"), out_dir = dir.file("reports");
  struct Case {
    const char* args;  // {} is the input, OUT the output file, OUT_DIR the output directory
    const char* what;
  };
  for (const std::string input : {"/dev/zero", fifo.c_str()}) {
    const std::string kind = input == fifo ? "(must be a regular file, not a FIFO (named pipe))"
                                           : "(must be a regular file, not a character device)";
    for (const auto& c : {Case{"fit --config {} --out OUT", "config"},
                          Case{"features --method rope --config {} --out OUT", "config"},
                          Case{"kernel --spectrum file:{} --out OUT", "frequency file"},
                          Case{"verify master --spectrum file:{} --out OUT", "frequency file"},
                          Case{"verify master --spectrum gaussian --draw-from file:{} --out OUT", "frequency file"},
                          Case{"lie check {} --out OUT", "generator file"},
                          Case{"lie kernel {} --out OUT", "generator file"},
                          Case{"probe jordan-table3 --rows {} --out-dir OUT_DIR", "rows CSV"}}) {
      std::string args = c.args;
      args.replace(args.find("{}"), 2, input);
      if (const auto p = args.find("OUT_DIR"); p != std::string::npos) args.replace(p, 7, out_dir);
      if (const auto p = args.find("OUT"); p != std::string::npos) args.replace(p, 3, out);
      CAPTURE(args);
      const Outcome r = run(words(args));
      check_refused(r, std::string(c.what) + " = '" + input + "' " + kind);
      CHECK(names_in(dir.path()) == std::set<std::string>{"fifo"});  // no output file, no directory, no temporary
    }
  }
}

TEST_CASE("an oversized input is refused from its size, at each kind's cap") {
  // Sparse files one byte over each cap: refused before a byte is read (the parsers would need up to
  // ~140 bytes of memory per byte). The caps: config 1 MiB, rows CSV 16 MiB, generator file 128 MiB,
  // frequency file 256 MiB.
  ScratchDir dir("oversized");
  auto sparse = [&](const std::string& name, std::uintmax_t size) {
    const std::string path = dir.write(name, "");
    fs::resize_file(path, size);
    return path;
  };
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::string out = dir.file("out.csv");
  const std::string config = sparse("c.yaml", (1u << 20) + 1), rows = sparse("rows.csv", (16u << 20) + 1),
                    gen = sparse("g.json", (128u << 20) + 1), freqs = sparse("f.txt", (256u << 20) + 1);
  for (const auto& c : std::vector<Case>{
           {{"fit", "--config", config, "--out", out},
            "config = '" + config + "' (must be at most 1048576 bytes, 1 MiB: it has 1048577 bytes)"},
           {{"probe", "jordan-table3", "--rows", rows, "--out-dir", dir.file("reports")},
            "rows CSV = '" + rows + "' (must be at most 16777216 bytes, 16 MiB: it has 16777217 bytes)"},
           {{"lie", "check", gen, "--out", out},
            "generator file = '" + gen + "' (must be at most 134217728 bytes, 128 MiB: it has 134217729 bytes)"},
           {{"kernel", "--spectrum", "file:" + freqs, "--out", out},
            "frequency file = '" + freqs + "' (must be at most 268435456 bytes, 256 MiB: it has 268435457 bytes)"},
       }) {
    CAPTURE(c.args[0]);
    check_refused(run(c.args), c.expect);
    CHECK(names_in(dir.path()) == std::set<std::string>{"c.yaml", "rows.csv", "g.json", "f.txt"});
  }
  // At the cap exactly, a config is read: the paper's, padded with a comment to 1 MiB.
  std::string text = slurp(source_path("configs/paper-table3-toy.yaml")) + "# ";
  text += std::string((1u << 20) - 1 - text.size(), 'x') + "\n";
  REQUIRE(text.size() == (1u << 20));
  const Outcome r = run({"fit", "--config", dir.write("exact.yaml", text), "--methods", "rope", "--targets", "phase"});
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("seed,target,method,", 0) == 0);
}

TEST_CASE("a write error is reported: --out /dev/full and stdout on a full device exit 2") {
  // Before: kernel and verify lost their output into /dev/full with exit code 0.
  const std::string toy = source_path("configs/paper-table3-toy.yaml");
  const std::vector<std::string> commands = {
      "kernel --spectrum gaussian:sigma=1 --lags 0.5,1",
      "verify master --spectrum gaussian --blocks 4 --trials 200 --lags 0.5",
      "fit --config " + toy + " --methods rope --targets phase",
      "features --method rope --lags 0:4",
      "lie build axial --dim 4 --axes 2",
      "jordan positionwise --window 64 --samples 8",
  };
  for (const auto& cmd : commands) {
    CAPTURE(cmd);
    auto args = words(cmd);
    args.insert(args.end(), {"--out", "/dev/full"});
    check_refused(run(args), "cannot write '/dev/full': No space left on device");
    const Outcome r = run(words(cmd), {}, "/dev/full");
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    // The message names the command (its words before the first option but lie build's family; issue 20 item 15).
    std::string command = "ropekit " + cmd.substr(0, cmd.find(" --"));
    if (command == "ropekit lie build axial") command = "ropekit lie build";
    CHECK(r.err == "error: " + command + ": cannot write standard output: No space left on device\n");
  }
  for (const auto& c : std::vector<std::pair<std::string, std::string>>{
           {"list methods", "ropekit list: "}, {"probe --list", "ropekit probe: "}, {"--help", ""}, {"--version", ""}}) {
    const std::string &cmd = c.first, &named = c.second;
    CAPTURE(cmd);
    const Outcome r = run(words(cmd), {}, "/dev/full");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "error: " + named + "cannot write standard output: No space left on device\n");
  }
  // A writable device is written directly, as before.
  const Outcome ok = run(words("kernel --spectrum gaussian --out /dev/null"));
  CHECK(ok.exit_code == 0);
  CHECK(ok.err.empty());
}

TEST_CASE("an output named like an input of the same run is refused, under any spelling") {
  // Before: `fit --config c.yaml --out c.yaml` replaced the config with CSV rows.
  ScratchDir dir("clash");
  const std::string config = dir.write("c.yaml", slurp(source_path("configs/paper-table3-toy.yaml")));
  const std::string freqs = dir.write("f.txt", "0.5\n1.5\n");
  REQUIRE(run({"lie", "build", "axial", "--dim", "4", "--axes", "2", "--out", dir.file("g.json")}).exit_code == 0);
  fs::create_symlink(config, dir.file("link.yaml"));
  fs::create_hard_link(config, dir.file("hard.yaml"));
  fs::create_directories(dir.path() / "sub");
  const auto before = contents_of(dir.path());
  const std::string in_dir = dir.path().string() + "/sub/../";
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  for (const auto& c : std::vector<Case>{
           {{"fit", "--config", config, "--methods", "rope", "--out", config}, "it is the config this run read"},
           {{"fit", "--config", config, "--methods", "rope", "--out", in_dir + "c.yaml"}, "it is the config this run read"},
           {{"fit", "--config", config, "--methods", "rope", "--out", dir.file("link.yaml")}, "it is the config this run read"},
           {{"fit", "--config", config, "--methods", "rope", "--out", dir.file("hard.yaml")}, "it is the config this run read"},
           {{"features", "--method", "rope", "--config", config, "--out", config}, "it is the config this run read"},
           {{"kernel", "--spectrum", "file:" + freqs, "--out", freqs}, "it is the frequency file this run read"},
           {{"verify", "master", "--spectrum", "gaussian", "--draw-from", "file:" + freqs, "--out", in_dir + "f.txt"},
            "it is the frequency file this run read"},
           {{"lie", "check", dir.file("g.json"), "--out", dir.file("g.json")}, "it is the generator file this run read"},
           {{"lie", "kernel", dir.file("g.json"), "--out", in_dir + "g.json"}, "it is the generator file this run read"},
       }) {
    CAPTURE(c.args.back());
    const Outcome r = run(c.args);
    check_refused(r, "cannot write '" + c.args.back() + "': " + c.expect);
    CHECK(contents_of(dir.path()) == before);  // every input intact, nothing new, no temporary
  }
  // A probe re-rendered from its own previous rows would overwrite them.
  ScratchDir reports("clash-probe");
  REQUIRE(run({"probe", "jordan-table3", "--out-dir", reports.path().string()}).exit_code == 0);
  const auto old = contents_of(reports.path());
  const std::string rows = reports.file("jordan-table3.csv");
  const Outcome r = run({"probe", "jordan-table3", "--rows", rows, "--out-dir", reports.path().string()});
  check_refused(r, "it is the rows CSV this run read");
  CHECK(contents_of(reports.path()) == old);
}

TEST_CASE("SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM or SIGPIPE during a large write leave neither a temporary nor the target") {
  // Before: Ctrl-C while `features` wrote a large file left a *.tmp.<pid> of hundreds of MB (and until issue 20,
  // SIGUSR1, SIGALRM and SIGPIPE still did; SIGQUIT and SIGXFSZ are handled alike but dump core by default).
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM, SIGPIPE}) {
    CAPTURE(sig);
    ScratchDir dir("signal");
    const std::string out = dir.file("big.csv");
    bool interrupted_mid_write = false;
    // The signal goes the moment the temporary appears (inotify); the ~35 MB write and its fsync take far
    // longer than that. Should the run still win the race, the attempt is repeated.
    for (int attempt = 0; attempt < 3 && !interrupted_mid_write; ++attempt) {
      const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
      REQUIRE(watch >= 0);
      REQUIRE(::inotify_add_watch(watch, dir.path().c_str(), IN_CREATE) >= 0);
      Child child({"features", "--method", "rope", "--num-freqs", "2", "--lags", "0:400000", "--out", out});
      bool sent = false;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while (!sent && !child.exited() && std::chrono::steady_clock::now() < deadline) {
        pollfd p{watch, POLLIN, 0};
        if (::poll(&p, 1, 5) <= 0) continue;
        alignas(inotify_event) char buf[4096];
        const ssize_t n = ::read(watch, buf, sizeof buf);
        for (ssize_t off = 0; off < n;) {
          const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
          if (e->len > 0 && std::string(e->name).find(".tmp.") != std::string::npos && !sent) {
            REQUIRE(::kill(child.pid(), sig) == 0);
            sent = true;
          }
          off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
        }
      }
      ::close(watch);
      const Outcome r = child.wait();
      REQUIRE_FALSE(r.timed_out);
      CHECK(names_in(dir.path()).count("big.csv.tmp." + std::to_string(child.pid())) == 0);
      interrupted_mid_write = sent && r.signal == sig && !fs::exists(out);
      if (!interrupted_mid_write) fs::remove(out);
    }
    CHECK(interrupted_mid_write);  // the process died of the signal, as without the handler
    CHECK(names_in(dir.path()).empty());
  }
}

TEST_CASE("a full disk leaves no partial file: a probe's files land all or none") {
  // Before: a full disk during `probe` left a partial SVG. RLIMIT_FSIZE makes writes fail with EFBIG.
  ScratchDir full("fsize-ref");
  REQUIRE(run({"probe", "jordan-table3", "--out-dir", full.path().string()}).exit_code == 0);
  std::uintmax_t smallest = UINTMAX_MAX, largest = 0;
  for (const auto& e : fs::directory_iterator(full.path())) {
    smallest = std::min(smallest, e.file_size());
    largest = std::max(largest, e.file_size());
  }
  REQUIRE(smallest < largest);  // so the limit lets some files through and stops another
  ScratchDir dir("fsize");
  dir.write("jordan-table3.md", "old report\n");
  Limits limits;
  limits.file_size = static_cast<rlim_t>(largest - 1);
  const Outcome r = run({"probe", "jordan-table3", "--out-dir", dir.path().string()}, limits);
  check_refused(r, "': File too large");
  CHECK(contents_of(dir.path()) == std::map<std::string, std::string>{{"jordan-table3.md", "old report\n"}});
  // Into a new directory: not even the directory is left.
  const Outcome fresh = run({"probe", "jordan-table3", "--out-dir", dir.file("new/reports")}, limits);
  check_refused(fresh, "': File too large");
  CHECK(names_in(dir.path()) == std::set<std::string>{"jordan-table3.md"});

  // A single output: no partial file either.
  limits.file_size = 512;
  const std::string out = dir.file("rows.csv");
  const Outcome f = run({"fit", "--config", source_path("configs/paper-table3-toy.yaml"), "--methods", "rope",
                         "--targets", "phase", "--out", out},
                        limits);
  check_refused(f, "cannot write '" + out + "': File too large");
  CHECK(names_in(dir.path()) == std::set<std::string>{"jordan-table3.md"});
}
