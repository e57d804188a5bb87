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

// One semantic choice flipped at a time lets validation diagnose a kernel (which variant does it match?).
// The default-constructed value is the intended semantics of SPEC.md.
struct Semantics {
  LseBase lse_base = LseBase::base2;        // base of the reported LSE
  bool causal_top_left = false;             // causal aligned at the top-left (j <= i) instead of bottom-right
  bool gqa_modulo = false;                  // query head h reads kv head h % H_kv instead of h / g
  bool ignore_page_table = false;           // paged KV read as pages 0,1,2,... in order (indices ignored)
  int window_shift = 0;                     // window_left + shift (off-by-one diagnosis)
  bool alibi_softcap_double_sm_scale = false;  // FlashInfer quirk SPEC §2.2: (sm*x + bias)*sm/cap inside tanh
  bool alibi_true_position = false;         // ALiBi bias slope*(j - p_i) instead of FlashInfer's slope*(j - i)
  bool v_scale_in_output = true;            // multiply the output by v_scale (false: dropped)
  bool operator==(const Semantics&) const = default;
};

// Reference outputs of one side, in double: out [rows, H_qo, D], lse [rows, H_qo] in Semantics::lse_base.
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

// Agreement the reference guarantees about itself (reference/README.md), checked by reference_tests and by
// `podcheck selfcheck`: fast vs naive in double, and naive double vs naive in 50-digit arithmetic.
inline constexpr double kFastVsNaiveBound = 1e-12;
inline constexpr double kDoubleVsMultiprecisionBound = 1e-14;

// Largest relative disagreement between two results of one side (same shape): per (row, head) the max-norm
// of the output difference over the max-norm of b's output, and |lse_a - lse_b| / max(1, |lse_b|); an empty
// row must be empty in both (0 / -inf), else the result is +inf. Used by selfcheck and the tests.
double max_rel_diff(const SideResult& a, const SideResult& b);
// Same for one (row, head): out vectors of head_dim values and their LSEs.
double row_rel_diff(const double* out_a, double lse_a, const double* out_b, double lse_b, int head_dim);

// Useful FLOPs of a side: 4 * D per visible (query row, query head, key) pair (QK^T and PV).
double useful_flops(const Case& c, SideKind side);

// Bytes a side must move at least: every K and V element some query row can see, once, in its storage dtype
// (the union of visible keys per request, for every kv head), the queries in their storage dtype, and the
// float64 output and LSE the reference writes. The memory side of the roofline in `podcheck bench reference`.
double min_bytes(const Case& c, SideKind side);

}  // namespace podcheck
