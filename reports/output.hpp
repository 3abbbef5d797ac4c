#pragma once
// Writing results: all or nothing, never over an input, and never silently lost.
// A regular file is written to a temporary name beside it (<path>.tmp.<pid>) and renamed into place, so a
// failed run leaves the old file (or none) and never a partial one (no fsync: that holds for every way ropekit
// stops; surviving a power cut is left to the file system); temporaries are removed on failure and on SIGINT,
// SIGTERM and SIGHUP (the process then dies of the signal as it would have).
// Every write and the close are checked; a failure is an InputError
// "cannot write '<path>': <reason>" (exit code 2 on the command line).

#include <memory>
#include <string>
#include <string_view>

#include "ropekit/core/input_file.hpp"  // read_file, the reading side (in lib/, which must not include reports/)

namespace ropekit {

/// Writes content to path atomically (temporary file + rename, no fsync); creates missing parent directories.
/// A symlink is written through (its target is replaced, the link kept); an existing file keeps its mode.
/// Non-regular targets (/dev/null, a FIFO, a device) are written directly, with every write checked.
/// Inside an OutputBatch the file is staged and lands only when the batch commits.
/// @throws InputError "cannot write '<path>': <reason>", also when path is a directory or a file this run
///         read as input (read_file), which is never overwritten.
void write_file_atomic(const std::string& path, std::string_view content);

/// Writes to stdout if path is empty or "-", else write_file_atomic. A failed write to stdout (a full
/// disk, a closed descriptor) throws InputError "cannot write standard output: <reason>".
void emit(const std::string& path, std::string_view content);

/// The checks write_file_atomic makes before writing (path not a directory, not an input of this run),
/// for commands to call before a long computation. Does nothing for stdout ("" or "-").
/// @throws InputError as write_file_atomic.
void check_output_path(const std::string& path);

/// Flushes std::cout and stdout. @returns false (after printing "error: cannot write standard output:
/// <reason>" on stderr) if anything written to stdout by this process was lost.
bool flush_stdout();

/// One output written in pieces, for results too long to hold in memory, landing as write_file_atomic's do:
/// a regular file's pieces go to its temporary (<path>.tmp.<pid>), which commit() closes and renames into
/// place; destroyed without commit() (an exception), the temporary is removed and no partial file is left.
/// Empty path or "-": each piece goes to stdout as it comes. Non-regular targets are written directly.
/// Not inside an OutputBatch. @throws InputError "cannot write '<path>': <reason>" as write_file_atomic.
class OutputStream {
 public:
  explicit OutputStream(const std::string& path);
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  void write(std::string_view piece);
  /// Lands the file (close, rename); nothing may be written after.
  void commit();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

/// A group of files that land together: while a batch is open, write_file_atomic stages each regular
/// file under its temporary name (written and closed) and holds writes to non-regular targets; commit()
/// performs the held direct writes, then renames every staged file into place. A batch destroyed without
/// commit() (an exception, a failed write) removes its temporaries: none of its files lands. Batches do
/// not nest; one batch at a time per process.
class OutputBatch {
 public:
  OutputBatch();
  ~OutputBatch();
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;
  /// @throws InputError if a held direct write or a rename fails (staged files not yet renamed are removed).
  void commit();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace ropekit
