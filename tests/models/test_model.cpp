// lib/ropekit/models/model.hpp: what a layer type's window hides (window_span), the lag every command masks; which
// paths read_model opens.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>

#include "ropekit/models/model.hpp"
#include "support.hpp"

using namespace ropekit;

TEST_CASE("window_span: the smallest lag a sliding or chunked layer cannot see") {
  LayerType l;
  CHECK_FALSE(window_span(l).has_value());  // full: every earlier position
  l.window = {Window::Kind::sliding, 1024};  // transformers: key j visible from query i when i - j < 1024
  CHECK(window_span(l) == 1024);
  l.window = {Window::Kind::chunked, 8192};  // Llama 4: one chunk of 8192 positions, so lags up to 8191
  CHECK(window_span(l) == 8192);
}

TEST_CASE("window_text: the window column's text, as `ropekit model` printed it before windows were values") {
  CHECK(window_text(Window{}) == "");
  CHECK(window_text({Window::Kind::sliding, 4096}) == "sliding 4096");
  CHECK(window_text({Window::Kind::chunked, 8192}) == "chunked 8192");
  CHECK(window_text({Window::Kind::sliding, std::int64_t{1} << 53}) == "sliding 9007199254740992");
  // Two windows are equal when kind and span are: a sliding and a chunked window of one span differ.
  CHECK(Window{Window::Kind::sliding, 8} != Window{Window::Kind::chunked, 8});
}

TEST_CASE("read_model: a FIFO, a directory or a device is refused before it is opened") {
  // Opening a FIFO for reading blocks until a writer comes: read_model used to hang on one (issue 32).
  test::ScratchDir dir("model-fifo");
  const std::string fifo = dir.file("config.json");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto done = std::async(std::launch::async, [&] {
    try {
      (void)read_model(fifo);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  });
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    // Still blocked in open: a writer lets it return, so the test fails instead of hanging.
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    FAIL_CHECK("read_model blocked on a FIFO");
  }
  CHECK(done.get() == "model file = '" + fifo + "' (must be a regular file, not a FIFO (named pipe))");
  for (const std::string& other : {dir.path().string(), std::string("/dev/zero")}) {
    try {
      (void)read_model(other);
      FAIL_CHECK("read " << other);
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("(must be a regular file, not a") != std::string::npos);
    }
  }
}
