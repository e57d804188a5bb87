// The reviewed tolerance table and the per-element bounds each policy gives.
#include "validation/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace podcheck::validation {

std::string_view policy_name(Policy p) {
  switch (p) {
    case Policy::calibrated: return "calibrated";
    case Policy::flashinfer: return "flashinfer";
    case Policy::flashinfer_bench: return "flashinfer-bench";
  }
  return "?";
}

Policy policy_from_name(std::string_view s) {
  if (s == "calibrated") return Policy::calibrated;
  if (s == "flashinfer") return Policy::flashinfer;
  if (s == "flashinfer-bench") return Policy::flashinfer_bench;
  throw std::invalid_argument("unknown tolerance policy '" + std::string(s) +
                              "' (expected calibrated, flashinfer or flashinfer-bench)");
}

const std::vector<ToleranceRow>& tolerance_table() {
  // Keep in step with docs/TOLERANCES.md (one row there per row here).
  static const std::vector<ToleranceRow> rows = {
      // --- calibrated (default) -------------------------------------------------------------------------
      {"calibrated.out.factor", 4.0,
       "kernels round at other points than the emulator (tile sizes, split-KV chunking, approximate ex2/rcp); "
       "on FlashInfer's H200 outputs the worst element uses <= ~1/2 of 4x the emulator's row envelope"},
      {"calibrated.out.floor_ulps", 2.0,
       "the final cast to dtype_o alone costs 0.5 ULP; a post-kernel v_scale multiply rounds a second time"},
      {"calibrated.out.floor_row_ulps", 1.0,
       "absolute floor: 1 ULP of dtype_o at the largest |reference| of the (row, head), so that elements near 0 "
       "in a row of O(1) values are not held to their own tiny ULP"},
      {"calibrated.out.side_rms", 2.0,
       "envelope never below 2x the side-wide RMS of the emulator's error: where the kernel's tiles or split "
       "points differ from the emulator's, the emulator's own error on that row is no guide"},
      {"calibrated.lse.side_rms", 3.0,
       "as calibrated.out.side_rms for LSE: on FlashInfer's bf16 1024x1024 prefill the emulator matches most "
       "rows bit for bit but a few rows differ by up to ~4 RMS"},
      {"calibrated.softcap.tanh_rel", 4.8828125e-4,
       "soft cap: tanh.approx.f32 has up to 2^-11 relative error, which the emulator (exact tanh) does not model"},
      {"calibrated.lse.factor", 4.0,
       "LSE error comes from the row sum of 16-bit-rounded P and approximate lg2/ex2; same margin as outputs"},
      {"calibrated.lse.floor_abs", 1e-5,
       "lg2.approx/ex2.approx carry ~2^-22 relative error; 1e-5 absolute covers them for |LSE| up to ~40"},
      {"calibrated.lse.floor_ulps", 8.0, "float32 LSE: a few ULPs at |LSE| for the final log2 and add"},
      // --- flashinfer (SPEC §7.3) --------------------------------------------------------------------------
      {"flashinfer.float16.atol", 1e-3, "tests/utils/test_pod_kernels.py: assert_close fp16 1e-3/1e-3"},
      {"flashinfer.float16.rtol", 1e-3, "tests/utils/test_pod_kernels.py: assert_close fp16 1e-3/1e-3"},
      {"flashinfer.bfloat16.atol", 1e-2, "test_single_prefill.py extreme-logit tests vs fp64: bf16 1e-2/1e-2"},
      {"flashinfer.bfloat16.rtol", 1e-2, "test_single_prefill.py extreme-logit tests vs fp64: bf16 1e-2/1e-2"},
      {"flashinfer.fp8kv.atol", 1e-2, "FP8 KV tests (test_fp8_prefill.py, calibration-scale tests): atol 1e-2"},
      {"flashinfer.fp8kv.rtol", 2e-1, "batch FP8 calibration-scale test: rtol up to 2e-1"},
      {"flashinfer.lse.float16.atol", 1e-3, "SPEC §12.7: finite LSE compared at ~1e-3 absolute, isneginf exact"},
      {"flashinfer.lse.bfloat16.atol", 1e-2, "bf16 P rounding moves the LSE by up to ~3e-3 (recorded H200 data); "
                                             "FlashInfer's bf16 tests use 1e-2"},
      // --- flashinfer-bench ----------------------------------------------------------------------------------
      {"flashinfer-bench.atol", 1e-2, "flashinfer_bench/bench/config.py defaults; fails only above both"},
      {"flashinfer-bench.rtol", 1e-2, "flashinfer_bench/bench/config.py defaults; fails only above both"},
  };
  return rows;
}

double tolerance_value(std::string_view key) {
  for (const auto& r : tolerance_table())
    if (r.key == key) return r.value;
  throw std::out_of_range("no tolerance row '" + std::string(key) + "'");
}

