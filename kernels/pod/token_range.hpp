// The KV tokens one query row may see, as one interval: a causal mask and a sliding window each cut one end, and the
// item's KV end (kv_hi) the top. The masked tiles of the online softmax (kernels/pod/tile_softmax.cuh,
// PODCHECK_MASK_RANGE) test each logit's token against these two bounds, worked out once per row and tile, instead of
// evaluating the whole mask rule per element (FragmentMask). A custom mask is not an interval: its rows keep the
// interval of the window and kv_hi, and each token's bit is tested besides (custom_mask_bit). Host and device (pure
// C++ on the host): the host tests check them against the reference's own rule (reference/naive.hpp) over every row
// and token of small shapes, and every element of a thread's fragment of tiles of 16 to 128 tokens.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/include/podcheck_kernel_abi.h"
#include "reference/host_device.hpp"

namespace podcheck::kernels {

// Tokens lo..hi, both included; hi < lo: none.
struct TokenRange {
  int lo = 0, hi = -1;
  PODCHECK_HD bool holds(int j) const { return j >= lo && j <= hi; }
};

// Query row i of a request of qo_len rows and L KV tokens (bottom-right aligned: its position is p = i + L - qo_len):
// causal, it sees tokens up to p; with a window (window_left >= 0), from p - window_left; never tokens at or past
// kv_hi (the item's KV end); nothing when real is false (a packed row past the request's rows). Tokens are >= 0.
PODCHECK_HD inline TokenRange visible_tokens(int mask_mode, int window_left, int i, int qo_len, int L, int kv_hi,
                                             bool real) {
  const int p = i + L - qo_len;
  TokenRange t;
  t.hi = real ? kv_hi - 1 : -1;
  if (mask_mode == POD_MASK_CAUSAL && p < t.hi) t.hi = p;
  if (window_left >= 0 && p - window_left > t.lo) t.lo = p - window_left;
  return t;
}

// The bit of a custom mask that says whether row i sees token j: the request's segment starts at byte indptr_r, and
// its bits run row after row, L to a row (SPEC 2.5, segment_packbits), little bit order within a byte.
PODCHECK_HD inline bool custom_mask_bit(const std::uint8_t* mask, std::int64_t indptr_r, int i, int L, int j) {
  const std::int64_t bit = indptr_r * 8 + static_cast<std::int64_t>(i) * L + j;
  return (mask[bit >> 3] >> (bit & 7)) & 1;
}

// The mask of one thread's part of a tile of NN * 8 tokens, in the mma m16n8 accumulator layout that the softmax
// works on: element (n, e) is row gq + 8 * (e >> 1)'s logit of token jb + 8 n + (e & 1), jb = the tile's first token +
// 2 * (lane % 4). Each row's interval (visible_tokens), and a custom mask's bits of the thread's elements gathered once
// (bit n * 4 + e; all ones for the other modes).
template <int NN>
struct FragmentMask {
  static_assert(NN * 4 <= 64, "a tile of up to 128 tokens: 64 elements a thread");
  using Bits = std::conditional_t<NN * 4 <= 32, std::uint32_t, std::uint64_t>;
  TokenRange row[2];     // rows gq and gq + 8
  Bits bits = ~Bits{0};  // bit n * 4 + e: element (n, e) is not masked by a custom mask
  int jb = 0;
  PODCHECK_HD int token(int n, int e) const { return jb + n * 8 + (e & 1); }
  PODCHECK_HD bool keeps(int n, int e) const {
    return row[e >> 1].holds(token(n, e)) && ((bits >> (n * 4 + e)) & 1);
  }
};

// The fragment mask of rows i0 and i1 (query rows of request r; real: rows of the request, not packed rows past it)
// from the tile's token jb on. A custom mask's bits are read by a loop that is not unrolled (in the kernel, unrolled
// over the 32 elements in every inlined copy of the softmax, the reads and their address arithmetic were 54 KB of the
// warp-specialised kernel's code; notebook step 40), and only inside the row's interval, as the whole rule reads them:
// a row past the request has no segment to read, and custom_mask_indptr is read in that mode alone.
template <int NN>
PODCHECK_HD FragmentMask<NN> fragment_mask(const pod_side& s, int r, int i0, bool real0, int i1, bool real1, int qo_len,
                                           int L, int kv_hi, int jb) {
  FragmentMask<NN> f;
  f.jb = jb;
  f.row[0] = visible_tokens(s.mask_mode, s.window_left, i0, qo_len, L, kv_hi, real0);
  f.row[1] = visible_tokens(s.mask_mode, s.window_left, i1, qo_len, L, kv_hi, real1);
  if (s.mask_mode == POD_MASK_CUSTOM) {
    const std::int64_t seg = s.custom_mask_indptr[r];
    // the two rows' bounds as scalars: an array indexed in a loop that is not unrolled would live in local memory
    const int lo0 = f.row[0].lo, hi0 = f.row[0].hi, lo1 = f.row[1].lo, hi1 = f.row[1].hi;
    f.bits = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int k = 0; k < NN * 4; ++k) {
      const bool r1 = k & 2;  // row gq + 8
      const int j = jb + (k >> 2) * 8 + (k & 1);
      if (j >= (r1 ? lo1 : lo0) && j <= (r1 ? hi1 : hi0) && custom_mask_bit(s.custom_mask, seg, r1 ? i1 : i0, L, j))
        f.bits |= typename FragmentMask<NN>::Bits{1} << k;
    }
  }
  return f;
}

}  // namespace podcheck::kernels
