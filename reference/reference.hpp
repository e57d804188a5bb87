// The double-precision POD reference: contract and entry points.
//
// Contract: float64 throughout (inputs decoded exactly), three-pass softmax per row (max, exp-sum,
// normalise), no online softmax, no split-KV, no state merging. Two implementations on purpose:
//   naive  per element, straight from the definitions, templated on the real type (double, or Boost
//          cpp_bin_float_50 to check the double reference itself);
//   fast   OpenMP over (request, kv head, block of query rows), dense products through OpenBLAS dgemm;
//          this is what sweeps, validation and selfcheck use.
// The reference shares no code with kernels/.
#pragma once

#include "reference/case.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace podcheck {

// What a kernel family computes beyond the case's parameters (reference/profile.hpp sets it). The
// default-constructed value is the intended semantics of SPEC.md. Only real kernel behaviour lives here,
// never a defect model: the variants validation tries when it diagnoses a failure (causal aligned top-left,
// GQA h % H_kv, page table ignored, ...) are rewrites of the case inside validation/ (variants.hpp), so the
// reference computes nothing but what SPEC.md says and what a kernel family really does.
//
// alibi_softcap_double_sm_scale: FlashInfer's attention kernels with ALiBi and a soft cap compute
// cap * tanh((sm x + bias) * sm / cap) (SPEC §2.2). It stays a semantic, not a parameter rewrite
// (sm_scale' = sm^2, slopes' = sm * slopes would give the same values in exact arithmetic), because the
// profiled case is what reports, artifacts and the emulator describe: the rewrite would report an sm_scale
// and slopes nobody asked for, and would move the emulator's fp32 rounding points away from the kernel's.
struct Semantics {
  bool alibi_softcap_double_sm_scale = false;  // FlashInfer quirk SPEC §2.2: (sm*x + bias)*sm/cap inside tanh
  bool operator==(const Semantics&) const = default;
};

// Reference outputs of one side, in double: out [rows, H_qo, D], lse [rows, H_qo] in the case's base
// (Case::lse_base, the one place the LSE base is set).
// An empty row (no visible key) gives out = 0 and lse = -inf.
struct SideResult {
  std::int64_t rows = 0;
  int heads = 0;
  int head_dim = 0;
  std::vector<double> out;
  std::vector<double> lse;
  double& o(std::int64_t row, int h, int d) { return out[(row * heads + h) * head_dim + d]; }
  double o(std::int64_t row, int h, int d) const { return out[(row * heads + h) * head_dim + d]; }
};

struct PodResult {
  std::optional<SideResult> prefill, decode;
  const SideResult* side(SideKind k) const {
    return k == SideKind::prefill ? (prefill ? &*prefill : nullptr) : (decode ? &*decode : nullptr);
  }
};

// Fast reference over both sides. Validates the case first (throws InvalidCase).
PodResult reference_fast(const Case& c, const Semantics& sem = {});
SideResult reference_fast_side(const Case& c, SideKind side, const Semantics& sem = {});

// Which block kernel the fast reference runs where K/V are not pre-gathered for the whole request: automatic
// (the streaming kernel for blocks of at most 32 stacked query rows, dgemm above), always dgemm, or always the
// streaming kernel (then no request gets pre-gathered K/V either). For tests that cover every path; not
// thread-safe, set it before any call.
enum class FastPath { automatic, blas, stream };
void set_fast_path(FastPath path);

// Naive reference of one (side, global query row, query head), for any real type Real (double, or a
// Boost.Multiprecision float). out receives head_dim values. Defined in reference/naive.hpp.
template <class Real>
void reference_naive_row(const Case& c, SideKind side, std::int64_t row, int head, const Semantics& sem,
                         Real* out, Real& lse);

// Naive reference of a whole side in double (every row, every head).
SideResult reference_naive_side(const Case& c, SideKind side, const Semantics& sem = {});
PodResult reference_naive(const Case& c, const Semantics& sem = {});

// Agreement the reference guarantees about itself (reference/README.md), checked by reference_tests, by
// `podcheck selfcheck` and by validate's selfcheck cases, all through the functions below: fast vs naive in
// double, and naive double vs naive in 50-digit arithmetic.
inline constexpr double kFastVsNaiveBound = 1e-12;
inline constexpr double kDoubleVsMultiprecisionBound = 1e-14;

// Relative disagreement of one (row, head)'s output: max-norm of out_a - out_b over the max-norm of out_b
// (0 when both are 0, +inf when only b is 0 or a NaN appears in one only).
double out_rel_diff(const double* out_a, const double* out_b, int head_dim);
// Relative disagreement of one LSE: |lse_a - lse_b| / max(1, |lse_b|); an empty row (-inf) must be empty in
// both (0), else +inf.
double lse_rel_diff(double lse_a, double lse_b);
// Both for one (row, head): the max of the two (an empty row, -inf, must be empty in both, else +inf).
double row_rel_diff(const double* out_a, double lse_a, const double* out_b, double lse_b, int head_dim);
// The largest row_rel_diff over two results of one side (same shape, else +inf).
double max_rel_diff(const SideResult& a, const SideResult& b);

// SPEC §2.3-2.6: is key j visible to local row i of request r of side s? The naive reference's rule (causal
// bottom-right, window inclusive, custom mask bits), for callers that reason about which rows see which keys.
bool key_visible(const Side& s, int r, std::int64_t i, std::int64_t j);

// Useful FLOPs of a side: 4 * D per visible (query row, query head, key) pair (QK^T and PV).
double useful_flops(const Case& c, SideKind side);

// Bytes a side must move at least: every K and V element some query row can see, once, in its storage dtype
// (the union of visible keys per request, for every kv head), the queries in their storage dtype, and the
// float64 output and LSE the reference writes. The memory side of the roofline in `podcheck bench reference`.
double min_bytes(const Case& c, SideKind side);

}  // namespace podcheck
