// The per-tile online softmax of podcheck-cuda's attention (kernels/pod/pod_kernels.cuh): one warp's 16 query
// rows of a tile's logits in the mma.sync m16n8 C layout (also the layout of wgmma's accumulator per warp), masks
// and the logit transform, row maxima, weights 2^(x - m), P rounded to the query dtype, row sums and the rescale of
// the running state. Shared with the kernels' only other user, the loop bench (kernels/bench/loop_bench.cu), which
// times the prefill's inner loop on this very code. SideDev and RowMask are here because the mask reads them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/include/podcheck_kernel_abi.h"
#include "kernels/pod/fast_div.hpp"
#include "kernels/pod/mma_sm80.cuh"
#include "kernels/pod/pod_plan.hpp"
#include "kernels/pod/token_range.hpp"

namespace podcheck::kernels {

// One side's (prefill or decode) parameters on the device.
struct SideDev {
  pod_side s;
  const WorkItem* items;
  int n_items;
  const std::int64_t* part_base;  // per request
  const std::int32_t* kv_len;     // per request
  const std::int32_t* nchunks;    // per request
  float* part_o;                  // [entries, D]
  float* part_lse;                // [entries]
  float scale_log2;               // sm_scale * q_scale * k_scale * log2(e)
  float sm;                       // sm_scale * q_scale * k_scale (logits with ALiBi or a soft cap)
  float cap;                      // logits soft cap, 0: off
  int alibi, rope;                // pos_encoding is ALIBI / ROPE_LLAMA
  double rope_log2_theta;         // RoPE: log2(rope_theta)
  double rope_rcp_scale;          // RoPE: 1 / rope_scale
  FastDiv ps;                     // the KV page size, for the copy loops' token -> (page, slot)
  // The KV page and slot strides as 32-bit operands (the host checks they fit: check_support), so a row's
  // element offset is one 32 x 32 -> 64-bit multiply-add; kv_same: V's equal K's (every layout podcheck
  // builds, separate or stacked K/V), so V's offset is K's.
  std::uint32_t k_sp, k_ss, v_sp, v_ss;
  int kv_same;
  // fp8 KV whose base pointers and strides are all multiples of 16 bytes: the decode copies it in 16-byte chunks of
  // 16 elements (PODCHECK_FP8_WIDE) instead of 8-byte ones
  int kv_wide;
};

// Two fp32 values rounded (to nearest even) into one register of two 16-bit operands.
template <class T> struct Pack2;
template <> struct Pack2<__half> {
  static __device__ __forceinline__ std::uint32_t pack(float a, float b) {
    __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<std::uint32_t*>(&h);
  }
};
template <> struct Pack2<__nv_bfloat16> {
  static __device__ __forceinline__ std::uint32_t pack(float a, float b) {
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<std::uint32_t*>(&h);
  }
};

// Whether query row i of request r sees KV token j (causal bottom-right aligned, sliding window, custom mask). The
// default build's per-element rule, kept as it is so that its machine code stays v3.19's; PODCHECK_MASK_RANGE's
// FragmentMask (token_range.hpp) makes the same decisions, and replaces this once it is the default.
__device__ __forceinline__ bool visible(const pod_side& s, int r, int i, int j, int qo_len, int L) {
  const int p = i + L - qo_len;  // bottom-right aligned position of row i
  if (s.mask_mode == POD_MASK_CAUSAL && j > p) return false;
  if (s.window_left >= 0 && j < p - s.window_left) return false;
  if (s.mask_mode == POD_MASK_CUSTOM) {
    const long long off = (long long)i * L + j;
    const std::uint8_t byte = s.custom_mask[s.custom_mask_indptr[r] + (off >> 3)];
    if (!((byte >> (off & 7)) & 1)) return false;
  }
  return true;
}

// What one warp needs to mask its 16 rows.
struct RowMask {
  const pod_side* S;
  int r, packed, qo_len, L, kv_hi;
  int prow[2], irow[2];  // rows gq and gq + 8 of the warp's block: packed row and query row
  float scale_log2;
  const SideDev* X;      // ALiBi or a soft cap: the side whose logits are formed element by element; else null
  int kv_head, g;
  int pos_min, pos_max;  // bottom-right positions (i + L - qo_len) of the block's first and last real rows
  __device__ __forceinline__ void set_rows(int row0, const FastDiv& gd) {  // row0: the block's first packed row
    prow[0] = row0 + (threadIdx.x & 31) / 4;
    prow[1] = prow[0] + 8;
    irow[0] = gd.div(prow[0]);
    irow[1] = gd.div(prow[1]);
    pos_min = gd.div(row0) + L - qo_len;
    pos_max = gd.div(min(row0 + 15, packed - 1)) + L - qo_len;
  }
  // True when every (real row, token) of the tile [t0, t0 + ntok) is visible: the per-element mask can be
  // skipped. Rows past the request (packed and beyond) do not count: their query rows are zeros, so their
  // logits are finite, and their state is never written (v3 sent every decode tile with g < 16 down the
  // per-element path for them).
  __device__ __forceinline__ bool tile_full(int t0, int ntok) const {
    if (t0 + ntok > kv_hi || S->mask_mode == POD_MASK_CUSTOM) return false;
    if (S->mask_mode == POD_MASK_CAUSAL && t0 + ntok - 1 > pos_min) return false;
    if (S->window_left >= 0 && t0 < pos_max - S->window_left) return false;
    return true;
  }
};

// 2^x on the special function unit, subnormal results flushed to zero: x <= 0 here (logit minus its row
// maximum), and a weight below 2^-126 rounds to zero in fp16 and is negligible in bf16 (exp2f adds a range
// check and two multiplies per element to produce those subnormals).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// Two 16-bit ones in one register: the B operand that turns an mma into row sums of P.
template <class QT> constexpr std::uint32_t kOnes2 = std::is_same_v<QT, __half> ? 0x3C003C00u : 0x3F803F80u;

// 1: a masked tile tests each logit's token against its row's visible interval (token_range.hpp's FragmentMask: two
// compares and a bit), the bounds worked out once per row and tile; a custom mask's bits are gathered first, by a loop
// not unrolled, in a branch of their own. 0 (default): the whole mask rule (visible, above) per element, unrolled,
// which ptxas inlines into every copy of the step. The masked path was 84,736 of the prefill-only warp-specialised
// kernel's 151,040 bytes of sm_90a code (D 128, bf16, v3.19), 30,592 of them the custom mask's; with 1 that kernel is
// 91,008 bytes, the co-resident and split forms 210,048 and 227,072 (275,584 and 293,632), all six kernel sets 7.02 MB
// (8.17; kernels/tools/code_size.py, notebook step 40). Each logit is kept or masked as before and transformed alike,
// so the outputs do not change. Not yet run on a GPU.
#ifndef PODCHECK_MASK_RANGE
#define PODCHECK_MASK_RANGE 0
#endif
constexpr bool kMaskRange = PODCHECK_MASK_RANGE != 0;

// The online-softmax step of one warp's 16 rows on one tile's logits s (the mma.sync m16n8 C layout, raw
// Q K^T): masks and the logit transform, the new row maxima m (scaled, log2 domain), the rescale factors
// alpha of the running state, and the weights 2^(x - m) in place of the logits, in fp32; rs[0] / rs[1]
// += this thread's part of rows gq / gq + 8's sums of those fp32 weights (callers that do not read rs leave
// the adds to dead-code elimination). Returns whether some row maximum of the warp moved (alpha != 1
// somewhere). Unmasked tiles (and a positive scale) keep the raw logits, take the maximum of those and fold
// the scale into the exponent, 2^(s * c - m): one fused multiply-add per element. F: built with the feature
// paths (ALiBi, soft cap).
template <int NTOK, bool F>
__device__ __forceinline__ bool softmax_exp(float (&s)[NTOK / 8][4], int t0, const RowMask& M, float (&m)[2],
                                            float (&alpha)[2], float (&rs)[2], int lane) {
  constexpr int NN = NTOK / 8;
  const int tq = lane & 3;
  float mx[2] = {m[0], m[1]};
  const SideDev* X = F ? M.X : nullptr;  // ALiBi and/or soft cap (warp-uniform); never in the plain build
  const float c = M.scale_log2;
  // warp-uniform: no element of the tile is masked and the logits keep their order under the scale
  const bool raw = !X && c > 0.f && M.tile_full(t0, NTOK);
  if (raw) {
    float rm[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < NN; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) rm[e >> 1] = fmaxf(rm[e >> 1], s[n][e]);
    mx[0] = fmaxf(mx[0], rm[0] * c);  // rounding is monotone: the maximum of the scaled logits
    mx[1] = fmaxf(mx[1], rm[1] * c);
  } else {
    float slope[2] = {0.f, 0.f};  // ALiBi slopes of rows gq and gq + 8 (their query heads)
    if (X && X->alibi)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr)
        if (M.prow[hr] < M.packed) slope[hr] = X->s.alibi_slopes[M.kv_head * M.g + M.prow[hr] % M.g];
    // element (n, e): token j, kept (its logit transformed) or masked (-inf)
    auto put = [&](int n, int e, int j, bool ok) {
      const int hr = e >> 1;
      float x = s[n][e];
      if (X) {  // the emulator's order (validation/emulator.cpp): * sm, + bias, soft cap, * log2(e)
        x *= X->sm;
        if (X->alibi) x += slope[hr] * static_cast<float>(j - M.irow[hr]);
        if (X->cap > 0.f) x = X->cap * tanhf(x / X->cap);
        x *= 1.44269504088896341f;
      } else {
        x *= c;
      }
      s[n][e] = ok ? x : -INFINITY;
      mx[hr] = fmaxf(mx[hr], s[n][e]);
    };
    if constexpr (kMaskRange) {
      const FragmentMask<NTOK / 8> fm = fragment_mask<NTOK / 8>(*M.S, M.r, M.irow[0], M.prow[0] < M.packed, M.irow[1],
                                                              M.prow[1] < M.packed, M.qo_len, M.L, M.kv_hi, t0 + 2 * tq);
#pragma unroll
      for (int n = 0; n < NN; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) put(n, e, fm.token(n, e), fm.keeps(n, e));
    } else {
#pragma unroll
      for (int n = 0; n < NN; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int hr = e >> 1;
          const int j = t0 + n * 8 + 2 * tq + (e & 1);
          put(n, e, j, M.prow[hr] < M.packed && j < M.kv_hi && visible(*M.S, M.r, M.irow[hr], j, M.qo_len, M.L));
        }
    }
  }
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    mx[hr] = fmaxf(mx[hr], __shfl_xor_sync(0xffffffffu, mx[hr], 1));
    mx[hr] = fmaxf(mx[hr], __shfl_xor_sync(0xffffffffu, mx[hr], 2));
  }
  float ms[2];
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    alpha[hr] = (mx[hr] == -INFINITY) ? 1.f : ex2(m[hr] - mx[hr]);  // 2^-inf = 0 on a row's first visible key
    m[hr] = mx[hr];
    ms[hr] = (mx[hr] == -INFINITY) ? 0.f : mx[hr];  // a row with nothing visible yet: 2^(-inf - 0) = 0
  }
  // one exponent per element on both paths: s * 1 - m is exactly s - m (an FMA rounds once), so the masked path
  // is the raw one with a factor of 1; written as two expressions, the compiler if-converted both and issued two
  // MUFU.EX2 per element, one of them predicated off (ncu of the warp-specialised prefill, notebook step 9)
  const float cf = raw ? c : 1.f;
