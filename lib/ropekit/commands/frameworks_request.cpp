#include "ropekit/commands/frameworks_request.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/models/model.hpp"

namespace ropekit {

namespace {

// The kernel of isotropic content at most this many lags per layer type: every lag below kDenseLags, then
// kGeometricLags geometrically spaced up to the last visible lag (the differences grow with the lag).
constexpr std::int64_t kDenseLags = 4096;
constexpr int kGeometricLags = 2048;
constexpr std::int64_t kDefaultVisible = 131072;  // a config without max_position_embeddings

// The rotated frequencies a reading holds (its convention; the length its scheme needs, if any).
std::vector<double> theta_of(const FrameworkReading& r, std::optional<double> seq_len) {
  if (!has_frequencies(r.encoding)) return {};  // NoPE, ALiBi: compared on their scales only
  const FrequencySchedule* s = frameworks::rotary_schedule(r.encoding);
  const bool needs = s && scheme_needs_seq_len(s->scaling);
  const FrequencyTable f = frequencies(r.encoding, needs ? seq_len : std::nullopt, r.convention, false);
  return {f.theta.data(), f.theta.data() + f.theta.rows()};
}

// K(lag) = (sum_i cos(theta_i lag) + the unrotated pairs) / (head_dim / 2) at every lag: the kernel of isotropic
// content over the whole q.k head, 1 at lag 0 (what `ropekit kernel` gives for the encoding), by the vector kernels.
std::vector<double> kernel_of(const std::vector<double>& theta, int pairs, const std::vector<double>& lags) {
  std::vector<double> k(lags.size(), (static_cast<double>(pairs) - static_cast<double>(theta.size())) / pairs);
  const std::vector<double> weights(theta.size(), 1.0 / pairs);
  cos_sums(lags.data(), lags.size(), theta.data(), weights.data(), nullptr, theta.size(), k.data(), nullptr);
  return k;
}

std::vector<double> visible_lags(const Model& m, const LayerType& l) {
  std::int64_t visible = m.context_length.value_or(kDefaultVisible);
  if (const auto span = window_span(l)) visible = std::min(visible, *span);
  std::vector<double> lags;
  for (std::int64_t d = 0; d < std::min(visible, kDenseLags); ++d) lags.push_back(static_cast<double>(d));
  if (visible > kDenseLags)
    for (int i = 1; i <= kGeometricLags; ++i)
      lags.push_back(std::floor(kDenseLags * std::pow(static_cast<double>(visible - 1) / kDenseLags, static_cast<double>(i) / kGeometricLags)));
  return lags;
}

}  // namespace

const std::vector<std::string>& framework_columns() {
  static const std::vector<std::string> columns = {
      "layer_type",    "framework",     "version",     "encoding",          "pairing",         "rotary_dims", "freq_denominator",
      "cos_sin_factor", "softmax_scale", "logit_scale", "max_rel_freq_diff", "kernel_max_diff", "notes"};
  return columns;
}

std::vector<FrameworkRow> framework_rows(const std::string& path, const std::string& layer_type, const Where& where) {
  Model m;
  try {
    m = read_model(path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where.context, e.what()));
  }
  if (m.format.rfind("GGUF", 0) == 0)
    throw_bad_value(where, "file", quote(path), "a config.json (a GGUF is llama.cpp's reading already: `ropekit model`)");
  std::vector<const LayerType*> types;
  if (layer_type.empty()) {
    for (const auto& l : m.layer_types) types.push_back(&l);
  } else {
    types.push_back(&find_layer_type(m, layer_type, where));
  }
  const std::optional<double> seq_len =
      m.context_length ? std::optional<double>(static_cast<double>(*m.context_length)) : std::nullopt;
  std::vector<FrameworkRow> rows;
  for (const LayerType* l : types) {
    std::vector<FrameworkReading> readings = {read_transformers5(m, *l)};
    if (auto old = read_transformers4(m, *l)) readings.push_back(std::move(*old));
    readings.push_back(read_vllm(m, *l));
    readings.push_back(read_sglang(m, *l));
    readings.push_back(read_llamacpp(m, *l));
    readings.push_back(read_mlx_lm(m, *l));
    const int pairs = std::max(1, l->head_dim / 2);
    const auto lags = visible_lags(m, *l);
    std::vector<double> reference_theta, reference_kernel;
    for (const FrameworkReading& r : readings) {
      FrameworkRow row;
      row.layer_type = l->name;
      row.reading = r;
      std::vector<double> theta;
      try {
        theta = theta_of(r, seq_len);
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: {}: layer type {}: {}: {}", where.context, path, l->name, framework_name(r.framework), e.what()));
      }
      row.rotary_dims = 2 * static_cast<int>(std::count_if(theta.begin(), theta.end(), [](double t) { return t != 0; }));
      row.logit_scale = r.cos_sin_factor * r.cos_sin_factor * r.softmax_scale;
      const std::vector<double> k = kernel_of(theta, pairs, lags);
      if (&r == &readings.front()) reference_theta = theta, reference_kernel = k;  // transformers 5
      const std::size_t n = std::max(theta.size(), reference_theta.size());
      for (std::size_t i = 0; i < n; ++i) {
        const double a = i < reference_theta.size() ? reference_theta[i] : 0, b = i < theta.size() ? theta[i] : 0;
        const double top = std::max(std::abs(a), std::abs(b));
        if (top > 0) row.max_rel_freq_diff = std::max(row.max_rel_freq_diff, std::abs(a - b) / top);
      }
      for (std::size_t i = 0; i < k.size(); ++i) row.kernel_max_diff = std::max(row.kernel_max_diff, std::abs(k[i] - reference_kernel[i]));
      std::string notes;
      for (const auto& note : r.notes) notes += (notes.empty() ? "" : "; ") + note;
      row.notes = notes;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace ropekit
