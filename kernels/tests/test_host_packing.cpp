// Host-side tests (no GPU): Case -> pod_problem packing and strides, ABI struct layout, unsupported
// feature detection, and the launch plan (items cover the work exactly once, chunks partition the KV).
#include "kernels/host/case_problem.hpp"
#include "kernels/pod/fast_div.hpp"
#include "kernels/pod/pod_plan.hpp"
#include "kernels/tests/test_cases.hpp"
#include "testing/catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <tuple>
#include <type_traits>

using namespace podcheck;
using namespace podcheck::kernels;
using test::CaseSpec;
using test::SideSpec;

namespace {
SideSpec side(bool paged, std::vector<int> q, std::vector<int> l, MaskMode m = MaskMode::none) {
  SideSpec s;
  s.present = true;
  s.paged = paged;
  s.qo_lens = std::move(q);
  s.kv_lens = std::move(l);
  s.mask = m;
  return s;
}

// Element offset of (token t of request r, kv head h, dim 0) of K through the packed strides.
std::int64_t packed_k_offset(const PackedSide& ps, const pod_side& s, int r, int t, int h) {
  const int page = ps.kv_indices[ps.kv_indptr[r] + t / s.kv.page_size];
  return page * s.kv.k_stride_page + (t % s.kv.page_size) * s.kv.k_stride_slot + h * s.kv.k_stride_head;
}

// The plan of the spec's case on target_ctas CTAs (ctas_per_sm 2), launched with only_side (0: both sides).
PodPlan plan_of(const CaseSpec& spec, int target_ctas, int only_side = 0) {
  const Case c = test::build_case(spec);
  PackedProblem pp;
  pack_case(c, pp);
  pp.problem.only_side = only_side;
  return make_plan(pp.problem, target_ctas, 2);
}
// A shape given by its lengths alone, without inputs (a case with 8k-token decodes costs seconds of random draws
// that the planner never reads): page size 16, no window, one prefill request (qo_len over kv_len, causal) beside
// decodes of one query row each. The planner reads only the host arrays, so no page indices. LengthsProblem keeps
// the arrays its pointers address (for planner calls after make_plan); plan_of_lengths gives its plan.
struct LengthsProblem {
  std::vector<std::int32_t> qo_p, kv_p, last_p, qo_d = {0}, kv_d = {0}, last_d;
  pod_problem p{};
  LengthsProblem(const LengthsProblem&) = delete;
  LengthsProblem(int heads, int kv_heads, int qo_len, int kv_len, const std::vector<int>& decode_kv);
};
PodPlan plan_of_lengths(int heads, int kv_heads, int qo_len, int kv_len, const std::vector<int>& decode_kv,
                        int target_ctas, int ctas_per_sm) {
  const LengthsProblem lp(heads, kv_heads, qo_len, kv_len, decode_kv);
  return make_plan(lp.p, target_ctas, ctas_per_sm);
}
LengthsProblem::LengthsProblem(int heads, int kv_heads, int qo_len, int kv_len, const std::vector<int>& decode_kv) {
  const int ps = 16;
  auto pages = [&](int L) { return (L + ps - 1) / ps; };
  auto last = [&](int L) { return L == 0 ? 1 : L - (pages(L) - 1) * ps; };
  qo_p = {0, qo_len};
  kv_p = {0, pages(kv_len)};
  last_p = {last(kv_len)};
  for (int L : decode_kv) {
    qo_d.push_back(qo_d.back() + 1);
    kv_d.push_back(kv_d.back() + pages(L));
    last_d.push_back(last(L));
  }
  p.abi_version = POD_ABI_VERSION;
  p.num_qo_heads = heads;
  p.num_kv_heads = kv_heads;
  p.head_dim = 128;
  auto fill = [&](pod_side& s, const std::vector<std::int32_t>& qo, const std::vector<std::int32_t>& kv,
                  const std::vector<std::int32_t>& lastv, int mask) {
    s.present = 1;
    s.num_requests = (int)qo.size() - 1;
    s.qo_indptr_host = qo.data();
    s.kv.page_size = ps;
    s.kv.indptr_host = kv.data();
    s.kv.last_page_len_host = lastv.data();
    s.mask_mode = mask;
    s.window_left = -1;
  };
  fill(p.prefill, qo_p, kv_p, last_p, POD_MASK_CAUSAL);
  fill(p.decode, qo_d, kv_d, last_d, POD_MASK_NONE);
}
}  // namespace

TEST_CASE("ABI structs are plain C layouts", "[kernels][host]") {
  STATIC_REQUIRE(std::is_standard_layout_v<pod_problem>);
  STATIC_REQUIRE(std::is_trivially_copyable_v<pod_problem>);
  STATIC_REQUIRE(std::is_standard_layout_v<pod_side>);
  STATIC_REQUIRE(sizeof(WorkItem) == 32);
  STATIC_REQUIRE(sizeof(MergeRow) == 16);
  // Pointers and 64-bit strides sit on 8-byte boundaries (same layout for any C compiler on LP64).
  CHECK(offsetof(pod_side, q) % 8 == 0);
  CHECK(offsetof(pod_side, q_stride_row) % 8 == 0);
  CHECK(offsetof(pod_side, rope_scale) % 8 == 0);
  CHECK(offsetof(pod_side, alibi_slopes) % 8 == 0);
  CHECK(offsetof(pod_kv, k_stride_page) % 8 == 0);
  CHECK(offsetof(pod_problem, prefill) % 8 == 0);
  CHECK(offsetof(pod_problem, decode) == offsetof(pod_problem, prefill) + sizeof(pod_side));
}

TEST_CASE("dense prefill packs as one page - NHD and HND strides address the same elements", "[kernels][host]") {
  for (Layout lay : {Layout::NHD, Layout::HND}) {
    CaseSpec s;
    s.layout = lay;
    s.heads = 8;
    s.kv_heads = 2;
    s.head_dim = 64;
    s.prefill = side(false, {5}, {37});
    const Case c = test::build_case(s);
    PackedProblem pp;
    pack_case(c, pp);
    const pod_side& ps = pp.problem.prefill;
    CHECK(pp.problem.decode.present == 0);
    CHECK(ps.kv.page_size == 37);
    CHECK(kv_len_of(ps.kv, 0) == 37);
    CHECK(std::abs(ps.sm_scale - 0.125f) < 1e-7f);
    // Compare against a direct index computation from the tensor shape.
    for (int t : {0, 17, 36})
      for (int h : {0, 1}) {
        const std::int64_t direct = lay == Layout::NHD ? (std::int64_t(t) * 2 + h) * 64 : (std::int64_t(h) * 37 + t) * 64;
        CHECK(packed_k_offset(pp.side[0], ps, 0, t, h) == direct);
      }
  }
}

