// Interim parity check (see parity.hpp).
#include "kernels/host/parity.hpp"

#include <cmath>
#include <cstdio>

namespace podcheck::kernels {

ParityTolerance parity_tolerance(DType dtype_q) {
  // fp16: 11-bit significand; output rounding (~2^-12 rel) and P rounding before PV give rel-L2 ~5e-4.
  // bf16: 8-bit significand, 8x coarser. LSE is fp32 math over fp32 logits: its error is the fp32
  // accumulation of q.k plus the row sum of rounded P, well under these bounds.
  if (dtype_q == DType::bfloat16) return {1e-2, 2e-2, "bf16 operands: 8-bit significand, P rounded to bf16"};
  return {2e-3, 5e-3, "fp16 operands: 11-bit significand, P rounded to fp16"};
}

namespace {

SideParity check_side(const Case& c, SideKind kind, const KernelOutputs& obs, const SideResult& ref) {
  SideParity sp;
  const ParityTolerance tol = parity_tolerance(c.dtype_q);
  const auto& out = obs.out(kind);
  const auto& lse = obs.lse(kind);
  const char* nm = kind == SideKind::prefill ? "prefill" : "decode";
  char buf[320];
  if (!out || !lse) {
    sp.summary = std::string(nm) + ": outputs missing";
    return sp;
  }
  const std::uint32_t opoison = c.dtype_o == DType::bfloat16 ? kPoisonBF16 : kPoisonF16;
  const int H = ref.heads, D = ref.head_dim;
  double num = 0, den = 0;
  for (std::int64_t row = 0; row < ref.rows; ++row)
    for (int h = 0; h < H; ++h) {
      const std::int64_t e = row * H + h;
      const double rl = ref.lse[e];
      const std::uint32_t lb = lse->bits(e);
      const double ol = lse->get(e);
      const bool empty = std::isinf(rl) && rl < 0;
      if (lb == kPoisonF32) ++sp.unwritten;
      if (empty) {
        bool bad = !(std::isinf(ol) && ol < 0);
        for (int d = 0; d < D; ++d) bad |= out->get(e * D + d) != 0.0;
        sp.empty_rows_bad += bad;
      } else if (!std::isfinite(ol)) {
        ++sp.nonfinite;
      } else {
        // fp32 logits carry a relative error, so the bound grows with |LSE| (large logits, outlier inputs).
        sp.lse_max_abs = std::max(sp.lse_max_abs, std::abs(ol - rl) / (1.0 + std::abs(rl) / 16.0));
      }
      for (int d = 0; d < D; ++d) {
        const std::int64_t f = e * D + d;
        if (out->bits(f) == opoison) ++sp.unwritten;
        const double o = out->get(f), r = ref.out[f];
        if (!std::isfinite(o)) {
          ++sp.nonfinite;
          continue;
        }
        num += (o - r) * (o - r);
        den += r * r;
      }
    }
  sp.out_rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  sp.passed = sp.unwritten == 0 && sp.nonfinite == 0 && sp.empty_rows_bad == 0 && sp.out_rel_l2 <= tol.out_rel_l2 &&
              sp.lse_max_abs <= tol.lse_abs;
  std::snprintf(buf, sizeof buf, "%s: rel_l2 %.2e (tol %.0e) lse_err %.2e (tol %.0e x (1+|lse|/16)) unwritten %lld nonfinite %lld empty_bad %lld",
                nm, sp.out_rel_l2, tol.out_rel_l2, sp.lse_max_abs, tol.lse_abs, sp.unwritten, sp.nonfinite,
                sp.empty_rows_bad);
  sp.summary = buf;
  return sp;
}

}  // namespace

CaseParity check_parity(const Case& c, const KernelOutputs& observed, const PodResult& reference) {
  CaseParity cp;
  cp.passed = true;
  for (int si = 0; si < 2; ++si) {
    const SideKind kind = si == 0 ? SideKind::prefill : SideKind::decode;
    const SideResult* ref = reference.side(kind);
    if (!c.side(kind)) continue;
    if (!ref) {
      cp.passed = false;
      cp.summary += "reference missing; ";
      continue;
    }
    cp.side[si] = check_side(c, kind, observed, *ref);
    cp.passed = cp.passed && cp.side[si].passed;
    cp.summary += (cp.summary.empty() ? "" : " | ") + cp.side[si].summary;
  }
  return cp;
}

}  // namespace podcheck::kernels