#pragma unroll
  for (int n = 0; n < NN; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[n][e] = ex2(fmaf(s[n][e], cf, -ms[e >> 1]));
      rs[e >> 1] += s[n][e];
    }
  return __any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f);
}

// The weights of softmax_exp rounded to the query dtype as mma A fragments (one per 16-token k-step).
template <int NTOK, class QT>
__device__ __forceinline__ void pack_p(const float (&s)[NTOK / 8][4], std::uint32_t (&pa)[NTOK / 16][4]) {
  using Pk = Pack2<QT>;
#pragma unroll
  for (int n = 0; n < NTOK / 8; ++n) {
    pa[n >> 1][(n & 1) * 2 + 0] = Pk::pack(s[n][0], s[n][1]);
    pa[n >> 1][(n & 1) * 2 + 1] = Pk::pack(s[n][2], s[n][3]);
  }
}

// softmax_exp, then P rounded to the query dtype as A fragments pa (the row sums are the caller's, of pa).
template <int NTOK, class QT, bool F>
__device__ __forceinline__ bool softmax_tile(float (&s)[NTOK / 8][4], int t0, const RowMask& M, float (&m)[2],
                                             float (&alpha)[2], std::uint32_t (&pa)[NTOK / 16][4], int lane) {
  float rs[2] = {0.f, 0.f};  // not read: its adds are dead code
  const bool moved = softmax_exp<NTOK, F>(s, t0, M, m, alpha, rs, lane);
  pack_p<NTOK, QT>(s, pa);
  return moved;
}