TEST_CASE("paged separate and stacked KV strides page table and last_page_len", "[kernels][host]") {
  for (Layout lay : {Layout::NHD, Layout::HND})
    for (bool stacked : {false, true}) {
      CaseSpec s;
      s.layout = lay;
      s.page_size = 4;
      s.heads = 4;
      s.kv_heads = 2;
      s.head_dim = 64;
      s.decode = side(true, {1, 1, 1}, {9, 0, 4});
      s.decode.stacked = stacked;
      const Case c = test::build_case(s);
      PackedProblem pp;
      pack_case(c, pp);
      const pod_side& d = pp.problem.decode;
      CHECK(kv_len_of(d.kv, 0) == 9);
      CHECK(kv_len_of(d.kv, 1) == 0);
      CHECK(kv_len_of(d.kv, 2) == 4);
      const std::int64_t P = 4, H = 2, D = 64, blk = P * H * D;
      for (int t : {0, 5, 8})
        for (int h : {0, 1}) {
          const int page = c.decode->kv.pages.indices[t / 4];
          const int slot = t % 4;
          const std::int64_t within = lay == Layout::NHD ? (slot * H + h) * D : (h * P + slot) * D;
          const std::int64_t direct = page * (stacked ? 2 * blk : blk) + within;
          CHECK(packed_k_offset(pp.side[1], d, 0, t, h) == direct);
        }
      CHECK(pp.side[1].v_offset == (stacked ? blk : 0));
      CHECK((pp.side[1].v == pp.side[1].k) == stacked);
    }
}

TEST_CASE("KV page and slot strides must fit the copy loops' 32-bit operands", "[kernels][host]") {
  CaseSpec s;
  s.prefill = side(true, {4}, {40}, MaskMode::causal);
  s.decode = side(true, {1}, {40});
  const Case c = test::build_case(s);
  PackedProblem pp;
  pack_case(c, pp);
  bool invalid = true;
  REQUIRE(check_support(pp.problem, &invalid).empty());
  for (std::int64_t bad : {std::int64_t{1} << 31, std::int64_t{-8}}) {
    for (int which = 0; which < 4; ++which) {
      pod_problem p = pp.problem;
      pod_kv& kv = (which & 1) ? p.decode.kv : p.prefill.kv;
      (which < 2 ? kv.k_stride_page : kv.v_stride_slot) = bad;
      invalid = true;
      const std::string why = check_support(p, &invalid);
      INFO(which << " " << bad << ": " << why);
      CHECK(why.find("page or slot stride outside [0, 2^31)") != std::string::npos);
      CHECK(!invalid);  // a layout the kernel does not handle, not an inconsistent problem
    }
  }
  pod_problem p = pp.problem;
  p.decode.kv.k_stride_page = (std::int64_t{1} << 31) - 8;  // the largest that fits
  CHECK(check_support(p, &invalid).empty());
}

TEST_CASE("unsupported features are detected invalid problems told apart", "[kernels][host]") {
  CaseSpec s;
  s.prefill = side(false, {4}, {8}, MaskMode::causal);
  s.decode = side(true, {1}, {8});
  const Case base = test::build_case(s);
  auto reason = [](const Case& c, bool* invalid) {
    PackedProblem pp;
    pack_case(c, pp);
    if (!pp.unsupported.empty()) return pp.unsupported;
    return check_support(pp.problem, invalid);
  };
  bool invalid = true;
  CHECK(reason(base, &invalid).empty());
  struct Mut {
    const char* what;
    void (*apply)(Case&);
    bool invalid;
  };
  const Mut muts[] = {
      {"head_dim", [](Case& c) { c.head_dim = 96; }, false},
      {"query dtype", [](Case& c) { c.dtype_q = DType::float32; }, false},
      {"output dtype", [](Case& c) { c.dtype_o = DType::bfloat16; }, false},
      {"num_kv_heads", [](Case& c) { c.num_kv_heads = 3; }, true},
      {"rope_scale", [](Case& c) {
         c.decode->params.pos_encoding = PosEncoding::rope_llama;
         c.decode->params.rope_scale = 0.0;
       }, true},
      {"alibi_slopes", [](Case& c) { c.prefill->params.pos_encoding = PosEncoding::alibi; }, true},  // not uploaded
      {"logits_soft_cap", [](Case& c) { c.prefill->params.logits_soft_cap = -1.0; }, true},
  };
  for (const Mut& m : muts) {
    Case c = base;
    m.apply(c);
    invalid = !m.invalid;
    const std::string why = reason(c, &invalid);
    INFO(m.what << ": " << why);
    CHECK(why.find(m.what) != std::string::npos);
    CHECK(invalid == m.invalid);
  }
}

TEST_CASE("plan: every (request kv head packed row KV token) is covered exactly once", "[kernels][host]") {
  CaseSpec s;
  s.heads = 12;
  s.kv_heads = 2;  // g = 6: packed rows straddle tiles
  s.head_dim = 64;
  s.prefill = side(true, {30, 0, 11}, {500, 7, 11}, MaskMode::causal);
  s.decode = side(true, {1, 1, 1}, {1000, 0, 65});
  const Case c = test::build_case(s);
  PackedProblem pp;
  pack_case(c, pp);
  for (int chunk : {0, 64, 96}) {
    pp.problem.kv_chunk_tokens = chunk;
    const PodPlan plan = make_plan(pp.problem, 264, 2);
    std::size_t merges = 0;
    for (int si = 0; si < 2; ++si) {
      const pod_side& sd = si == 0 ? pp.problem.prefill : pp.problem.decode;
      const int ch = plan.side[si].chunk_tokens;
      if (chunk > 0) CHECK(ch == chunk);
      std::map<std::tuple<int, int, int>, std::vector<std::pair<int, int>>> ranges;
      for (const WorkItem& w : plan.side[si].items) ranges[{w.request, w.kv_head, w.row_begin}].push_back({w.kv_begin, w.kv_end});
      for (int r = 0; r < sd.num_requests; ++r) {
        const int q = sd.qo_indptr_host[r + 1] - sd.qo_indptr_host[r], L = kv_len_of(sd.kv, r);
        for (int kh = 0; kh < 2; ++kh)
          for (int rb = 0; rb < q * 6; rb += tile_rows(si)) {
            auto v = ranges[{r, kh, rb}];
            std::sort(v.begin(), v.end());
            REQUIRE(!v.empty());
            CHECK(v.front().first == 0);
            CHECK(v.back().second == L);
            for (std::size_t k = 1; k < v.size(); ++k) CHECK(v[k].first == v[k - 1].second);
            CHECK(int(v.size()) == (ch > 0 && L > ch ? (L + ch - 1) / ch : 1));
            ranges.erase({r, kh, rb});
          }
        if (ch > 0 && L > ch && q > 0) merges += q;
      }
      CHECK(ranges.empty());  // no item outside the work
    }
    CHECK(plan.merge_rows.size() == merges);
    CHECK(plan.prefill_ctas_per_sm == 1);  // both sides have work, 2 CTAs per SM: one starts in each role
  }
}