Envelope make_envelope(const Case& c, SideKind side, const SideResult& ref, const SideResult& emu) {
  Envelope e;
  const std::int64_t rows = ref.rows;
  const int H = ref.heads, D = ref.head_dim;
  e.out.assign(ref.out.size(), 0.0);
  e.lse.assign(ref.lse.size(), 0.0);
  // Side-wide RMS of the emulator's error (finite elements only).
  double so = 0, sl = 0;
  std::int64_t no = 0, nl = 0;
  for (std::size_t i = 0; i < ref.out.size(); ++i) {
    const double d = emu.out[i] - ref.out[i];
    if (std::isfinite(d)) so += d * d, ++no;
  }
  for (std::size_t i = 0; i < ref.lse.size(); ++i) {
    const double d = emu.lse[i] - ref.lse[i];
    if (std::isfinite(d)) sl += d * d, ++nl;
  }
  const double out_rms_floor = tolerance_value("calibrated.out.side_rms") * (no ? std::sqrt(so / no) : 0.0);
  const double lse_rms_floor = tolerance_value("calibrated.lse.side_rms") * (nl ? std::sqrt(sl / nl) : 0.0);
  // Hardware tanh (soft cap): logit error up to tanh_rel * cap (natural-log units).
  const Side* s = c.side(side);
  const double cap = s ? s->params.logits_soft_cap : 0.0;
  const double tanh_err = cap > 0 ? tolerance_value("calibrated.softcap.tanh_rel") * cap : 0.0;
  const double lse_tanh = tanh_err * (s && (c.lse_base == LseBase::base2) ? 1.4426950408889634 : 1.0);
  for (std::int64_t i = 0; i < rows; ++i) {
    double lse_max = 0.0;
    for (int h = 0; h < H; ++h) {
      const std::int64_t base = (i * H + h) * D;
      double m = 0.0, rmax = 0.0;
      for (int d = 0; d < D; ++d) {
        double err = std::abs(emu.out[base + d] - ref.out[base + d]);
        if (std::isfinite(err)) m = std::max(m, err);
        if (std::isfinite(ref.out[base + d])) rmax = std::max(rmax, std::abs(ref.out[base + d]));
      }
      m = std::max(m, out_rms_floor) + tanh_err * rmax;
      for (int d = 0; d < D; ++d) e.out[base + d] = m;
      const double a = ref.lse[i * H + h], b = emu.lse[i * H + h];
      if (std::isfinite(a) && std::isfinite(b)) lse_max = std::max(lse_max, std::abs(a - b));
    }
    lse_max = std::max(lse_max, lse_rms_floor) + lse_tanh;
    for (int h = 0; h < H; ++h) e.lse[i * H + h] = lse_max;
  }
  return e;
}

namespace {

struct AtolRtol {
  double atol, rtol;
};

AtolRtol flashinfer_out(const Case& c) {
  if (is_float8(c.dtype_kv)) return {tolerance_value("flashinfer.fp8kv.atol"), tolerance_value("flashinfer.fp8kv.rtol")};
  if (c.dtype_q == DType::bfloat16 || c.dtype_o == DType::bfloat16)
    return {tolerance_value("flashinfer.bfloat16.atol"), tolerance_value("flashinfer.bfloat16.rtol")};
  return {tolerance_value("flashinfer.float16.atol"), tolerance_value("flashinfer.float16.rtol")};
}

}  // namespace

std::vector<double> out_bounds(Policy policy, const Case& c, const SideResult& ref, const Envelope* env) {
  std::vector<double> b(ref.out.size());
  const int H = ref.heads, D = ref.head_dim;
  switch (policy) {
    case Policy::flashinfer: {
      const auto t = flashinfer_out(c);
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = t.atol + t.rtol * std::abs(ref.out[i]);
      return b;
    }
    case Policy::flashinfer_bench: {
      const double atol = tolerance_value("flashinfer-bench.atol"), rtol = tolerance_value("flashinfer-bench.rtol");
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::max(atol, rtol * std::abs(ref.out[i]));
      return b;
    }
    case Policy::calibrated: break;
  }
  if (!env) throw std::logic_error("calibrated tolerance needs the emulator envelope");
  const double factor = tolerance_value("calibrated.out.factor");
  const double ulps = tolerance_value("calibrated.out.floor_ulps");
  const double row_ulps = tolerance_value("calibrated.out.floor_row_ulps");
  for (std::int64_t i = 0; i < ref.rows; ++i)
    for (int h = 0; h < H; ++h) {
      const std::int64_t base = (i * H + h) * D;
      double row_max = 0.0;
      for (int d = 0; d < D; ++d) row_max = std::max(row_max, std::abs(ref.out[base + d]));
      const double row_floor = row_ulps * dtype_ulp(c.dtype_o, row_max);
      for (int d = 0; d < D; ++d) {
        const double r = ref.out[base + d];
        b[base + d] = factor * env->out[base + d] + ulps * dtype_ulp(c.dtype_o, r) + row_floor;
      }
    }
  return b;
}

std::vector<double> lse_bounds(Policy policy, const Case& c, const SideResult& ref, const Envelope* env) {
  std::vector<double> b(ref.lse.size());
  switch (policy) {
    case Policy::flashinfer: {
      const bool bf = c.dtype_q == DType::bfloat16 || c.dtype_o == DType::bfloat16;
      const double atol = tolerance_value(bf ? "flashinfer.lse.bfloat16.atol" : "flashinfer.lse.float16.atol");
      std::fill(b.begin(), b.end(), atol);
      return b;
    }
    case Policy::flashinfer_bench: {
      const double atol = tolerance_value("flashinfer-bench.atol"), rtol = tolerance_value("flashinfer-bench.rtol");
      for (std::size_t i = 0; i < b.size(); ++i)
        b[i] = std::max(atol, rtol * (std::isfinite(ref.lse[i]) ? std::abs(ref.lse[i]) : 0.0));
      return b;
    }
    case Policy::calibrated: break;
  }
  if (!env) throw std::logic_error("calibrated tolerance needs the emulator envelope");
  const double factor = tolerance_value("calibrated.lse.factor");
  const double fabs_ = tolerance_value("calibrated.lse.floor_abs");
  const double ulps = tolerance_value("calibrated.lse.floor_ulps");
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double r = std::isfinite(ref.lse[i]) ? ref.lse[i] : 0.0;
    b[i] = factor * env->lse[i] + fabs_ + ulps * dtype_ulp(DType::float32, r);
  }
  return b;
}

}  // namespace podcheck::validation
