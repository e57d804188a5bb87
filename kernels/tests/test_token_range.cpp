// Host-side tests (no GPU): the masked tiles' interval form of the mask (kernels/pod/token_range.hpp,
// PODCHECK_MASK_RANGE) against the reference's own rule (reference/naive.hpp), for every row and token of small shapes:
// causal, none and custom masks, with and without a sliding window, items ending before the request's last token, and
// packed rows past the request; and every element of a thread's fragment (FragmentMask: the layout the kernel's
// softmax reads it in).
#include "kernels/pod/token_range.hpp"
#include "reference/naive.hpp"
#include "testing/catch.hpp"

#include <cstdint>
#include <random>
#include <type_traits>
#include <utility>
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

TEST_CASE("a thread's fragment mask keeps exactly the elements the reference's rule keeps", "[kernels][host]") {
  std::mt19937 rng(7);
  long checked = 0, kept = 0;
  for (MaskMode mode : {MaskMode::none, MaskMode::causal, MaskMode::custom})
    for (int wl : {-1, 0, 3, 40})
      for (auto [q, L] : {std::pair{1, 37}, std::pair{5, 5}, std::pair{9, 140}, std::pair{24, 20}, std::pair{3, 200}}) {
        TwoRequests tr(mode, wl, q, L, rng);
        pod_side s{};
        s.mask_mode = abi_mode(mode);
        s.window_left = wl;
        s.custom_mask = tr.side.params.custom_mask.data();
        s.custom_mask_indptr = tr.side.params.custom_mask_indptr.data();
        const int r = 1;
        // the item's KV end: the request's, or a cut before it; its rows: two of the request's, or past it
        for (int kv_hi : {L, L / 2 + 1}) {
          auto check = [&](auto nn_tag, int t0, int tq, int i0, int i1) {
            constexpr int NN = decltype(nn_tag)::value;
            const FragmentMask<NN> f = fragment_mask<NN>(s, r, i0, i0 < q, i1, i1 < q, q, L, kv_hi, t0 + 2 * tq);
            for (int n = 0; n < NN; ++n)
              for (int e = 0; e < 4; ++e) {
                const int i = (e >> 1) ? i1 : i0, j = t0 + 8 * n + 2 * tq + (e & 1);
                const bool ref = i < q && j < kv_hi && naive_detail::visible(tr.side, r, i, j, q, L);
                INFO("mode " << int(mode) << " window_left " << wl << " qo_len " << q << " L " << L << " kv_hi " << kv_hi
                             << " tile of " << NN * 8 << " from " << t0 << ", lane % 4 = " << tq << ", rows " << i0
                             << ", " << i1 << ": element (" << n << ", " << e << ") = token " << j);
                REQUIRE(f.token(n, e) == j);
                REQUIRE(f.keeps(n, e) == ref);
                ++checked;
                kept += ref;
              }
          };
          for (int i0 = 0; i0 < q + 2; i0 += (q > 6 ? 3 : 1))
            for (int i1 : {i0, i0 + 1, q + 1})
              for (int tq = 0; tq < 4; ++tq) {
                for (int t0 = 0; t0 < kv_hi; t0 += 16) check(std::integral_constant<int, 2>{}, t0, tq, i0, i1);
                for (int t0 = 0; t0 < kv_hi; t0 += 64) check(std::integral_constant<int, 8>{}, t0, tq, i0, i1);
                for (int t0 = 0; t0 < kv_hi; t0 += 128) check(std::integral_constant<int, 16>{}, t0, tq, i0, i1);
              }
        }
      }
  CHECK(kept > 10000);
  CHECK(checked - kept > 10000);
}
