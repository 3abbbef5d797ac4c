#pragma once
// Writing results: all or nothing. A file is written to a temporary name beside it and renamed
// into place, so a failed run never leaves a partial output file.

#include <string>
#include <string_view>

namespace ropekit {

/// Writes content to path atomically (temporary file + rename); creates missing parent directories.
/// Non-regular targets (/dev/null, a FIFO) are written directly.
/// @throws InputError if the file cannot be written, naming the path and the reason.
void write_file_atomic(const std::string& path, std::string_view content);

/// Writes to stdout if path is empty or "-", else write_file_atomic.
void emit(const std::string& path, std::string_view content);

/// Reads a whole file. @throws InputError naming the path if it cannot be read.
std::string read_file(const std::string& path, std::string_view what);

}  // namespace ropekit
