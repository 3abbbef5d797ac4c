#pragma once
// Reading the files a user names (run configs, frequency files, generator files, rows CSVs): only
// regular files, at most a bounded size, and remembered, so that no output of the same run can
// overwrite an input (see input_file_at).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ropekit {

/// Largest file read_file accepts by default: 256 MiB, room for a frequency file of a million 8-D vectors
/// at full precision (about 170 MB); parsing takes up to about 9 bytes of memory per byte of such a file.
/// Callers whose parsers need more per byte pass a smaller cap (configs, generator files, rows CSVs).
inline constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{256} << 20;

/// Reads a whole user-named file. Before opening it, refuses anything that is not a regular file
/// (/dev/zero, a FIFO, a directory, a socket: reading them could block or never end) and files larger
/// than max_bytes; what is read is capped too, in case the file grows. Records the file's identity
/// (device and inode) for input_file_at.
/// @throws InputError "<what> = '<path>' (must be <constraint>)", e.g. "(must be a readable file: <strerror>)".
std::string read_file(const std::string& path, std::string_view what, std::uint64_t max_bytes = kMaxInputFileBytes);

/// An input this process read with read_file.
struct InputFile {
  std::string what;         ///< as given to read_file, e.g. "config"
  std::string path;         ///< the name it was read under
  std::uint64_t digest = 0; ///< FNV-1a 64 of the content read (a shard's header names its run's inputs by it)
};

/// The input read earlier that is the same file as `path` (same device and inode, so another spelling,
/// a symlink or a hard link is found too), if any.
std::optional<InputFile> input_file_at(const std::string& path);

/// The inputs this process read with read_file, oldest first (at most the 64 most recent; deleted ones dropped).
std::vector<InputFile> input_files_read();

/// FNV-1a 64-bit hash of bytes: a cheap fingerprint, not a cryptographic one.
std::uint64_t fnv1a64(std::string_view bytes);

}  // namespace ropekit