// Expands a side's items into (request, packed row, kv head, KV token) cells, each counted.
static std::map<std::tuple<int, int, int, int>, int> cells_of(const SidePlan& sp, int si, int g) {
  std::map<std::tuple<int, int, int, int>, int> n;
  for (const WorkItem& w : sp.items) {
    CHECK(w.row_begin % tile_rows(si) == 0);
    CHECK(w.kv_begin % kTileKV == 0);  // chunk boundaries stay on the split granule
    for (int pr = w.row_begin; pr < w.row_begin + tile_rows(si); ++pr)
      for (int t = w.kv_begin; t < w.kv_end; ++t) ++n[{w.request, pr, w.kv_head, t}];
  }
  (void)g;
  return n;
}

TEST_CASE("plan v2: decode items are 16 packed rows, g > 16 spans tiles, every cell covered once", "[kernels][host]") {
  for (int g : {1, 4, 6, 16, 20, 32}) {
    CaseSpec s;
    s.kv_heads = 2;
    s.heads = 2 * g;
    s.head_dim = 64;
    s.prefill = side(true, {5, 0, 20}, {40, 3, 30}, MaskMode::causal);
    s.decode = side(true, {1, 1, 1, 1}, {1, 700, 0, 33});
    const Case c = test::build_case(s);
    PackedProblem pp;
    pack_case(c, pp);
    for (int chunk : {0, 32, 256}) {
      INFO("g " << g << " chunk " << chunk);
      pp.problem.kv_chunk_tokens = chunk;
      const PodPlan plan = make_plan(pp.problem, 264, 2);
      for (int si = 0; si < 2; ++si) {
        const pod_side& sd = si == 0 ? pp.problem.prefill : pp.problem.decode;
        const SidePlan& sp = plan.side[si];
        const auto cells = cells_of(sp, si, g);
        std::size_t expect = 0;
        std::size_t items_expect = 0;
        int max_splits = 1;
        for (int r = 0; r < sd.num_requests; ++r) {
          const int q = sd.qo_indptr_host[r + 1] - sd.qo_indptr_host[r], L = kv_len_of(sd.kv, r);
          const int rows = q * g;
          const int tiles = (rows + tile_rows(si) - 1) / tile_rows(si);
          const int nch = (sp.chunk_tokens > 0 && L > sp.chunk_tokens) ? (L + sp.chunk_tokens - 1) / sp.chunk_tokens : 1;
          if (q > 0) max_splits = std::max(max_splits, nch);
          items_expect += std::size_t(tiles) * 2 * (q > 0 ? nch : 0);
          for (int pr = 0; pr < rows; ++pr)
            for (int kh = 0; kh < 2; ++kh)
              for (int t = 0; t < L; ++t) {
                auto it = cells.find({r, pr, kh, t});
                REQUIRE(it != cells.end());
                CHECK(it->second == 1);
                ++expect;
              }
        }
        // Cells past the packed rows of a request (tile padding) are the only extras; count real ones.
        std::size_t real = 0;
        for (const auto& [k, v] : cells) {
          const int r = std::get<0>(k);
          const int q = sd.qo_indptr_host[r + 1] - sd.qo_indptr_host[r];
          if (std::get<1>(k) < q * g) real += v;
          CHECK(std::get<3>(k) < kv_len_of(sd.kv, r));
        }
        CHECK(real == expect);
        CHECK(sp.items.size() == items_expect);
        CHECK(sp.max_splits == max_splits);
        if (chunk > 0) CHECK(sp.chunk_tokens == chunk);
        for (const WorkItem& w : sp.items) CHECK(w.nchunks == (int)std::count_if(sp.items.begin(), sp.items.end(), [&](const WorkItem& x) {
                                                   return x.request == w.request && x.kv_head == w.kv_head && x.row_begin == w.row_begin;
                                                 }));
      }
    }
  }
}

TEST_CASE("plan v2: split-KV fills the resident CTAs when the unsplit items cannot", "[kernels][host]") {
  CaseSpec s;
  s.heads = 8;
  s.kv_heads = 2;
  s.head_dim = 64;
  s.decode = side(true, {1, 1}, {2560, 2560});
  const Case c = test::build_case(s);
  PackedProblem pp;
  pack_case(c, pp);
  const PodPlan plan = make_plan(pp.problem, 40, 2);
  const SidePlan& sp = plan.side[1];
  // 2 requests x 2 kv heads x one 16-row tile (g = 4) = 4 unsplit items < 40 CTAs: 10 chunks of 256.
  CHECK(sp.chunk_tokens == 256);
  CHECK(sp.items.size() == 40);
  CHECK(sp.max_splits == 10);
  CHECK(plan.merge_rows.size() == 2);
  CHECK(sp.part_entries == 2 * 10 * 8);
  CHECK(plan.prefill_ctas_per_sm == 0);  // decode only
  for (std::size_t k = 1; k < sp.items.size(); ++k) CHECK(sp.items[k - 1].cost >= sp.items[k].cost);  // heaviest first
  // Enough unsplit items: no split.
  CaseSpec s2 = s;
  s2.decode = side(true, std::vector<int>(24, 1), std::vector<int>(24, 100));
  const Case c2 = test::build_case(s2);
  PackedProblem pp2;
  pack_case(c2, pp2);
  const PodPlan plan2 = make_plan(pp2.problem, 40, 2);
  CHECK(plan2.side[1].chunk_tokens == 0);
  CHECK(plan2.side[1].items.size() == 24 * 2);
  CHECK(plan2.merge_rows.empty());
}

TEST_CASE("plan v3.7: a decode-only launch splits into the fewest chunks whose waves are full", "[kernels][host]") {
  // ceil(items s / target) / s by hand, target 264 (132 SMs x 2 CTAs):
  CHECK(decode_only_splits(128, 264) == 2);  // 16 decodes x 8 KV heads: 256 items in 1 wave (3 splits: 384 in 2)
  CHECK(decode_only_splits(64, 264) == 4);   // 256 items in 1 wave (v3.6: 5 splits, 320 items in 2)
  CHECK(decode_only_splits(192, 264) == 4);  // 768 in 3 waves = 0.75 of an unsplit one (1, 2, 3 splits: 1.0)
  CHECK(decode_only_splits(250, 264) == 1);  // one wave already
  CHECK(decode_only_splits(264, 264) == 1);
  CHECK(decode_only_splits(4, 40) == 10);    // every wave part-filled: v3.6's ceil(target / items), 10 (20 ties)
  CHECK(decode_only_splits(8, 264) == 33);
  // Through make_plan: 2 decodes x 8 KV heads (g = 4: one 16-row item each) = 16 items on 33 CTAs: 2 chunks of
  // 1,024 (v3.6: ceil(33 / 16) = 3 chunks of 704).
  CaseSpec s;
  s.heads = 32;
  s.kv_heads = 8;
  s.head_dim = 64;
  s.decode = side(true, {1, 1}, {2048, 2048});
  const PodPlan plan = plan_of(s, 33);
  CHECK(plan.side[1].chunk_tokens == 1024);
  CHECK(plan.side[1].max_splits == 2);
  CHECK(plan.side[1].items.size() == 32);
  // Its decode launched alone (only_side = 2, the bench's "decode alone"): 8 items, 4 chunks of 512.
  s.prefill = side(true, {1}, {2048});
  s.decode = side(true, {1}, {2048});
  const PodPlan plan3 = plan_of(s, 33, 2);
  CHECK(plan3.side[0].items.empty());
  CHECK(plan3.side[1].chunk_tokens == 512);
  CHECK(plan3.side[1].items.size() == 32);
}

