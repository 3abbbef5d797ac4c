#pragma once
// The encoding: every positional encoding as a relative operator G(Dp) (spec encodings.md section 1).
// A closed std::variant of plain family structs, parsed from and printed to the one spelling grammar
// (section 2), with free functions that dispatch over the families:
//   frequencies, relative_operator (G, n x n), kernel Phi = tr G / tr G(0), content variance
//   ||G||_F^2 + rho^2 tr(G^2) (Isserlis), features (the jet basis; the fixed-basis methods' columns),
//   and exactness (group-law defect).
// Every 1-D family is a direct sum of blocks T(Dp) (x) R(phi(Dp)): T an m x m upper-triangular Toeplitz
// matrix of coefficients c_p(Dp) (the damping, shear and attention factors), R a rotation by the phase
// phi = theta Dp (rotary blocks) or the 1 x 1 identity (real blocks). Every quantity has a closed form
// per block (block.hpp); families only say which blocks they are.

#include <cstdint>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/alibi.hpp"
#include "ropekit/encodings/block.hpp"
#include "ropekit/encodings/damped.hpp"
#include "ropekit/encodings/direct_sum.hpp"
#include "ropekit/encodings/family.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/encodings/jordan.hpp"
#include "ropekit/encodings/jordan_scaled.hpp"
#include "ropekit/encodings/nd.hpp"
#include "ropekit/encodings/nope.hpp"
#include "ropekit/encodings/poly.hpp"
#include "ropekit/encodings/real_jordan.hpp"
#include "ropekit/encodings/rf_rope.hpp"
#include "ropekit/encodings/rope.hpp"
#include "ropekit/encodings/rope_kernel.hpp"
#include "ropekit/encodings/rope_matched.hpp"
#include "ropekit/encodings/sinusoidal.hpp"
#include "ropekit/encodings/types.hpp"
#include "ropekit/encodings/xpos.hpp"
#include "ropekit/lie/lie.hpp"

