#pragma once
// Large result matrices (features, the basis's cos/sin tables) are written once, all of them: on Linux, transparent
// huge pages (when the system leaves them to madvise, as Debian does) turn a 4 KiB page fault per 4 KiB into one
// per 2 MiB. numpy asks for them for its own arrays of 4 MiB and more; Eigen's malloc does not.
#include <cstddef>

#include <Eigen/Core>

namespace ropekit {

/// Asks the kernel for huge pages over the whole 2 MiB pages inside [p, p + bytes) (nothing below 4 MiB, or where the
/// call is not available). A hint only: the memory's contents and validity do not change.
void advise_huge_pages(void* p, std::size_t bytes);

/// A rows x cols matrix, uninitialised, advised for huge pages before any of it is touched.
inline Eigen::MatrixXd huge_matrix(Eigen::Index rows, Eigen::Index cols) {
  Eigen::MatrixXd m(rows, cols);
  advise_huge_pages(m.data(), static_cast<std::size_t>(m.size()) * sizeof(double));
  return m;
}

}  // namespace ropekit