TEST_CASE("plan v3.8: a launch with both sides chunks its decode for the CTAs that start as decode", "[kernels][host]") {
  // 8 prefill + 8 decode items of equal cost on 33 CTAs, 2 per SM: the role split gives each SM one prefill CTA, so
  // 16 decode CTAs; the prefill keeps ceil(33 / 16) = 3 chunks of 704, the decode takes decode_only_splits(8, 16) =
  // 2 chunks of 1,024 (v3.7: 704, as the prefill)
  CaseSpec s;
  s.heads = 32;
  s.kv_heads = 8;
  s.head_dim = 64;
  s.prefill = side(true, {1}, {2048});
  s.decode = side(true, {1}, {2048});
  const PodPlan plan = plan_of(s, 33);
  CHECK(plan.prefill_ctas_per_sm == 1);
  CHECK(plan.side[0].chunk_tokens == 704);
  CHECK(plan.side[1].chunk_tokens == 1024);
  CHECK(plan.side[1].items.size() == 16);
  // The shape measured on the H200 (notebook step 13): 8 decodes of 8k beside a 512-token causal prefill, 32 / 8 heads,
  // 132 SMs x 3 CTAs. 256 prefill items of 64 rows + 64 decode items = 320 < 396: the prefill in ceil(396 / 320) = 2
  // chunks of 256; the decode's 64 items on the 264 decode CTAs (1 prefill CTA per SM) in 4 chunks of 2,048 (v3.7: 2
  // of 4,096, 0.142 ms fused; 4 chunks forced: 0.110)
  const PodPlan pm = plan_of_lengths(32, 8, 512, 512, std::vector<int>(8, 8192), 396, 3);
  CHECK(pm.prefill_ctas_per_sm == 1);
  CHECK(pm.side[0].chunk_tokens == 256);
  CHECK(pm.side[1].chunk_tokens == 2048);
  CHECK(pm.side[1].items.size() == 256);
  // a decode with as many items as decode CTAs is not split (v3.7: 2 chunks, ceil(396 / 296)), the prefill is
  // 4 prefill items of 64 packed rows x 8 KV heads beside 33 decodes
  const PodPlan pn = plan_of_lengths(32, 8, 64, 512, std::vector<int>(33, 8192), 396, 3);
  CHECK(pn.prefill_ctas_per_sm == 1);
  CHECK(pn.side[0].chunk_tokens == 256);
  CHECK(pn.side[1].chunk_tokens == 0);
  CHECK(pn.side[1].items.size() == 33 * 8);
}

TEST_CASE("plan: the split of SMs by side for the fused warp-specialised launch (step 10's rates)", "[kernels][host]") {
  PodPlan plan;
  // Mix A: 2,048 causal rows over 2,048 keys, 8 KV heads, in 512 items of 128 packed rows (32 query rows) that see
  // 32 (j + 1) keys: 532,480 tokens + 32 per item = 548,864 units; 128 decodes of 2,048 keys x 8 KV heads: 1,024
  // items of 2,080 units. Prefill 532,480 x 0.019 + 512 x 8.6 = 14,520 SM-us, decode 2,129,920 x 0.01237 = 26,347
  // SM-us (floor 283 us): the ends meet at 14,520 / p = 26,347 / (132 - p), p = 46.9; 47 gives max(309, 309).
  plan.side[0].items.resize(512);
  plan.side[0].cost = 548864;
  plan.side[1].cost = 1024.0 * 2080;
  CHECK(ws_split_sms(plan, 132, 128) == 47);
  CHECK(ws_split_sms(plan, 132, 64) == 47);  // head_dim scales both sides alike
  // Mix B: 1,024 rows at the end of 8,192 keys (256 items seeing 7,696 keys on average), 64 decodes of 4,096:
  // 1,970,176 x 0.019 + 256 x 8.6 = 39,634 against 2,113,536 x 0.01237 = 26,144: p = 79.5; 79 gives 501.7 us.
  plan.side[0].items.resize(256);
  plan.side[0].cost = 256.0 * (7696 + 32);
  plan.side[1].cost = 64.0 * 8 * 4128;
  CHECK(ws_split_sms(plan, 132, 128) == 79);
  // Prefill only in effect: every SM but one. Decode only in effect (10 items of 1 token): the bandwidth floor binds
  // for 1 to 38 prefill SMs (1e9 x 0.01237 / 94 is under the floor 1e9 x 1.329e-4, / 93 is over): the middle, 19.
  plan.side[0].items.resize(10);
  plan.side[0].cost = 1e9;
  plan.side[1].cost = 10;
  CHECK(ws_split_sms(plan, 132, 128) == 131);
  plan.side[0].cost = 330;
  plan.side[1].cost = 1e9;
  CHECK(ws_split_sms(plan, 132, 128) == 19);
  CHECK(ws_split_sms(plan, 1, 128) == 1);
}

