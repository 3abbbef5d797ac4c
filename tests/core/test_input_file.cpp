// Reading user-named files: regular files only, a size cap, and a memory of what was read.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "ropekit/core/error.hpp"
#include "ropekit/core/input_file.hpp"
#include "tests/support.hpp"

using namespace ropekit;
using ropekit::test::ScratchDir;

namespace {

std::string error_of(const std::string& path, std::uint64_t cap = kMaxInputFileBytes) {
  try {
    read_file(path, "config", cap);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("read_file returns a regular file's bytes exactly") {
  ScratchDir dir("read");
  const std::string bytes("a,b\r\n\0tail without newline", 27);
  const std::string path = dir.write("f.txt", bytes);
  CHECK(read_file(path, "config") == bytes);
  CHECK(read_file(dir.write("empty.txt", ""), "config").empty());
}

TEST_CASE("read_file refuses what is not a regular file, before reading it") {
  ScratchDir dir("notfile");
  // /dev/zero never ends: before, it was read until memory ran out.
  CHECK(error_of("/dev/zero") == "config = '/dev/zero' (must be a regular file, not a character device)");
  CHECK(error_of(dir.path().string()).find("(must be a regular file, not a directory)") != std::string::npos);
  CHECK(error_of(dir.file("missing.yaml")) ==
        "config = '" + dir.file("missing.yaml") + "' (must be a readable file: No such file or directory)");
  // A FIFO with no writer: opening it to read would block forever. The refusal must come without
  // opening it; run it on a thread so that a regression fails the test instead of hanging it.
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto pending = std::make_shared<std::promise<std::string>>();
  auto result = pending->get_future();
  std::thread([pending, fifo] { pending->set_value(error_of(fifo)); }).detach();
  REQUIRE(result.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK(result.get() == "config = '" + fifo + "' (must be a regular file, not a FIFO (named pipe))");
  // A symlink to a device is judged by what it points to.
  std::filesystem::create_symlink("/dev/zero", dir.file("link"));
  CHECK(error_of(dir.file("link")).find("not a character device") != std::string::npos);
}

TEST_CASE("read_file caps the size: the default at 256 MiB, an explicit cap at its byte") {
  ScratchDir dir("cap");
  // A sparse file one byte over the default cap: refused from its size, without reading (or storing) it.
  const std::string big = dir.file("big.yaml");
  { std::ofstream(big) << ""; }
  std::filesystem::resize_file(big, (std::uint64_t{256} << 20) + 1);
  CHECK(error_of(big) == "config = '" + big + "' (must be at most 268435456 bytes, 256 MiB: it has 268435457 bytes)");
  // The boundary of an explicit cap: 10 bytes pass, 11 do not.
  CHECK(read_file(dir.write("ten", "0123456789"), "config", 10) == "0123456789");
  CHECK(error_of(dir.write("eleven", "0123456789A"), 10).find("(must be at most 10 bytes, 0 MiB: it has 11 bytes)") !=
        std::string::npos);
}

TEST_CASE("input_file_at finds a file read earlier under any spelling, link or hard link") {
  ScratchDir dir("ident");
  std::filesystem::create_directories(dir.path() / "sub");
  const std::string path = dir.write("c.yaml", "seeds: [0]\n");
  const std::string other = dir.write("other.yaml", "seeds: [0]\n");
  CHECK_FALSE(input_file_at(path).has_value());  // not read yet
  read_file(path, "config");
  std::filesystem::create_symlink(path, dir.file("link.yaml"));
  std::filesystem::create_hard_link(path, dir.file("hard.yaml"));
  for (const std::string& spelling : {path, (dir.path() / "." / "c.yaml").string(),
                                      (dir.path() / "sub" / ".." / "c.yaml").string(), dir.file("link.yaml"),
                                      dir.file("hard.yaml")}) {
    CAPTURE(spelling);
    const auto in = input_file_at(spelling);
    REQUIRE(in.has_value());
    CHECK(in->what == "config");
    CHECK(in->path == path);
  }
  CHECK_FALSE(input_file_at(other).has_value());  // same content, another file
  CHECK_FALSE(input_file_at(dir.file("missing")).has_value());
}