// d[0] / d[2]: this thread's parts of rows gq / gq + 8's sums; after: each row's whole sum in d[0], d[1] (row gq)
// and d[2], d[3] (row gq + 8) of every lane of the quad (the layout of row_sums)
__device__ __forceinline__ void quad_row_sums(float (&d)[4]) {
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    d[2 * hr] += __shfl_xor_sync(0xffffffffu, d[2 * hr], 1);
    d[2 * hr] += __shfl_xor_sync(0xffffffffu, d[2 * hr], 2);
    d[2 * hr + 1] = d[2 * hr];
  }
}

// O and d times alpha per row (rows gq, gq + 8): only when a row maximum moved somewhere in the warp (alpha = 1
// exactly otherwise, and after the first tiles that is the common case).
template <int D>
__device__ __forceinline__ void rescale(float (&o)[D / 8][4], float (&d)[4], const float (&alpha)[2]) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    o[n][0] *= alpha[0];
    o[n][1] *= alpha[0];
    o[n][2] *= alpha[1];
    o[n][3] *= alpha[1];
  }
  d[0] *= alpha[0];
  d[1] *= alpha[0];
  d[2] *= alpha[1];
  d[3] *= alpha[1];
}

// d += P 1: the tile's row sums of the rounded weights as an mma with a B of ones (fp32, on the tensor core),
// into a fresh accumulator, then added to d by an ordinary (round-to-nearest) add. Accumulating d itself in
// the mma, as v3.2 did, biased it low: the tensor core drops the low bits of a small addend to a large sum,
// and over 1,024 steps (16k keys) the LSE came out 3.8e-5 low on every row (full tier,
// pod_f16_h32kv8d128_ps16_nhd(qo_p=1024,kv_p=16384,...), 108 % of its tolerance).
template <int NTOK, class QT>
__device__ __forceinline__ void row_sums(float (&d)[4], const std::uint32_t (&pa)[NTOK / 16][4]) {
  const std::uint32_t ones[2] = {kOnes2<QT>, kOnes2<QT>};
  float t[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int kk = 0; kk < NTOK / 16; ++kk) sm80::mma16816<QT>(t, pa[kk], ones);
  d[0] += t[0];
  d[1] += t[1];
  d[2] += t[2];
  d[3] += t[3];
}

}  // namespace podcheck::kernels