TEST_CASE("the split form's SM split with the group decode lands where the H100 measured the mixes fastest",
          "[kernels][host]") {
  // Measured (notebook step 21, H100, PODCHECK_CUDA_WS=3 with PODCHECK_CUDA_PREFILL_SMS swept; ms fused): A 0.388 at 66
  // prefill SMs, 0.443 at 78, 0.450 at 86; B 0.622 at 66, 0.526 at 86, 0.475 at 92, 0.574 at 100, 0.712 at 106;
  // C 0.378 at 66, 0.410 at 78, 0.445 at 86. The model (waves of prefill items and of decode groups, the bandwidth
  // floor) must choose inside each mix's fast range (B: the prefill's 256 items take 3 waves from 86 SMs on, 4 below).
  PodPlan plan;
  // A: 512 prefill items (548,864 units), 128 decodes of 2,048 x 8 heads in 256 groups
  plan.side[0].items.resize(512);
  plan.side[0].cost = 548864;
  plan.side[1].cost = 1024.0 * 2080;
  const int a = ws_split_sms_gdec(plan, 132, 128, 256, 2);
  CHECK(a >= 50);
  CHECK(a <= 70);
  // B: 256 items of 7,696 keys, 64 decodes of 4,096 x 8 heads in 128 groups
  plan.side[0].items.resize(256);
  plan.side[0].cost = 256.0 * (7696 + 32);
  plan.side[1].cost = 64.0 * 8 * 4128;
  const int b = ws_split_sms_gdec(plan, 132, 128, 128, 2);
  CHECK(b >= 86);
  CHECK(b <= 99);
  // C: 128 items of 3,840 keys on average, 256 decodes of 1,024 x 8 heads in 512 groups
  plan.side[0].items.resize(128);
  plan.side[0].cost = 128.0 * (3840 + 32);
  plan.side[1].cost = 2048.0 * 1056;
  const int c = ws_split_sms_gdec(plan, 132, 128, 512, 2);
  CHECK(c >= 45);
  CHECK(c <= 70);
  CHECK(ws_split_sms_gdec(plan, 1, 128, 512, 2) == 1);
}

TEST_CASE("the split model's side ends, worked by hand on small plans", "[kernels][host]") {
  // 5 prefill items of 1,000 keys each (cost 5 x (1,000 + 32): the planner counts a KV tile more per item), a decode
  // of 40,000 units in 8 groups, 6 SMs, head_dim 128
  PodPlan plan;
  plan.side[0].items.resize(5);
  plan.side[0].cost = 5.0 * (1000 + 32);
  plan.side[1].cost = 40000;
  const double item = 1000 * kPrefillTokenSmUs + kPrefillItemSmUs;  // one item on one SM, us
  const double group = 40000.0 / 8 * kGdPipeUnitUs;                 // one group on one pipeline
  const double floor_d = 40000 * kDecodeUnitMachineUs;
  // group decode, p = 2: 3 waves of items (5 on 2 SMs); 8 groups on 4 SMs x 2 pipelines, one wave
  SplitEnds e = ws_split_ends(plan, 6, 128, 2, 8, 2);
  CHECK(e.prefill_us == Approx(3 * item));
  CHECK(e.decode_us == Approx(std::max(floor_d, group)));
  // p = 4: 2 waves of items; 8 groups on 2 x 2 pipelines, two waves
  e = ws_split_ends(plan, 6, 128, 4, 8, 2);
  CHECK(e.prefill_us == Approx(2 * item));
  CHECK(e.decode_us == Approx(std::max(floor_d, 2 * group)));
  // head_dim 64 halves both sides' times
  const SplitEnds h = ws_split_ends(plan, 6, 64, 4, 8, 2);
  CHECK(h.prefill_us == Approx(e.prefill_us / 2));
  CHECK(h.decode_us == Approx(e.decode_us / 2));
  // the decode warpgroups (no groups): the work spread evenly, no waves
  e = ws_split_ends(plan, 6, 128, 2);
  CHECK(e.prefill_us == Approx(5 * item / 2));
  CHECK(e.decode_us == Approx(std::max(floor_d, 40000 * kDecodeUnitSmUs / 4)));
  // each split rule's count is where the later end is least
  for (int groups : {0, 8}) {
    const int best = groups ? ws_split_sms_gdec(plan, 6, 128, groups, 2) : ws_split_sms(plan, 6, 128);
    const auto later = [&](int p) {
      const SplitEnds x = ws_split_ends(plan, 6, 128, p, groups, 2);
      return std::max(x.prefill_us, x.decode_us);
    };
    for (int p = 1; p < 6; ++p) CHECK(later(best) <= later(p));
  }
}

