#pragma once
// The contract's encodings: every registered family's example spelling (encoding.hpp family_infos(); those of 1-D
// relative families, which the contract's checks take), then variants whose operator differs: partial, every
// scaling scheme, stabilized and exact shears, direct sums, the reference names. Small enough for dense checks.
// Shared by test_encoding (the contract) and test_content_verify (the Monte Carlo of the content moments).

#include <algorithm>
#include <string>
#include <vector>

#include "ropekit/encoding.hpp"

namespace ropekit::test {

/// The variants beyond the families' examples.
inline const std::vector<std::string> kContractVariants = {
    "rope",
    "rope:dim=64,base=5e5",
    "rope:dim=32,base=1e4,F=8",
    "rope:dim=32,partial=0.5",
    "rope:dim=32,scaling=linear(factor=4)",
    "rope:dim=32,scaling=ntk(factor=4)",
    "rope:dim=32,scaling=dynamic(factor=4,orig=64)",
    "rope:dim=32,scaling=yarn(factor=16,orig=64)",
    "rope:dim=32,base=5e5,scaling=llama3(factor=8,low=1,high=4,orig=64)",
    "rope:dim=32,base=1e6,partial=0.25,scaling=proportional(factor=2)",
    "direct-sum:[rope(dim=16,base=1e4,scaling=yarn(factor=4,orig=64,mscale=1,mscale_all_dim=1)),nope(dim=8)]",
    "rope-freqs:freqs=[1,0.5,0.01]",
    "rope-matched:k=3,dim=32,F=8",
    "xpos:dim=32",
    "rf-rope:spectrum=gaussian(sigma=2),blocks=16,seed=7",
    "rf-rope:spectrum=cauchy(b=1),blocks=16",
    "rf-rope:spectrum=matern(nu=2.5,l=3),blocks=8,seed=3,sampling=antithetic",
    "damped:gamma=1e-3,dim=32,F=8",
    "jordan:m=3,gamma=1e-3,tau=raw,L=64,dim=16",
    "jordan:m=2,gamma=1e-3,tau=bounded,L=64,dim=16",
    "jordan:m=3,gamma=1e-3,tau=bounded,L=64,eta=0.05,dim=16",
    "jordan-scaled:m=3,c=0.1,L=64,dim=16",
    "real-jordan:gamma=0.01,tau=raw,L=64",
    "real-jordan:gamma=0.01,tau=bounded,L=64",
    "alibi:slope=0.5,L=64",
    "poly:k=4,tau=raw,L=64",
    "nope",
    "direct-sum:[rope(dim=16),alibi(L=64)]",
    "direct-sum:[jordan(m=2,dim=8,tau=raw),poly(k=3,tau=raw),nope]",
    "jordan_rope",
    "direct_sum_poly_m4",
    "rope_alibi",
    "jordan_scaled_m3_c010",
};

/// The families' examples (a new family is in the contract by its info record), then the variants not among them.
inline const std::vector<std::string> kContractSpellings = [] {
  std::vector<std::string> out;
  for (const auto* info : family_infos()) {
    const Encoding e = parse_encoding(info->example);
    if (is_relative(e) && lag_dims(e) == 1) out.emplace_back(info->example);
  }
  for (const auto& v : kContractVariants)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}();

}  // namespace ropekit::test
