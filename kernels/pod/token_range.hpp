// The KV tokens one query row may see, as one interval: a causal mask and a sliding window each cut one end, and the
// item's KV end (kv_hi) the top. The masked tiles of the online softmax (kernels/pod/tile_softmax.cuh,
// PODCHECK_MASK_RANGE) test each logit's token against these two bounds, worked out once per row and tile, instead of
// evaluating the whole mask rule per element. A custom mask is not an interval: its rows keep the interval of the
// window and kv_hi, and each token's bit is tested besides (custom_mask_bit). Host and device (pure C++ on the host):
// the host tests check both against the reference's own rule (reference/naive.hpp) over every row and token of
// small shapes.
#pragma once

#include <cstdint>

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

}  // namespace podcheck::kernels
