// Host-side tests (no GPU): the masked tiles' interval form of the mask (kernels/pod/token_range.hpp,
// PODCHECK_MASK_RANGE) against the reference's own rule (reference/naive.hpp), for every row and token of small shapes:
// causal, none and custom masks, with and without a sliding window, items ending before the request's last token, and
// packed rows past the request.
#include "kernels/pod/token_range.hpp"
#include "reference/naive.hpp"
#include "testing/catch.hpp"

#include <cstdint>
#include <random>
#include <vector>

using namespace podcheck;
using namespace podcheck::kernels;

namespace {

// Two requests, so that request 1's segment starts past byte 0: qo_len x L bits each (segment_packbits).
struct TwoRequests {
  Side side;
  int qo_len, L;
  TwoRequests(MaskMode mode, int window_left, int q, int l, std::mt19937& rng) : qo_len(q), L(l) {
    side.params.mask_mode = mode;
    side.params.window_left = window_left;
    if (mode == MaskMode::custom) {
      const std::int64_t bytes = (std::int64_t(q) * l + 7) / 8;
      side.params.custom_mask_indptr = {0, bytes, 2 * bytes};
      side.params.custom_mask.resize(2 * bytes);
      for (auto& b : side.params.custom_mask) b = static_cast<std::uint8_t>(rng());
    }
  }
};

int abi_mode(MaskMode m) {
  return m == MaskMode::causal ? POD_MASK_CAUSAL : m == MaskMode::custom ? POD_MASK_CUSTOM : POD_MASK_NONE;
}

}  // namespace

TEST_CASE("a row's visible tokens as one interval agree with the reference's mask rule", "[kernels][host]") {
  std::mt19937 rng(20261208);
  long checked = 0, visible_count = 0;
  for (MaskMode mode : {MaskMode::none, MaskMode::causal, MaskMode::custom})
    for (int wl : {-1, 0, 1, 2, 5, 11})
      for (int q : {1, 2, 3, 5, 8})
        for (int L : {0, 1, 2, 3, 7, 12}) {
          TwoRequests tr(mode, wl, q, L, rng);
          const int r = 1;  // the request whose segment starts past byte 0
          const std::int64_t seg = mode == MaskMode::custom ? tr.side.params.custom_mask_indptr[r] : 0;
          for (int kv_hi = 0; kv_hi <= L; ++kv_hi)
            for (int i = 0; i < q + 3; ++i) {  // rows q .. q + 2: packed rows past the request
              const bool real = i < q;
              const TokenRange t = visible_tokens(abi_mode(mode), wl, i, q, L, kv_hi, real);
              for (int j = 0; j < L + 3; ++j) {
                const bool ref = real && j < kv_hi && naive_detail::visible(tr.side, r, i, j, q, L);
                bool ours = t.holds(j);
                if (ours && mode == MaskMode::custom) {
                  // the kernel reads a bit only inside the interval: it must lie in request r's segment
                  const std::int64_t bit = seg * 8 + std::int64_t(i) * L + j;
                  INFO("custom bit " << bit << " of row " << i << ", token " << j);
                  REQUIRE(bit >= seg * 8);
                  REQUIRE(bit < seg * 8 + std::int64_t(q) * L);
                  ours = custom_mask_bit(tr.side.params.custom_mask.data(), seg, i, L, j);
                }
                INFO("mode " << int(mode) << " window_left " << wl << " qo_len " << q << " L " << L << " kv_hi "
                             << kv_hi << " row " << i << " token " << j);
                REQUIRE(ours == ref);
                ++checked;
                visible_count += ref;
              }
            }
        }
  // the shapes do exercise both outcomes
  CHECK(visible_count > 1000);
  CHECK(checked - visible_count > 1000);
}
