// The CUDA-free half of podcheck bench kernel (kernel_bench.hpp): the work a mix does (FLOPs, bytes), its
// bound from the ceilings measured in the same run, and the printed report.
#include "kernels/bench/kernel_bench.hpp"

#include <algorithm>
#include <cstdint>

namespace podcheck::kernels {

bool BenchReport::all_validated() const {
  // ours must run every mix; a peer that says it does not support one is reported so ("not timed: not supported")
  // and compared on the rest, but a peer that ran and failed validation fails the bench
  for (const BenchRow& r : rows)
    if (!r.ours.ran || (!peer_name.empty() && !r.peer.ran && !r.peer.unsupported)) return false;
  return true;
}

namespace {

void side_work(const Case& c, const Side& s, double& flops, double& bytes) {
  const int H = c.num_qo_heads, HK = c.num_kv_heads, D = c.head_dim;
  double vis = 0, kv = 0;
  for (int r = 0; r < s.num_requests(); ++r) {
    const std::int64_t Q = s.qo_len(r), L = s.kv_len(r);
    kv += double(L);
    for (std::int64_t i = 0; i < Q; ++i)
      vis += s.params.mask_mode == MaskMode::causal ? double(std::clamp<std::int64_t>(L - Q + i + 1, 0, L)) : double(L);
  }
  const double rows = double(s.num_rows());
  const double eq = double(dtype_size(c.dtype_q)), ekv = double(dtype_size(c.dtype_kv)),
               eo = double(dtype_size(c.dtype_o));
  flops = 4.0 * D * H * vis;
  bytes = rows * H * D * (eq + eo) + 2.0 * kv * HK * D * ekv + 4.0 * rows * H;
}

}  // namespace

void set_work(const Case& c, BenchRow& row) {
  row.flops_p = row.bytes_p = row.flops_d = row.bytes_d = 0;
  if (c.prefill) side_work(c, *c.prefill, row.flops_p, row.bytes_p);
  if (c.decode) side_work(c, *c.decode, row.flops_d, row.bytes_d);
  row.flops = row.flops_p + row.flops_d;
  row.bytes = row.bytes_p + row.bytes_d;
}

double bound_ms(const BenchRow& w, const BenchReport& r) {
  if (r.gemm_tflops <= 0 || r.copy_tbps <= 0) return 0;
  return std::max(w.flops / (r.gemm_tflops * 1e12), w.bytes / (r.copy_tbps * 1e12)) * 1e3;
}

void print_bench(const BenchReport& r, std::FILE* f) {
  std::fprintf(f, "podcheck bench kernel: %s on %s\n", r.version.c_str(), r.device.c_str());
  if (!r.peer_name.empty()) std::fprintf(f, "peer: %s\n", r.peer_name.c_str());
  if (!r.tuning.empty()) std::fprintf(f, "experiment knobs (environment): %s\n", r.tuning.c_str());
  std::fprintf(f, "ceilings measured in this run: D2D copy %.2f TB/s (read+write), cuBLAS bf16 GEMM %.0f TFLOP/s\n",
               r.copy_tbps, r.gemm_tflops);
  std::fprintf(f, "cases (validated before timing, calibrated policy):\n");
  for (const BenchRow& w : r.rows) std::fprintf(f, "  %-24s %s\n", w.mix.name.c_str(), w.mix.id.c_str());
  std::fprintf(f, "bound: max(FLOPs / GEMM rate, bytes / copy rate) of the whole POD; fus/bnd = fused / bound\n");
  auto table = [&](const char* who, KernelTimes BenchRow::*k) {
    std::fprintf(f, "%s:\n%-24s %9s %9s %9s %9s %8s %8s %6s %7s %6s %9s %8s\n", who, "case", "fused ms", "pref ms",
                 "dec ms", "serial", "fus/ser", "TFLOP/s", "%gemm", "TB/s", "%copy", "bound ms", "fus/bnd");
    for (const BenchRow& w : r.rows) {
      const KernelTimes& t = w.*k;
      if (!t.ran) {
        std::fprintf(f, "%-24s not timed: %s\n", w.mix.name.c_str(), t.failure.c_str());
        continue;
      }
      const bool both = t.prefill_ms > 0;
      const double serial = t.prefill_ms + t.decode_ms;
      const double tf = w.flops / (t.fused_ms * 1e-3) / 1e12, tb = w.bytes / (t.fused_ms * 1e-3) / 1e12;
      const double bnd = bound_ms(w, r);
      std::fprintf(f, "%-24s %9.3f %9.3f %9.3f %9.3f %8.2f %8.1f %5.1f%% %7.2f %5.1f%% %9.3f %8.2f\n",
                   w.mix.name.c_str(), t.fused_ms, t.prefill_ms, t.decode_ms, serial, both ? t.fused_ms / serial : 0.0,
                   tf, 100 * tf / r.gemm_tflops, tb, 100 * tb / r.copy_tbps, bnd, bnd > 0 ? t.fused_ms / bnd : 0.0);
    }
    std::fprintf(f, "%s per side alone (achieved):\n", who);
    for (const BenchRow& w : r.rows) {
      const KernelTimes& t = w.*k;
      if (!t.ran || t.prefill_ms <= 0) continue;
      std::fprintf(f, "  %-24s prefill %.1f TFLOP/s (%.1f%% gemm) | decode %.2f TB/s (%.1f%% copy) | %s, %d input sets\n",
                   w.mix.name.c_str(), w.flops_p / (t.prefill_ms * 1e-3) / 1e12,
                   100 * w.flops_p / (t.prefill_ms * 1e-3) / 1e12 / r.gemm_tflops, w.bytes_d / (t.decode_ms * 1e-3) / 1e12,
                   100 * w.bytes_d / (t.decode_ms * 1e-3) / 1e12 / r.copy_tbps, t.scheduling.c_str(), w.rotation_sets);
      if (!t.timeline.empty()) std::fprintf(f, "    %s", t.timeline.c_str());
    }
  };
  table("ours", &BenchRow::ours);
  if (r.peer_name.empty()) return;
  table("peer", &BenchRow::peer);
  std::fprintf(f, "ours / peer (same cases, inputs, rotation and stream; > 1: ours slower):\n%-24s %9s %9s %9s\n", "case",
               "fused", "prefill", "decode");
  for (const BenchRow& w : r.rows) {
    if (!w.ours.ran || !w.peer.ran) {
      std::fprintf(f, "%-24s (not both timed)\n", w.mix.name.c_str());
      continue;
    }
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    std::fprintf(f, "%-24s %9.2f %9.2f %9.2f\n", w.mix.name.c_str(), ratio(w.ours.fused_ms, w.peer.fused_ms),
                 ratio(w.ours.prefill_ms, w.peer.prefill_ms), ratio(w.ours.decode_ms, w.peer.decode_ms));
  }
}

}  // namespace podcheck::kernels
