#pragma once
// Frequencies read from a file (spec rf-rope.md section 2): each listed vector w_j is drawn with probability 1/n
// and a random sign (so p is centrally symmetric, as Lemma 1 needs); Phi = (1/n) sum_j cos(Dp . w_j).
// Spelled file:PATH (or file:path=PATH), read whole: the path may hold any character.

#include <Eigen/Dense>

#include "ropekit/spectral/family.hpp"

namespace ropekit::spectral {

struct Empirical {
  Eigen::MatrixXd w;   ///< rows = frequencies (n >= 1), cols = k: finite
  std::string source;  ///< the file it came from, for messages and spellings
  static constexpr FamilyInfo info{"file", "file:PATH", "file:<path>",
                                   "the file's frequency vectors (one per line), uniformly, with a random sign",
                                   "(1/n) sum_j cos(Dp . w_j)", false};
  static constexpr std::array<FitKey, 0> fit_keys{};
};

inline int dims(const Empirical& e) { return static_cast<int>(e.w.cols()); }
inline std::string spelling(const Empirical& e) { return "file:" + e.source; }
void validate(const Empirical& e, std::string_view where);
inline void check_sampling(const Empirical&, std::string_view) {}
/// The file named by key path (parse_spectrum reads file:PATH itself, before any key=value parsing).
Empirical parse_family(Spelling& sp, std::string_view where, const Empirical*);
PhiPsiVar values_at(const Empirical& e, std::span<const double> lag, bool with_var);
double kernel_work(const Empirical& e);
void sample(const Empirical& e, Rng& rng, std::size_t n, double* w);
/// The symmetrised list {+w_j, -w_j}, sorted: quantile u is its element floor(2 n u).
QuantileFunction quantile_function(const Empirical& e);
/// @throws InputError: a discrete spectrum has no density.
double pdf(const Empirical& e, std::span<const double> w);
inline std::optional<ScaleParameter> scale_parameter(const Empirical&) { return std::nullopt; }
inline void set_scale(Empirical&, double) {}
inline std::optional<double> scale_derivative(const Empirical&, double) { return std::nullopt; }
/// The file's frequencies doubled.
Empirical wrong_density(const Empirical& e);
inline std::string wrong_density_note(const Empirical&) { return "the file's frequencies doubled"; }

}  // namespace ropekit::spectral

namespace ropekit {

/// Frequency-file text: one frequency vector per line, components separated by commas, spaces or tabs;
/// blank lines and lines starting with '#' are skipped. @throws InputError (naming `source` and the line)
/// if there are no rows, rows of different lengths, a non-numeric or non-finite value, or more than kMaxDims columns.
spectral::Empirical parse_frequency_text(std::string_view text, std::string_view source);
/// Reads and parses a frequency file. @throws InputError if unreadable or malformed.
spectral::Empirical read_frequency_file(const std::string& path);

}  // namespace ropekit
