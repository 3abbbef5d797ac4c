#include "reports/output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "ropekit/error.hpp"

namespace ropekit {

namespace fs = std::filesystem;

void write_file_atomic(const std::string& path, std::string_view content) {
  std::error_code ec;
  const fs::path target(path);
  if (fs::exists(target, ec) && !fs::is_regular_file(target, ec)) {
    if (fs::is_directory(target, ec)) throw InputError(fmt::format("cannot write '{}': it is a directory", path));
    std::ofstream direct(target, std::ios::binary);
    direct.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!direct) throw InputError(fmt::format("cannot write '{}'", path));
    return;
  }
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw InputError(fmt::format("cannot create directory '{}': {}", target.parent_path().string(), ec.message()));
  }
  const fs::path tmp = target.string() + fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      throw InputError(fmt::format("cannot write '{}'", path));
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(fmt::format("cannot write '{}': {}", path, ec.message()));
  }
}

void emit(const std::string& path, std::string_view content) {
  if (path.empty() || path == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  write_file_atomic(path, content);
}

std::string read_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(fmt::format("cannot read {} '{}': it is a directory", what, path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ropekit
