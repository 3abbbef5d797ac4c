#pragma once
// Shared test helpers: running the `ropekit` binary as a user would, and scratch directories.

#include <sys/wait.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <boost/math/distributions/normal.hpp>

#include "ropekit/core/rng.hpp"

namespace ropekit::test {

/// The seed of a seeded statistical test: ROPEKIT_TEST_SEED overrides the file's default, so any failure can be
/// replayed and other seeds tried.
inline std::uint64_t test_seed(std::uint64_t fallback = 1234567) { return seed_from_env("ROPEKIT_TEST_SEED", fallback); }

/// Two-sided standard-normal bound at false-alarm rate alpha per check (1e-6: a suite of a few thousand seeded
/// checks stays quiet on correct code).
inline double z_bound(double alpha = 1e-6) {
  return boost::math::quantile(boost::math::complement(boost::math::normal_distribution<double>(), alpha / 2));
}

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

/// A fresh empty directory under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("ropekit-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / name, std::ios::binary) << content;
    return file(name);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `ropekit <args>` through the shell (args are shell words) and captures both streams.
inline CliResult run_ropekit(const std::string& args) {
  static ScratchDir io("cli-io");
  const std::string out = io.file("stdout"), err = io.file("stderr");
  const std::string cmd = std::string("'") + ROPEKIT_CLI + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// Path of a file in the source tree (configs/, data/).
inline std::string source_path(const std::string& rel) { return std::string(ROPEKIT_SOURCE_DIR) + "/" + rel; }

/// Bad input as a user meets it: `ropekit <args> --out FILE` exits 2 with one "error: ..." line containing
/// `expect`, prints nothing on stdout, and leaves no output file or temporary behind.
inline void check_rejected(const std::string& args, const std::string& expect) {
  ScratchDir dir("bad");
  const std::string out = dir.file("out.csv");
  const auto r = run_ropekit(args + " --out '" + out + "'");
  CAPTURE(args);
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find(expect) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
  CHECK(std::filesystem::is_empty(dir.path()));  // no output file, no temporary
}

}  // namespace ropekit::test
