// The naive POD reference: one (side, query row, query head) at a time, straight from SPEC.md §2-§6,
// templated on the real type so that it can be run in double and in Boost cpp_bin_float_50 (the latter
// checks the double reference itself). No tiling, no BLAS, no shortcuts: every key is visited, its
// visibility decided by the mask rules, its logit formed term by term, and the softmax done in three
// passes (max, sum of exponentials, normalised weighted sum of V).
#pragma once

#include "reference/case.hpp"
#include "reference/reference.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace podcheck {
namespace naive_detail {

// SPEC §2.3-2.6: is key j visible to local row i of request r?
inline bool visible(const Side& s, int r, std::int64_t i, std::int64_t j, std::int64_t Q, std::int64_t L) {
  const SideParams& p = s.params;
  const std::int64_t pos = i + L - Q;  // bottom-right aligned position of row i
  bool ok = true;
  switch (p.mask_mode) {
    case MaskMode::none: ok = true; break;
    case MaskMode::causal: ok = j <= pos; break;
    case MaskMode::custom: {
      const std::int64_t bit = p.custom_mask_indptr[r] * 8 + i * L + j;
      ok = (p.custom_mask[bit / 8] >> (bit % 8)) & 1;
      break;
    }
  }
  if (p.window_left >= 0) ok = ok && j >= pos - p.window_left;
  return ok;
}

// RoPE-LLaMA (SPEC §4.2): rotate-half pairs (t, t + D/2) by angle pos * theta^(-2t/D) / rope_scale.
template <class Real>
void rope_rotate(std::vector<Real>& x, double pos, const SideParams& p) {
  using std::cos;
  using std::pow;
  using std::sin;
  const std::size_t half = x.size() / 2;
  for (std::size_t t = 0; t < half; ++t) {
    const Real freq = pow(Real(p.rope_theta), Real(-2.0 * static_cast<double>(t)) / Real(static_cast<double>(x.size()))) /
                      Real(p.rope_scale);
    const Real phi = Real(pos) * freq;
    const Real c = cos(phi), sn = sin(phi);
    const Real a = x[t], b = x[t + half];
    x[t] = a * c - b * sn;
    x[t + half] = b * c + a * sn;
  }
}

}  // namespace naive_detail

template <class Real>
void reference_naive_row(const Case& c, SideKind kind, std::int64_t row, int head, const Semantics& sem, Real* out,
                         Real& lse) {
  using std::exp;
  using std::log;
  using std::sqrt;
  using std::tanh;
  namespace nd = naive_detail;
  const Side& s = *c.side(kind);
  const SideParams& p = s.params;
  const int D = c.head_dim;
  const int r = s.request_of(row);
  const std::int64_t Q = s.qo_len(r), L = s.kv_len(r);
  const std::int64_t i = row - s.qo_indptr[r];
  const int g = c.group_size();
  const int kvh = head / g;
  const std::int64_t pos = i + L - Q;

  // Logit scale: (sm_scale or 1/sqrt(D)) * q_scale * k_scale, the default formed in Real.
  const Real sm = (p.sm_scale ? Real(*p.sm_scale) : Real(1) / sqrt(Real(D))) * Real(p.q_scale) * Real(p.k_scale);
  const double slope = p.pos_encoding != PosEncoding::alibi ? 0.0
                       : p.alibi_slopes.empty()             ? default_alibi_slopes(c.num_qo_heads)[head]
                                                            : p.alibi_slopes[head];

  std::vector<Real> q(D);
  for (int d = 0; d < D; ++d) q[d] = Real(s.q.get((row * c.num_qo_heads + head) * D + d));
  if (p.pos_encoding == PosEncoding::rope_llama) nd::rope_rotate(q, static_cast<double>(pos), p);

  // Pass 0: logits of the visible keys.
  std::vector<Real> logit;
  std::vector<std::int64_t> keys;
  std::vector<Real> k(D);
  for (std::int64_t j = 0; j < L; ++j) {
    if (!nd::visible(s, r, i, j, Q, L)) continue;
    const auto [page, slot] = s.locate(r, j);
    const std::int64_t off = s.kv.offset(false, page, slot, kvh);
    for (int d = 0; d < D; ++d) k[d] = Real(s.kv.k_tensor().get(off + d));
    if (p.pos_encoding == PosEncoding::rope_llama) nd::rope_rotate(k, static_cast<double>(j), p);
    Real x = 0;
    for (int d = 0; d < D; ++d) x += q[d] * k[d];
    Real sv = sm * x;
    if (p.pos_encoding == PosEncoding::alibi) {
      sv += Real(slope) * Real(static_cast<double>(j) - static_cast<double>(i));
    }
    if (p.logits_soft_cap > 0) {
      const Real cap(p.logits_soft_cap);
      if (p.pos_encoding == PosEncoding::alibi && sem.alibi_softcap_double_sm_scale)
        sv = cap * tanh(sv * sm / cap);
      else
        sv = cap * tanh(sv / cap);
    }
    logit.push_back(sv);
    keys.push_back(j);
  }
  if (keys.empty()) {
    for (int d = 0; d < D; ++d) out[d] = Real(0);
    lse = Real(-std::numeric_limits<double>::infinity());
    return;
  }
  // Pass 1: max. Pass 2: sum of exponentials. Pass 3: normalised weighted sum of V.
  Real m = logit[0];
  for (const Real& v : logit)
    if (v > m) m = v;
  Real z = 0;
  for (const Real& v : logit) z += exp(v - m);
  for (int d = 0; d < D; ++d) out[d] = Real(0);
  for (std::size_t n = 0; n < keys.size(); ++n) {
    const Real w = exp(logit[n] - m) / z;
    const auto [page, slot] = s.locate(r, keys[n]);
    const std::int64_t off = s.kv.offset(true, page, slot, kvh);
    for (int d = 0; d < D; ++d) out[d] += w * Real(s.kv.v_tensor().get(off + d));
  }
  if (p.v_scale != 1.0)
    for (int d = 0; d < D; ++d) out[d] *= Real(p.v_scale);
  lse = m + log(z);
  if (c.lse_base == LseBase::base2) lse /= log(Real(2));
}

}  // namespace podcheck