TEST_CASE("the split form's group decode: which decodes it takes, and its groups of 4 KV heads", "[kernels][host]") {
  // eligible: decodes of one query row, page 16, g 4, 8 KV heads, stacked K / V (the tensor maps' strides alike)
  CaseSpec s;
  s.heads = 32;
  s.kv_heads = 8;
  s.prefill = side(false, {8}, {8}, MaskMode::causal);
  s.decode = side(true, {1, 0, 1, 1, 1}, {300, 17, 16, 0, 40});
  s.decode.stacked = true;
  struct Refusal {
    const char* why;  // the phrase the reason must hold ("" : taken)
    void (*apply)(CaseSpec&);
  };
  const Refusal cases[] = {
      {"", [](CaseSpec&) {}},
      {"", [](CaseSpec& c) { c.layout = Layout::HND; }},
      {"", [](CaseSpec& c) { c.heads = 64; }},  // g 8
      {"fp8 KV", [](CaseSpec& c) { c.dtype_kv = DType::float8_e4m3fn; }},
      {"", [](CaseSpec& c) { c.page_size = 32; }},  // pages of 2 and 4 copy stages
      {"", [](CaseSpec& c) { c.page_size = 64; c.layout = Layout::HND; }},
      {"page size 1, not a multiple of 16", [](CaseSpec& c) { c.page_size = 1; }},
      {"page size 8, not a multiple of 16", [](CaseSpec& c) { c.page_size = 8; }},
      {"page size 24, not a multiple of 16", [](CaseSpec& c) { c.page_size = 24; }},
      {"group size 16", [](CaseSpec& c) { c.heads = 128; }},
      {"KV heads not a multiple of 4", [](CaseSpec& c) { c.kv_heads = 2; c.heads = 8; }},
      {"custom mask or sliding window", [](CaseSpec& c) { c.decode.window_left = 64; }},
      {"custom mask or sliding window", [](CaseSpec& c) { c.decode.mask = MaskMode::custom; }},
      {"more than one query row", [](CaseSpec& c) { c.decode.qo_lens[2] = 2; }},
  };
  for (const Refusal& r : cases) {
    CaseSpec spec = s;
    r.apply(spec);
    const Case c = test::build_case(spec);
    PackedProblem pp;
    pack_case(c, pp);
    REQUIRE(pp.unsupported.empty());
    const std::string why = group_decode_refusal(pp.problem);
    INFO("want '" << r.why << "', got '" << why << "'");
    CHECK((r.why[0] == 0 ? why.empty() : why.find(r.why) != std::string::npos));
  }
  {  // K / V strides that tensor copies cannot take: a slot stride of 65 elements (130 bytes)
    PackedProblem pp;
    pack_case(test::build_case(s), pp);
    pp.problem.decode.kv.k_stride_slot = 65;
    CHECK(group_decode_refusal(pp.problem).find("16 bytes") != std::string::npos);
  }

  // The groups over the planner's items, unsplit and split: each holds KV heads 4 j .. 4 j + 3 of one request and
  // chunk with one KV range, and every item is in exactly one group.
  PackedProblem pp;
  pack_case(test::build_case(s), pp);
  for (int chunk : {0, 64}) {
    PlanTuning t;
    t.chunk_tokens[1] = chunk;
    const PodPlan plan = make_plan(pp.problem, 264, 2, t);
    const SidePlan& d = plan.side[1];
    std::string why = "unset";
    const auto groups = group_decode_groups(d, &why);
    INFO("chunk " << chunk << ": " << why);
    REQUIRE(why.empty());
    CHECK(groups.size() * 4 == d.items.size());
    std::vector<int> seen(d.items.size(), 0);
    for (const auto& g : groups) {
      const WorkItem& w0 = d.items[g[0]];
      CHECK(w0.kv_head % 4 == 0);
      for (int h = 0; h < 4; ++h) {
        const WorkItem& w = d.items[g[h]];
        ++seen[g[h]];
        CHECK(w.request == w0.request);
        CHECK(w.chunk == w0.chunk);
        CHECK(w.kv_head == w0.kv_head + h);
        CHECK(w.kv_begin == w0.kv_begin);
        CHECK(w.kv_end == w0.kv_end);
      }
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    if (chunk == 64) CHECK(d.max_splits == 5);  // 300 tokens in chunks of 64: the split groups were built too
  }

  // Items that do not come in such groups are refused with the reason, and no group is returned
  const PodPlan plan = make_plan(pp.problem, 264, 2);
  auto refused = [&](void (*edit)(std::vector<WorkItem>&)) {
    SidePlan d = plan.side[1];
    edit(d.items);
    std::string why;
    const auto groups = group_decode_groups(d, &why);
    CHECK(groups.empty());
    return why;
  };
  CHECK(refused([](std::vector<WorkItem>& v) { v.pop_back(); }).find("without the rest of its head group") !=
        std::string::npos);
  CHECK(refused([](std::vector<WorkItem>& v) {
          for (WorkItem& w : v)
            if (w.kv_head == 1) { w.kv_begin += 16; break; }
        }).find("ranges differ") != std::string::npos);
  CHECK(refused([](std::vector<WorkItem>& v) { v[0].row_begin = 16; }).find("past the first row tile") !=
        std::string::npos);
}

TEST_CASE("which kernel a launch runs: the fused kernel or a form of the warp-specialised one, by knob and sides",
          "[kernels][host]") {
  // every combination of the inputs, judged by the rules as docs/KERNEL.md states them (step 23)
  int fused_split = 0;
  for (int bits = 0; bits < 64; ++bits)
    for (int knob = -1; knob <= 3; ++knob) {
      LaunchFormInputs in;
      in.ws_applies = bits & 1;
      in.prefill_runs = bits & 2;
      in.decode_runs = bits & 4;
      in.gdec_knob = bits & 8;
      in.gdec_takes_decode = bits & 16;
      in.gdec_default_page = bits & 32;
      in.ws_knob = knob;
      const int f = launch_form(in);
      INFO("bits " << bits << " PODCHECK_CUDA_WS " << knob << " -> form " << f);
      if (!in.ws_applies || !in.prefill_runs || knob == 0) {
        CHECK(f == kFormFused);  // fp8 KV, a feature, no sm_90a image, no prefill rows, or the knob at 0
      } else if (!in.decode_runs) {
        CHECK(f == kFormWsPrefillOnly);  // a prefill alone: the warp-specialised prefill under every other knob
      } else if (knob == 1) {
        CHECK(f == kFormFused);  // v3.12's default for a fused launch
      } else if (knob >= 2) {
        CHECK(f == (knob == 2 ? kFormWsCoResident : kFormWsSplitSms));
      } else {  // unset: the split form exactly where the group decode takes the decode at a page size measured
                // faster and is not turned off
        CHECK(f == (in.gdec_knob && in.gdec_takes_decode && in.gdec_default_page ? kFormWsSplitSms : kFormFused));
        fused_split += f == kFormWsSplitSms;
      }
    }
  CHECK(fused_split == 1);  // one combination: applies, both sides, GDEC on, the decode taken, the page size
}

TEST_CASE("the group decode is the default at the page sizes measured faster than the fused kernel",
          "[kernels][host]") {
  // notebook step 25 (H100, same call): 16 and 64 faster than PODCHECK_CUDA_WS=1, 32 slower; the rest not timed
  for (int page : {16, 64}) {
    INFO("page " << page);
    CHECK(group_decode_default_page(page));
  }
  for (int page : {1, 5, 8, 24, 32, 48, 80, 128, 256}) {
    INFO("page " << page);
    CHECK_FALSE(group_decode_default_page(page));
  }
}

TEST_CASE("the split form's prefill SMs by SM id: exactly the planned count, spread evenly over the ids",
          "[kernels][host]") {
  for (int sms : {1, 2, 7, 16, 78, 108, 114, 132, 144}) {
    for (int prefill = 0; prefill <= sms; ++prefill) {
      INFO(sms << " SMs, " << prefill << " prefill");
      int n = 0;
      for (int sm = 0; sm < sms; ++sm) n += ws_prefill_sm(sm, sms, prefill);
      CHECK(n == prefill);
      // every run of w consecutive ids (a GPC is one such run) holds its share of prefill SMs, rounded either way
      for (int w : {8, 16, 18}) {
        if (w > sms) continue;
        for (int first = 0; first + w <= sms; ++first) {
          int k = 0;
          for (int sm = first; sm < first + w; ++sm) k += ws_prefill_sm(sm, sms, prefill);
          const double share = double(w) * prefill / sms;
          CHECK(k >= int(std::floor(share)));
          CHECK(k <= int(std::ceil(share)));
        }
      }
    }
  }
}

TEST_CASE("plan tuning: a per-side chunk splits only that side, the role split override is clamped", "[kernels][host]") {
  CaseSpec s;
  s.heads = 8;
  s.kv_heads = 2;
  s.head_dim = 64;
  s.prefill = side(true, {64}, {1024}, MaskMode::causal);
  s.decode = side(true, std::vector<int>(24, 1), std::vector<int>(24, 1000));
  const Case c = test::build_case(s);
  PackedProblem pp;
  pack_case(c, pp);
  const PodPlan base = make_plan(pp.problem, 40, 2);
  REQUIRE(base.side[0].chunk_tokens == 0);  // 8 prefill + 48 decode items >= 40 CTAs: no split
  REQUIRE(base.side[1].chunk_tokens == 0);
  PlanTuning t;
  t.chunk_tokens[1] = 256;
  t.prefill_ctas_per_sm = 7;
  const PodPlan tuned = make_plan(pp.problem, 40, 2, t);
  CHECK(tuned.side[0].chunk_tokens == 0);
  CHECK(tuned.side[0].items.size() == base.side[0].items.size());
  CHECK(tuned.side[1].chunk_tokens == 256);
  CHECK(tuned.side[1].max_splits == 4);  // 1000 tokens in chunks of 256
  CHECK(tuned.side[1].items.size() == 24 * 2 * 4);
  CHECK(tuned.merge_rows.size() == 24);  // every decode row merged, no prefill row
  for (const MergeRow& r : tuned.merge_rows) CHECK(r.side == 1);
  CHECK(tuned.prefill_ctas_per_sm == 2);  // clamped to the CTAs of one SM
  t.prefill_ctas_per_sm = 0;
  t.chunk_tokens[1] = 0;  // 0: no split, even where the planner would split
  CHECK(make_plan(pp.problem, 40, 2, t).prefill_ctas_per_sm == 0);
  CHECK(make_plan(pp.problem, 4000, 2, t).side[1].chunk_tokens == 0);
  CHECK(make_plan(pp.problem, 4000, 2).side[1].chunk_tokens > 0);
}

TEST_CASE("the greedy model of a wave schedule, worked by hand", "[kernels][host]") {
  std::vector<WorkItem> v(5);
  for (WorkItem& w : v) w.cost = 100;
  const double c = 100 + kTailItemTokens;
  CHECK(tail_model_end(v, 2) == Approx(3 * c));  // 5 equal items on 2 CTAs: three rounds
  CHECK(tail_model_end(v, 5) == Approx(c));
  // the long one first (its CTA free at 660): the other takes short ones at 0, 260 and 520 (free at 780), and the
  // fourth short one goes to the first CTA at 660, ending at 920
  v[0].cost = 500;
  CHECK(tail_model_end(v, 2) == Approx(500 + kTailItemTokens + c));
}

TEST_CASE("the split form's prefill tail: its q-tiles cut in two KV pieces, merged by their query rows",
          "[kernels][host]") {
  // Mix B: 1,024 causal rows at the end of 8,192 keys, 32 / 8 heads, 128-row items: 256 items, 8 per q-tile of 32
  // query rows. On 92 prefill CTAs the last wave holds 256 - 2 x 92 = 72 items: the 9 q-tiles seeing the fewest keys
  // (rows 0 .. 287), each on all 8 KV heads.
  const LengthsProblem lp(32, 8, 1024, 8192, std::vector<int>(64, 4096));
  PlanTuning t;
  t.prefill_tile_rows = 128;
  const PodPlan before = make_plan(lp.p, 132, 1, t);
  REQUIRE(before.side[0].items.size() == 256);
  REQUIRE(before.side[0].max_splits == 1);
  PodPlan plan = before;
  CHECK(split_prefill_tail(lp.p, 92, 128, plan) == 9);
  const SidePlan& sp = plan.side[0];
  CHECK(sp.items.size() == 256 + 72);
  CHECK(sp.max_splits == 2);
  CHECK(sp.part_base[0] == 0);
  CHECK(sp.part_entries == 2 * 1024 * 32);
  // each (KV head, q-tile): pieces covering [0, 8192) once; cut q-tiles in chunks 0 and 1 of 2, cut on 64 keys, the
  // first piece 55-95 % of the keys the q-tile sees (its last row sees 7,168 + 32 (m + 1))
  std::map<std::pair<int, int>, std::vector<WorkItem>> by;
  for (const WorkItem& w : sp.items) by[{w.kv_head, w.row_begin}].push_back(w);
  REQUIRE(by.size() == 256);
  for (auto& [key, v] : by) {
    const int m = key.second / 128, seen = 7168 + 32 * (m + 1);
    std::sort(v.begin(), v.end(), [](const WorkItem& a, const WorkItem& b) { return a.kv_begin < b.kv_begin; });
    CHECK(v.front().kv_begin == 0);
    CHECK(v.back().kv_end == 8192);
    if (m < 9) {
      REQUIRE(v.size() == 2);
      CHECK(v[0].kv_end == v[1].kv_begin);
      CHECK(v[0].kv_end % 64 == 0);
      CHECK(v[0].kv_end >= 0.55 * seen - 32);
      CHECK(v[0].kv_end <= 0.95 * seen + 32);
      CHECK((v[0].chunk == 0 && v[1].chunk == 1 && v[0].nchunks == 2 && v[1].nchunks == 2));
    } else {
      REQUIRE(v.size() == 1);
      CHECK(v[0].nchunks == 1);
    }
  }
  // the merge: each of rows 0 .. 287 once, after the decode's rows (none here: its 512 items fill the CTAs)
  std::vector<int> rows;
  for (const MergeRow& r : plan.merge_rows) {
    CHECK(r.side == 0);
    CHECK(r.request == 0);
    rows.push_back(r.row);
  }
  std::sort(rows.begin(), rows.end());
  std::vector<int> want(288);
  std::iota(want.begin(), want.end(), 0);
  CHECK(rows == want);
  // the model's end falls, and stays above the work spread evenly over the CTAs
  double work = 0;
  for (const WorkItem& w : sp.items) work += w.cost + kTailItemTokens;
  CHECK(tail_model_end(sp.items, 92) < 0.99 * tail_model_end(before.side[0].items, 92));
  CHECK(tail_model_end(sp.items, 92) >= work / 92);
  // no cut: whole waves (256 on 64), fewer items than CTAs, a side already split, q-tiles not of whole query rows
  for (int ctas : {64, 128, 256, 300}) {
    PodPlan q = before;
    CHECK(split_prefill_tail(lp.p, ctas, 128, q) == 0);
    CHECK(q.side[0].items.size() == 256);
    CHECK(q.merge_rows.empty());
  }
  {
    PodPlan q = before;
    q.side[0].max_splits = 2;
    CHECK(split_prefill_tail(lp.p, 92, 128, q) == 0);
  }
  {
    const LengthsProblem g3(24, 8, 1024, 8192, {});
    PodPlan q = make_plan(g3.p, 132, 1, t);
    const std::size_t n = q.side[0].items.size();
    CHECK(split_prefill_tail(g3.p, 92, 128, q) == 0);  // g = 3: a query row's heads straddle q-tiles
    CHECK(q.side[0].items.size() == n);
  }
}

TEST_CASE("the split form's prefill tail merged in the launch: each cut item's two pieces share one pair slot, no "
          "merge rows",
          "[kernels][host]") {
  // Mix B on 92 prefill CTAs, as above: 9 q-tiles cut on 8 KV heads, 72 pairs
  const LengthsProblem lp(32, 8, 1024, 8192, std::vector<int>(64, 4096));
  PlanTuning t;
  t.prefill_tile_rows = 128;
  const PodPlan before = make_plan(lp.p, 132, 1, t);
  PodPlan after_launch = before, in_launch = before;
  REQUIRE(split_prefill_tail(lp.p, 92, 128, after_launch) == 9);
  CHECK(split_prefill_tail(lp.p, 92, 128, in_launch, true) == 9);
  const SidePlan& sp = in_launch.side[0];
  // the same cut and partial states, no merge after the launch
  REQUIRE(sp.items.size() == after_launch.side[0].items.size());
  for (std::size_t i = 0; i < sp.items.size(); ++i) {
    const WorkItem &a = sp.items[i], &b = after_launch.side[0].items[i];
    CHECK((a.request == b.request && a.kv_head == b.kv_head && a.row_begin == b.row_begin && a.kv_begin == b.kv_begin &&
           a.kv_end == b.kv_end && a.chunk == b.chunk && a.nchunks == b.nchunks));
  }
  CHECK(sp.part_entries == after_launch.side[0].part_entries);
  CHECK(in_launch.merge_rows.empty());
  CHECK(after_launch.side[0].pair_slot.empty());
  // every cut piece in a slot with its other piece (same tile and head, the other chunk), every whole item in none
  REQUIRE(sp.pair_slot.size() == sp.items.size());
  CHECK(sp.n_pair_slots == 72);
  std::map<int, std::vector<WorkItem>> by_slot;
  for (std::size_t i = 0; i < sp.items.size(); ++i) {
    const WorkItem& w = sp.items[i];
    if (w.nchunks == 1) {
      CHECK(sp.pair_slot[i] == -1);
      continue;
    }
    REQUIRE(sp.pair_slot[i] >= 0);
    REQUIRE(sp.pair_slot[i] < sp.n_pair_slots);
    by_slot[sp.pair_slot[i]].push_back(w);
  }
  CHECK(int(by_slot.size()) == sp.n_pair_slots);
  for (const auto& [slot, v] : by_slot) {
    INFO("slot " << slot);
    REQUIRE(v.size() == 2);
    CHECK((v[0].request == v[1].request && v[0].row_begin == v[1].row_begin && v[0].kv_head == v[1].kv_head));
    CHECK(v[0].chunk + v[1].chunk == 1);
  }
  // no cut, no slots
  PodPlan q = before;
  CHECK(split_prefill_tail(lp.p, 64, 128, q, true) == 0);
  CHECK(q.side[0].pair_slot.empty());
  CHECK(q.side[0].n_pair_slots == 0);
}

TEST_CASE("RoPE ALiBi and soft cap are supported and their parameters packed (ABI 2)", "[kernels][host]") {
  CaseSpec s;
  s.heads = 12;  // not a power of two: FlashInfer's default slopes take the interleaved second series
  s.kv_heads = 4;
  s.prefill = side(false, {4}, {8}, MaskMode::causal);
  s.decode = side(true, {1}, {8});
  const Case base = test::build_case(s);

  Case c = base;
  c.prefill->params.pos_encoding = PosEncoding::rope_llama;
  c.prefill->params.rope_scale = 2.5;
  c.prefill->params.rope_theta = 5e5;
  c.decode->params.pos_encoding = PosEncoding::alibi;  // default slopes
  c.decode->params.logits_soft_cap = 30.0;
  PackedProblem pp;
  pack_case(c, pp);
  REQUIRE(pp.unsupported.empty());
  CHECK(pp.problem.prefill.pos_encoding == POD_POS_ROPE_LLAMA);
  CHECK(pp.problem.prefill.rope_scale == 2.5);
  CHECK(pp.problem.prefill.rope_theta == 5e5);
  CHECK(pp.side[0].alibi_slopes.empty());
  CHECK(pp.problem.decode.pos_encoding == POD_POS_ALIBI);
  CHECK(pp.problem.decode.logits_soft_cap == 30.0f);
  // SPEC §4.3 for H = 12: n = 8, slope_h = 2^(-8(h+1)/8) for h < 8, then (2^(-4/8))^(1, 3, 5, 7).
  const double expect[12] = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
                             std::pow(2.0, -0.5), std::pow(2.0, -1.5), std::pow(2.0, -2.5), std::pow(2.0, -3.5)};
  REQUIRE(pp.side[1].alibi_slopes.size() == 12);
  for (int h = 0; h < 12; ++h) CHECK(pp.side[1].alibi_slopes[h] == static_cast<float>(expect[h]));
  bool invalid = false;
  // pack_case leaves device pointers NULL: without the uploaded slopes the problem is inconsistent ...
  CHECK(check_support(pp.problem, &invalid).find("alibi_slopes") != std::string::npos);
  CHECK(invalid);
  // ... with them (as DeviceCase uploads them) every feature is supported.
  pp.problem.decode.alibi_slopes = pp.side[1].alibi_slopes.data();
  CHECK(check_support(pp.problem, &invalid).empty());
  CHECK_FALSE(invalid);

  Case own = base;  // a case's own slopes are passed through as they are
  own.prefill->params.pos_encoding = PosEncoding::alibi;
  own.prefill->params.alibi_slopes.assign(12, 0.0);
  for (int h = 0; h < 12; ++h) own.prefill->params.alibi_slopes[h] = 0.01 * (h + 1);
  PackedProblem po;
  pack_case(own, po);
  REQUIRE(po.side[0].alibi_slopes.size() == 12);
  for (int h = 0; h < 12; ++h) CHECK(po.side[0].alibi_slopes[h] == static_cast<float>(0.01 * (h + 1)));
}