namespace ropekit {

/// The families, one file pair each under encodings/ (the struct, its keys, traits, blocks, features and info
/// record). Adding one: its file pair, this line, and one overload in each visit of encoding.cpp (a concept check
/// there refuses a family without the full set of functions).
using EncodingValue = std::variant<enc::Rope, enc::RopeMatched, enc::Xpos, enc::RfRope, enc::Damped, enc::Jordan,
                                   enc::JordanScaled, enc::RealJordan, enc::Alibi, enc::Poly, enc::Nope,
                                   enc::DirectSum, enc::Nd, enc::Sinusoidal>;

struct Encoding {
  EncodingValue value;
};

/// Parses any spelling of spec section 2 (nested: `rope:dim=128,scaling=yarn(factor=32,orig=4096)`,
/// `direct-sum:[rope,alibi]`) and every reference method name of fixed-basis.md (an alias of the family value).
/// @throws InputError naming `where`, the spelling as written, the key, the value and the constraint.
Encoding parse_encoding(std::string_view text, const Where& where = Where("encoding"),
                        const EncodingDefaults& defaults = {});

/// The canonical spelling, every parameter explicit: parse_encoding(spelling(e)) == e.
std::string spelling(const Encoding& e);
/// Family name as spelled: "rope", "rf-rope", "direct-sum", ...
std::string family_name(const Encoding& e);

/// k: the dimension of lags (1 for every family but nd and k-D rf-rope).
int lag_dims(const Encoding& e);
/// n: the size of G, from the parameters (no block is built). @throws InputError past 2^31 - 1.
int operator_dim(const Encoding& e);
/// The size n of G and the number of rotary frequencies, from the parameters alone (what budgets are sized by: a
/// rope of dim 2^24 has them at once, where assembling its blocks takes a second and half a gigabyte).
EncodingSize encoding_size(const Encoding& e);
/// True when G(s) G(t) = G(s + t) holds exactly (up to rounding) for every s, t.
bool is_exact(const Encoding& e);
/// True when G is orthogonal for every Dp (|Phi| <= 1).
bool is_orthogonal(const Encoding& e);
/// True for families whose score is a function of Dp alone (all but sinusoidal).
bool is_relative(const Encoding& e);

/// True when the encoding (or a part of a direct sum) has rotary frequencies.
bool has_frequencies(const Encoding& e);
/// The encoding's frequencies at sequence length seq_len (schemes that depend on it); rf-rope's drawn ones.
/// @throws InputError for a family without frequencies (alibi, poly, real-jordan, nope, sinusoidal's are its grid).
FrequencyTable frequencies(const Encoding& e, std::optional<double> seq_len = {});
/// The same under a framework's convention and arithmetic (frequencies.hpp: Convention, float32 = true for the
/// values a framework computing inverse frequencies in float32 gets); nd's torus frequencies are rounded to float.
FrequencyTable frequencies(const Encoding& e, std::optional<double> seq_len, Convention convention, bool float32);

/// The blocks of G at one 1-D lag. @throws InputError for nd / sinusoidal.
std::vector<Block> blocks(const Encoding& e, double lag, std::optional<double> seq_len = {});

/// G(Dp), n x n. lag.size() == lag_dims(e).
Eigen::MatrixXd relative_operator(const Encoding& e, std::span<const double> lag, std::optional<double> seq_len = {});

/// Per lag: Phi = tr G / tr G(0), and the mean rho tr G and variance ||G||_F^2 + rho^2 tr(G^2) of the score
/// q^T G k for q, k ~ N(0, I_n), E[q k^T] = rho I (Isserlis; spec encodings.md section 1, not normalised); for
/// rf-rope also the closed-form expected kernel Phi and the variance over frequency draws of the realised kernel
/// (1/D) sum_i cos(w_i . Dp) (Prop 4 with A_i = 1/D, B_i = 0; NaN for the deterministic quantile grid).
/// @throws InputError for an absolute encoding, |rho| > 1, lags of the wrong dimension or non-finite lags.
std::vector<KernelRow> kernel_rows(const Encoding& e, const Lags& lags, double rho = 1,
                                   std::optional<double> seq_len = {});
/// Phi(Dp) = tr G(Dp) / tr G(0) at each lag.
Eigen::VectorXd kernel(const Encoding& e, const Lags& lags, std::optional<double> seq_len = {});
/// Var[q^T G k] = ||G||_F^2 + rho^2 tr(G^2) at each lag (q, k ~ N(0, I_n), E[q k^T] = rho I).
Eigen::VectorXd content_variance(const Encoding& e, const Lags& lags, double rho = 1,
                                 std::optional<double> seq_len = {});

/// The jet basis at causal lags (rows = lags, cols = n_features): the constant, then the span of G's entries;
/// for the fixed-basis aliases exactly fixed-basis.md's columns in its order.
Features features(const Encoding& e, const Lags& lags);
/// features(e, lags).values.cols() without evaluating anything (sizes a fit before it runs).
/// @throws InputError where features() would for any lags (absolute or non-commuting families), or when the count
///         exceeds an int.
int n_features(const Encoding& e);

/// Each G at the sequence length seq_len when given; otherwise at T = |Dp| + 1 (the length a causal model has
/// seen at that lag), which only dynamic and longrope schemes read.
Exactness exactness(const Encoding& e, const std::vector<double>& window, std::optional<double> seq_len = {});

/// The lines of `ropekit list encodings` (EncodingFamilyInfo, family.hpp), folded from the families' records.
const std::vector<EncodingFamilyInfo>& encoding_families();
/// Every family's record, in the variant's order.
const std::vector<const FamilyInfo*>& family_infos();
/// The record of e's family.
const FamilyInfo& family_info(const Encoding& e);
/// "rope, rope-freqs, ..., sinusoidal, nd with torus generators, or a direct sum with one of them": the families
/// that has_frequencies() can be true for, folded from the records (for "must be an encoding with rotary
/// frequencies (...)" messages).
std::string rotary_families();
/// The frequency schedule of a family that has one (rope, rope-matched, damped, jordan, jordan-scaled).
const FrequencySchedule* schedule_of(const Encoding& e);
/// The same schedule, to change in a copy of the encoding (tuning, base scans, another convention's reading).
FrequencySchedule* schedule_of(Encoding& e);

/// A library message re-thrown as a command's, for the command line and the Python module alike:
/// "<command>: encoding '<text>': <message>"; a message that already names the command is rethrown as is, one that
/// starts with "encoding '...'" gets the command only, and the prefixes "ropekit::frequencies: " and
/// "ropekit::long_term_decay_bound: " are dropped.
[[noreturn]] void rethrow_for_encoding(const std::string& command, const std::string& text, const InputError& e);

/// f() with its InputError re-thrown by rethrow_for_encoding.
template <class F>
auto for_encoding(const std::string& command, const std::string& text, F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    rethrow_for_encoding(command, text, e);
  }
}

/// A spelling given to `command` (an option's value): parse_encoding with Where(command) (a spelling's keys are not
/// the command's options) and the grammar's messages re-thrown as the command's (for_encoding).
Encoding parse_encoding_for(const std::string& command, const std::string& text);

/// The leaves of a direct sum (the encoding itself otherwise) that have rotary frequencies, in G's order.
std::vector<const Encoding*> rotary_leaves(const Encoding& e);

/// The notes of every frequency schedule in e (schedule_notes, encodings/frequencies.hpp; direct sums part by part),
/// each once: values accepted as transformers does though it warns about them or replaces them.
std::vector<std::string> encoding_notes(const Encoding& e);

/// RoPE on the standard geometric grid without a scheme: the grid rope_kernel.hpp's sine residual and continuum
/// take; nullopt for anything else.
std::optional<RopeGrid> plain_rope(const Encoding& e);

}  // namespace ropekit
