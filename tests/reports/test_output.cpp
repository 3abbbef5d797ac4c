// Writing results: atomic replacement, checked writes, batches that land together, inputs never overwritten.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>

#include "reports/output.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"
#include "tests/support.hpp"

using namespace ropekit;
using ropekit::test::ScratchDir;
using ropekit::test::slurp;

namespace fs = std::filesystem;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::string tmp_of(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

}  // namespace

TEST_CASE("write_file_atomic creates, replaces, keeps the mode, and leaves no temporary") {
  ScratchDir dir("write");
  const std::string path = dir.file("sub/dir/out.csv");  // missing parents are created
  write_file_atomic(path, "first\n");
  CHECK(slurp(path) == "first\n");
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  write_file_atomic(path, "second\n");
  CHECK(slurp(path) == "second\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(names_in(dir.path() / "sub" / "dir") == std::set<std::string>{"out.csv"});
}

TEST_CASE("write_file_atomic never removes a file that happens to have its temporary's name") {
  ScratchDir dir("tmpname");
  const std::string path = dir.file("out.csv");
  dir.write("out.csv.tmp." + std::to_string(::getpid()), "someone's file\n");
  write_file_atomic(path, "rows\n");
  CHECK(slurp(path) == "rows\n");
  CHECK(slurp(tmp_of(path)) == "someone's file\n");
  CHECK(names_in(dir.path()).size() == 2);
}

TEST_CASE("write_file_atomic writes through a symlink and refuses a directory") {
  ScratchDir dir("link");
  const std::string real = dir.write("real.csv", "old\n");
  fs::create_symlink(real, dir.file("link.csv"));
  write_file_atomic(dir.file("link.csv"), "new\n");
  CHECK(fs::is_symlink(dir.file("link.csv")));
  CHECK(slurp(real) == "new\n");
  CHECK(error_of([&] { write_file_atomic(dir.path().string(), "x"); }) ==
        "cannot write '" + dir.path().string() + "': it is a directory");
  CHECK(error_of([&] { check_output_path(dir.path().string()); }).find("it is a directory") != std::string::npos);
  CHECK(error_of([&] { check_output_path(""); }).empty());  // stdout
}

TEST_CASE("a write error on a non-regular target is reported, not lost") {
  // Before, /dev/full swallowed kernel's and verify's output with exit code 0.
  CHECK(error_of([] { write_file_atomic("/dev/full", "phi\n"); }) ==
        "cannot write '/dev/full': No space left on device");
  CHECK(error_of([] { emit("/dev/full", "phi\n"); }) == "cannot write '/dev/full': No space left on device");
  CHECK(error_of([] { write_file_atomic("/dev/null", "phi\n"); }).empty());
}

TEST_CASE("an output never replaces a file the same run read") {
  ScratchDir dir("clash");
  const std::string config = dir.write("c.yaml", "seeds: [0]\n");
  read_file(config, "config");
  fs::create_symlink(config, dir.file("link.yaml"));
  for (const std::string& out : {config, (dir.path() / "." / "c.yaml").string(), dir.file("link.yaml")}) {
    CAPTURE(out);
    const std::string e = error_of([&] { write_file_atomic(out, "seed,target\n"); });
    CHECK(e.rfind("cannot write '" + out + "': it is the config this run read", 0) == 0);
    CHECK(error_of([&] { check_output_path(out); }) == e);  // the early check says the same
  }
  CHECK(slurp(config) == "seeds: [0]\n");
  CHECK(names_in(dir.path()) == std::set<std::string>{"c.yaml", "link.yaml"});
}

TEST_CASE("an OutputBatch lands all its files at commit, or none of them") {
  ScratchDir dir("batch");
  const std::string a = dir.file("a.csv"), b = dir.file("b.md");
  SUBCASE("commit") {
    OutputBatch batch;
    write_file_atomic(a, "rows\n");
    write_file_atomic(b, "draft\n");
    write_file_atomic(b, "report\n");  // written twice: the later content wins
    CHECK_FALSE(fs::exists(a));        // staged under the temporary name only
    CHECK(slurp(tmp_of(a)) == "rows\n");
    batch.commit();
    CHECK(slurp(a) == "rows\n");
    CHECK(slurp(b) == "report\n");
    CHECK(names_in(dir.path()) == std::set<std::string>{"a.csv", "b.md"});
  }
  SUBCASE("a failed write leaves the old files and none of the new ones") {
    dir.write("b.md", "old report\n");
    dir.write("blocker", "a file where a directory is needed\n");
    {
      OutputBatch batch;
      write_file_atomic(a, "rows\n");
      write_file_atomic(b, "new report\n");
      write_file_atomic(dir.file("new/sub/c.tex"), "table\n");  // creates new/sub, removed again
      CHECK(error_of([&] { write_file_atomic(dir.file("blocker/c.svg"), "<svg/>"); })
                .rfind("cannot write '" + dir.file("blocker/c.svg") + "': cannot create directory", 0) == 0);
    }  // not committed: the staged temporaries are removed
    CHECK(slurp(b) == "old report\n");
    CHECK(names_in(dir.path()) == std::set<std::string>{"b.md", "blocker"});
  }
  SUBCASE("a held write to a device fails before any staged file is renamed") {
    {
      OutputBatch batch;
      write_file_atomic(a, "rows\n");
      write_file_atomic("/dev/full", "report\n");
      CHECK(error_of([&] { batch.commit(); }) == "cannot write '/dev/full': No space left on device");
    }
    CHECK(names_in(dir.path()).empty());
  }
}

TEST_CASE("an OutputStream lands its pieces whole at commit, and leaves nothing (or the old file) without it") {
  ScratchDir dir("stream");
  const std::string path = dir.file("out.csv");
  {
    OutputStream s(path);
    s.write("a,b\n");
    s.write("1,2\n");
    CHECK_FALSE(fs::exists(path));        // nothing lands before commit
    CHECK(slurp(tmp_of(path)) == "a,b\n1,2\n");  // the pieces go to the temporary
    s.commit();
  }
  CHECK(slurp(path) == "a,b\n1,2\n");
  CHECK(names_in(dir.path()) == std::set<std::string>{"out.csv"});
  {
    OutputStream s(path);  // an exception before commit: the old file stays, the temporary goes
    s.write("half");
  }
  CHECK(slurp(path) == "a,b\n1,2\n");
  CHECK(names_in(dir.path()) == std::set<std::string>{"out.csv"});
  const std::string fresh = dir.file("sub/new.csv");
  {
    OutputStream s(fresh);
    s.write("x");
  }
  CHECK_FALSE(fs::exists(dir.file("sub")));  // nor the directory made for it
  CHECK(error_of([&] { OutputStream s(dir.path().string()); }).find("it is a directory") != std::string::npos);
  OutputStream null("/dev/null");  // a non-regular target is written directly
  null.write("anything");
  null.commit();
}