// The KV copy loops divide token indices by the page size with FastDiv: every divisor a page size can be in
// the tiers and beyond (1..4096, and large ones), against the divide instruction, on the numerators near
// the edges (multiples of d and their neighbours, 2^31 - 1) and on random ones below 2^31.
TEST_CASE("FastDiv divides like / for n < 2^31", "[kernels][host]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int32_t> any(0, 0x7fffffff);
  std::vector<std::int32_t> divisors;
  for (std::int32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (std::int32_t d : {65535, 65536, 65537, 1 << 20, (1 << 20) + 1, 999999937, 1 << 30, 0x7ffffffe, 0x7fffffff})
    divisors.push_back(d);
  std::int64_t wrong = 0, checked = 0;
  for (std::int32_t d : divisors) {
    const FastDiv f = FastDiv::make(d);
    auto check = [&](std::int64_t n) {
      if (n < 0 || n > 0x7fffffff) return;
      const auto q = f.div(static_cast<std::int32_t>(n));
      wrong += (q != n / d) || (f.mod(static_cast<std::int32_t>(n), q) != n % d);
      ++checked;
    };
    for (std::int64_t n = 0; n < 3 * static_cast<std::int64_t>(d) + 3 && n < 20000; ++n) check(n);
    for (std::int64_t k : {std::int64_t{1000}, std::int64_t{1} << 20, (std::int64_t{1} << 31) / d})
      for (std::int64_t e = -1; e <= 1; ++e) check(k * d + e);
    check(0x7fffffff);
    check(0x7ffffffe);
    for (int i = 0; i < 64; ++i) check(any(rng));
  }
  INFO(checked << " quotients checked");
  CHECK(wrong == 0);
  CHECK(checked > 4000000);
}
