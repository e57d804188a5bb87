// Diagnoses that name the pattern: for each pattern a fault is planted into the best outputs a kernel can
// give (the reference rounded once), and the diagnosis must name that pattern first, with its evidence, in
// the text and in the structured findings. Also the two wrong answers of the old diagnosis (one wrong head of
// one decode request, and output on rows that see no key, both once blamed on the request's pages).
#include "testing/catch.hpp"

#include "validation/diagnose.hpp"
#include "validation/error_map.hpp"
#include "validation/judge.hpp"
#include "validation/tests/helpers.hpp"

#include <cmath>
#include <string>

using namespace podcheck;
using namespace podcheck::validation;
using podcheck::testhelp::out_index;
using podcheck::testhelp::rounded_reference;

namespace {

std::string findings_text(const CaseResult& r) {
  std::string s;
  for (const auto& f : r.findings) s += "[" + f.kind + "] " + f.text + "\n";
  return s;
}

CaseResult judge_case(const Case& c, const KernelOutputs& o, Policy p = Policy::calibrated) {
  JudgeOptions jo;
  jo.policy = p;
  return judge(c, o, RunRecord{}, jo);
}

bool has_kind(const CaseResult& r, const std::string& kind) {
  for (const auto& f : r.findings)
    if (f.kind == kind) return true;
  return false;
}

const Finding& first(const CaseResult& r) {
  REQUIRE(!r.findings.empty());
  return r.findings.front();
}

bool has_range(const Finding& f, const std::string& dim, std::int64_t lo, std::int64_t hi) {
  for (const auto& x : f.ranges)
    if (x.dim == dim && x.lo == lo && x.hi == hi) return true;
  return false;
}

bool blames_pages(const CaseResult& r) {
  for (const auto& f : r.findings)
    if (f.kind == "page-permutation" || f.text.find("page-table") != std::string::npos ||
        f.text.find("pages or") != std::string::npos)
      return true;
  return false;
}

// A decode batch: `kv_lens` requests of one row, paged (page 16), heads/kv_heads, fp16.
Case decode_case(std::vector<std::int64_t> kv_lens, int heads = 8, int kv_heads = 2, int page = 16,
                 std::uint64_t seed = 3) {
  CaseRecipe cs;
  cs.num_qo_heads = heads;
  cs.num_kv_heads = kv_heads;
  cs.head_dim = 32;
  cs.seed = seed;
  SideRecipe d;
  d.page_size = page;
  d.qo_lens.assign(kv_lens.size(), 1);
  d.kv_lens = std::move(kv_lens);
  d.spare_pages = 3;
  cs.decode = d;
  return build_case(cs);
}

// A paged prefill batch (one side), causal unless told otherwise.
Case prefill_case(std::vector<std::int64_t> qo, std::vector<std::int64_t> kv, int heads = 4, int kv_heads = 2,
                  MaskMode mode = MaskMode::causal, int page = 16, std::uint64_t seed = 4) {
  CaseRecipe cs;
  cs.num_qo_heads = heads;
  cs.num_kv_heads = kv_heads;
  cs.head_dim = 32;
  cs.seed = seed;
  SideRecipe p;
  p.page_size = page;
  p.qo_lens = std::move(qo);
  p.kv_lens = std::move(kv);
  p.params.mask_mode = mode;
  cs.prefill = p;
  return build_case(cs);
}

// Scales the output (all dims) and shifts the LSE of (global row, head) on one side: a wrong value there.
void spoil(const Case& c, KernelOutputs& o, SideKind side, std::int64_t row, int h, double scale = 1.3,
           double lse_shift = 0.7) {
  auto& out = *o.out(side);
  for (int d = 0; d < c.head_dim; ++d) {
    const auto k = out_index(c, row, h, d);
    out.set(k, out.get(k) * scale + 0.05);
  }
  auto& lse = *o.lse(side);
  const auto k = row * c.num_qo_heads + h;
  lse.set(k, lse.get(k) + lse_shift);
}

}  // namespace

TEST_CASE("one wrong head of one decode request: a per-head fault, not the request's pages", "[validation][diagnosis]") {
  const Case c = decode_case({40, 70, 33, 90, 16, 51});
  auto obs = rounded_reference(c);
  spoil(c, obs, SideKind::decode, 3, 5);  // request 3, head 5 (kv head 1, whose heads 4, 6, 7 are right)
  const CaseResult r = judge_case(c, obs);
  CAPTURE(findings_text(r));
  REQUIRE(r.status == Status::incorrect);
  const Finding& f = first(r);
  CHECK(f.kind == "heads");
  CHECK(f.text.find("head(s) 5 of decode request 3") != std::string::npos);
  CHECK(f.text.find("not the pages") != std::string::npos);
  CHECK(has_range(f, "request", 3, 3));
  CHECK(has_range(f, "head", 5, 5));
  CHECK(!blames_pages(r));
}

TEST_CASE("rows that see no key got output: named, not blamed on pages", "[validation][diagnosis]") {
  // Request 1 has fewer keys than query rows: under the causal mask its rows 0..5 see no key.
  const Case c = prefill_case({5, 9, 7}, {30, 3, 20});
  auto obs = rounded_reference(c);
  const Side& s = *c.prefill;
  REQUIRE(std::isinf(obs.lse_p->get(s.qo_indptr[1] * c.num_qo_heads)));
  // The kernel writes the mean of the request's V rows and a finite LSE there.
  for (std::int64_t i = 0; i < 6; ++i)
    for (int h = 0; h < c.num_qo_heads; ++h) {
      const std::int64_t row = s.qo_indptr[1] + i;
      for (int d = 0; d < c.head_dim; ++d) obs.out_p->set(out_index(c, row, h, d), 0.1 + 0.01 * d);
      obs.lse_p->set(row * c.num_qo_heads + h, 1.5);
    }
  const CaseResult r = judge_case(c, obs);
  CAPTURE(findings_text(r));
  REQUIRE(r.status == Status::incorrect);
  const Finding& f = first(r);
  CHECK(f.kind == "empty-rows-written");
  CHECK(f.text.find("rows that see no key got output") != std::string::npos);
  CHECK(f.text.find("6 of the 6 rows that see no key") != std::string::npos);
  CHECK(has_range(f, "request", 1, 1));
  CHECK(has_range(f, "row", 0, 5));
  CHECK(!blames_pages(r));
}

TEST_CASE("rows that see keys written as empty", "[validation][diagnosis]") {
  const Case c = prefill_case({12, 9}, {30, 20});
  auto obs = rounded_reference(c);
  for (std::int64_t row = 14; row <= 16; ++row)  // request 1 rows 2-4
    for (int h = 0; h < c.num_qo_heads; ++h) {
      for (int d = 0; d < c.head_dim; ++d) obs.out_p->set(out_index(c, row, h, d), 0.0);
      obs.lse_p->set(row * c.num_qo_heads + h, -INFINITY);
    }
  const CaseResult r = judge_case(c, obs);
  CAPTURE(findings_text(r));
  const Finding& f = first(r);
  CHECK(f.kind == "rows-left-empty");
  CHECK(has_range(f, "request", 1, 1));
  CHECK(has_range(f, "row", 2, 4));
  CHECK(!blames_pages(r));
}

TEST_CASE("rows that see keys the mask hides: the error rows are those a shifted bound changes", "[validation][diagnosis]") {
  // Request 0 (L == Q): rows 0-5 see keys from 0 under both windows; the other rows see one key more.
  Case c = prefill_case({12, 8}, {12, 20}, 4, 2, MaskMode::none);
  c.prefill->params.window_left = 5;
  Case wider = c;
  wider.prefill->params.window_left = 6;  // the kernel's window is one key wider
  auto obs = rounded_reference(c);
  const auto wrong = rounded_reference(wider);
  obs.out_p = wrong.out_p;
  obs.lse_p = wrong.lse_p;
  const CaseResult r = judge_case(c, obs);
  CAPTURE(findings_text(r));
  const Finding& f = first(r);
  CHECK(f.kind == "mask-bound");
  CHECK(f.text.find("window_left + 1") != std::string::npos);
  CHECK(f.text.find("prefill request 0 rows 6-11, request 1 rows 0-7") != std::string::npos);
  CHECK(has_range(f, "row", 6, 11));
  CHECK(has_kind(r, "semantic-match"));
  CHECK(!blames_pages(r));
}

TEST_CASE("one request's pages swapped: a page permutation explains it", "[validation][diagnosis]") {
  // Request 3 has 40 rows over 90 keys on 6 pages; a causal prefill row sees a prefix of the keys, so
  // which page sits where matters (for a decode row only the set of keys does, and the unused slots of a last
  // page hold NaN). Its pages 1 and 4 are read swapped.
  const Case c = prefill_case({12, 12, 12, 40}, {40, 70, 33, 90}, 4, 2, MaskMode::causal, 16, 3);
  Case shuffled = c;
  auto& pt = shuffled.prefill->kv.pages;
  std::swap(pt.indices[pt.indptr[3] + 1], pt.indices[pt.indptr[3] + 4]);
  auto obs = rounded_reference(c);
  const auto wrong = rounded_reference(shuffled);
  obs.out_p = wrong.out_p;
  obs.lse_p = wrong.lse_p;
  const CaseResult r = judge_case(c, obs);
  CAPTURE(findings_text(r));
  const Finding& f = first(r);
  CHECK(f.kind == "page-permutation");
  CHECK(f.text.find("confined to prefill request 3") != std::string::npos);
  const auto& ix = c.prefill->kv.pages.indices;
  const auto b = c.prefill->kv.pages.indptr[3];
  CHECK(f.text.find("pages " + std::to_string(ix[b + 1]) + " and " + std::to_string(ix[b + 4]) +
                    " (positions 1 and 4) swapped") != std::string::npos);
  CHECK(has_range(f, "request", 3, 3));
}

TEST_CASE("errors in the same heads of every GQA group, and in the heads of one kv head", "[validation][diagnosis]") {
  const Case c = decode_case({40, 70, 33, 90}, 16, 2);  // groups of 8
  SECTION("heads >= 5 within each group") {
    auto obs = rounded_reference(c);
    for (std::int64_t row = 0; row < 4; ++row)
      for (int h = 0; h < 16; ++h)
        if (h % 8 >= 5) spoil(c, obs, SideKind::decode, row, h);
    const CaseResult r = judge_case(c, obs);
    CAPTURE(findings_text(r));
    const Finding& f = first(r);
    CHECK(f.kind == "heads-in-group");
    CHECK(f.text.find("heads 5-7 of every group of 8") != std::string::npos);
    CHECK(f.text.find("heads >= 5 within each group") != std::string::npos);
    CHECK(has_range(f, "head_in_group", 5, 7));
  }
  SECTION("every query head of kv head 1") {
    auto obs = rounded_reference(c);
    for (std::int64_t row = 0; row < 4; ++row)
      for (int h = 8; h < 16; ++h) spoil(c, obs, SideKind::decode, row, h);
    const CaseResult r = judge_case(c, obs);
    CAPTURE(findings_text(r));
    const Finding& f = first(r);
    CHECK(f.kind == "kv-head-group");
    CHECK(f.text.find("query heads of kv head(s) 1") != std::string::npos);
    CHECK(has_range(f, "kv_head", 1, 1));
  }
}

TEST_CASE("errors on a tile of packed query rows, the last partial tile", "[validation][diagnosis]") {
  // 4 query heads per kv head: packed row = 4 * row + head % 4; a tile of 64 packed rows is 16 query rows.
  const Case c = prefill_case({40}, {40}, 8, 2, MaskMode::none);
  SECTION("packed rows 64-127") {
    auto obs = rounded_reference(c);
    for (std::int64_t row = 16; row < 32; ++row)
      for (int h = 0; h < 8; ++h) spoil(c, obs, SideKind::prefill, row, h);
    const CaseResult r = judge_case(c, obs);
    CAPTURE(findings_text(r));
    const Finding& f = first(r);
    CHECK(f.kind == "row-tile");
    CHECK(f.text.find("packed query rows 64-127 (row x group of 4: query rows 16-31)") != std::string::npos);
    CHECK(f.text.find("tile of 64 packed rows") != std::string::npos);
    CHECK(has_range(f, "packed_row", 64, 127));
  }
  SECTION("the last tile, partial") {
    auto obs = rounded_reference(c);
    for (std::int64_t row = 32; row < 40; ++row)
      for (int h = 0; h < 8; ++h) spoil(c, obs, SideKind::prefill, row, h);
    const CaseResult r = judge_case(c, obs);
    CAPTURE(findings_text(r));
    const Finding& f = first(r);
    CHECK(f.kind == "row-tile");
    CHECK(f.text.find("the last tile (partial: 32 of 128)") != std::string::npos);
  }
}

TEST_CASE("errors on the rows whose RoPE position is negative", "[validation][diagnosis]") {
  Case c = prefill_case({20}, {7}, 4, 2, MaskMode::none);
  c.prefill->params.pos_encoding = PosEncoding::rope_llama;
  auto obs = rounded_reference(c);
  for (std::int64_t row = 0; row < 13; ++row)  // position row + 7 - 20 < 0
    for (int h = 0; h < 4; ++h) spoil(c, obs, SideKind::prefill, row, h);
  const CaseResult r = judge_case(c, obs);
  CAPTURE(findings_text(r));
  const Finding& f = first(r);
  CHECK(f.kind == "rope-position");
  CHECK(f.text.find("RoPE position i + L - Q is negative") != std::string::npos);
  CHECK(has_range(f, "rope_position", -13, -1));
}

TEST_CASE("errors past a KV boundary: long decode requests, prefill rows that see key 48 on", "[validation][diagnosis]") {
  SECTION("decode requests longer than a split-KV chunk") {
    const Case c = decode_case({40, 700, 33, 900, 16, 513, 200, 64});
    auto obs = rounded_reference(c);
    for (std::int64_t row : {1, 3, 5})  // kv_len 700, 900, 513 > 512
      for (int h = 0; h < 8; ++h) spoil(c, obs, SideKind::decode, row, h);
    const CaseResult r = judge_case(c, obs);
    CAPTURE(findings_text(r));
    const Finding& f = first(r);
    CHECK(f.kind == "kv-length-class");
    CHECK(f.text.find("requests with kv_len >= 513") != std::string::npos);
    CHECK(f.text.find("512 (a multiple of 512") != std::string::npos);
    CHECK(has_range(f, "kv_len", 513, 900));
    CHECK(!blames_pages(r));
  }
  SECTION("prefill rows that see keys at 48 and beyond") {
    const Case c = prefill_case({20, 30}, {60, 50}, 4, 4);
    auto obs = rounded_reference(c);
    const Side& s = *c.prefill;
    for (int r = 0; r < 2; ++r)
      for (std::int64_t i = 0; i < s.qo_len(r); ++i)
        if (i + s.kv_len(r) - s.qo_len(r) >= 48)
          for (int h = 0; h < 4; ++h) spoil(c, obs, SideKind::prefill, s.qo_indptr[r] + i, h);
    const CaseResult r = judge_case(c, obs);
    CAPTURE(findings_text(r));
    const Finding& f = first(r);
    CHECK(f.kind == "kv-boundary");
    CHECK(f.text.find("positions >= B for some B in [48, 48]") != std::string::npos);
    CHECK(f.text.find("page 3 starts there") != std::string::npos);
    CHECK(has_range(f, "boundary", 48, 48));
  }
  SECTION("decode requests whose last page is partial") {
    const Case c = decode_case({32, 40, 48, 20, 64, 70});  // page 16: 40, 20, 70 end in a partial page
    auto obs = rounded_reference(c);
    for (std::int64_t row : {1, 3, 5})
      for (int h = 0; h < 8; ++h) spoil(c, obs, SideKind::decode, row, h);
    const CaseResult r = judge_case(c, obs);
    CAPTURE(findings_text(r));
    const Finding& f = first(r);
    CHECK(f.kind == "kv-length-class");
    CHECK(f.text.find("whose last page is partial") != std::string::npos);
  }
}

TEST_CASE("errors on the rows that see one page", "[validation][diagnosis]") {
  // Sliding window 9 over page 16: rows see 10 keys, so only some rows see page 1 (keys 16..31).
  Case c = prefill_case({40}, {48}, 4, 4, MaskMode::causal);
  c.prefill->params.window_left = 9;
  auto obs = rounded_reference(c);
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < 40; ++i) {
    const std::int64_t pos = i + 8, lo = std::max<std::int64_t>(0, pos - 9);
    if (lo <= 31 && pos >= 16) rows.push_back(i);
  }
  for (std::int64_t row : rows)
    for (int h = 0; h < 4; ++h) spoil(c, obs, SideKind::prefill, row, h);
  const CaseResult r = judge_case(c, obs);
  CAPTURE(findings_text(r));
  const Finding& f = first(r);
  CHECK(f.kind == "kv-page");
  CHECK(f.text.find("see its page 1") != std::string::npos);
  CHECK(has_range(f, "key", 16, 31));
}

TEST_CASE("only the LSE wrong, and how: base, sign, offset; only the output; a constant factor", "[validation][diagnosis]") {
  const Case c = decode_case({40, 70, 33, 90}, 8, 2);
  auto lse_map = [&](auto f) {
    auto o = rounded_reference(c);
    for (std::int64_t i = 0; i < o.lse_d->numel(); ++i) o.lse_d->set(i, f(i, o.lse_d->get(i)));
    return o;
  };
  SECTION("base e") {
    const CaseResult r = judge_case(c, lse_map([](std::int64_t, double l) { return l * std::log(2.0); }));
    CAPTURE(findings_text(r));
    CHECK(first(r).kind == "lse-base");
    CHECK(first(r).text.find("only lse_d is wrong (out_d agrees): it is the LSE in base e") != std::string::npos);
  }
  SECTION("sign") {
    const CaseResult r = judge_case(c, lse_map([](std::int64_t, double l) { return -l; }));
    CAPTURE(findings_text(r));
    CHECK(first(r).kind == "lse-sign");
  }
  SECTION("a constant offset") {
    const CaseResult r = judge_case(c, lse_map([](std::int64_t, double l) { return l + 0.5; }));
    CAPTURE(findings_text(r));
    CHECK(first(r).kind == "lse-offset");
    CHECK(first(r).text.find("observed = reference + 0.5 on every row") != std::string::npos);
  }
  SECTION("an offset per head") {
    const CaseResult r = judge_case(c, lse_map([&](std::int64_t i, double l) { return l + 0.25 * double(i % 8 + 1); }));
    CAPTURE(findings_text(r));
    CHECK(first(r).kind == "lse-offset");
    CHECK(first(r).text.find("constant per head") != std::string::npos);
  }
  SECTION("LSE noise only") {
    const CaseResult r = judge_case(c, lse_map([](std::int64_t i, double l) { return l + 0.01 * double((i * 7919) % 13) - 0.06; }));
    CAPTURE(findings_text(r));
    CHECK(first(r).kind == "lse-only");
  }
  SECTION("output scaled by a constant") {
    auto o = rounded_reference(c);
    for (std::int64_t i = 0; i < o.out_d->numel(); ++i) o.out_d->set(i, o.out_d->get(i) * 0.5);
    const CaseResult r = judge_case(c, o);
    CAPTURE(findings_text(r));
    CHECK(first(r).kind == "out-scale");
    CHECK(first(r).text.find("only out_d is wrong (lse_d agrees)") != std::string::npos);
    CHECK(first(r).text.find("k = 0.5") != std::string::npos);
  }
  SECTION("output noise only") {
    auto o = rounded_reference(c);
    for (std::int64_t i = 0; i < o.out_d->numel(); ++i) o.out_d->set(i, o.out_d->get(i) + 0.01 * double((i * 31) % 7) - 0.03);
    const CaseResult r = judge_case(c, o);
    CAPTURE(findings_text(r));
    CHECK(first(r).kind == "out-only");
  }
}

TEST_CASE("only one side wrong", "[validation][diagnosis]") {
  CaseRecipe cs;
  cs.num_qo_heads = 4;
  cs.num_kv_heads = 2;
  cs.head_dim = 32;
  SideRecipe p;
  p.paged = false;
  p.qo_lens = {9};
  p.kv_lens = {20};
  p.params.mask_mode = MaskMode::causal;
  cs.prefill = p;
  SideRecipe d;
  d.qo_lens = {1, 1, 1};
  d.kv_lens = {20, 35, 50};
  cs.decode = d;
  const Case c = build_case(cs);
  auto o = rounded_reference(c);
  for (std::int64_t i = 0; i < o.out_d->numel(); ++i) o.out_d->set(i, o.out_d->get(i) + 0.01 * double((i * 31) % 7) - 0.03);
  for (std::int64_t i = 0; i < o.lse_d->numel(); ++i) o.lse_d->set(i, o.lse_d->get(i) + 0.02 * double((i * 7) % 5) - 0.04);
  const CaseResult r = judge_case(c, o);
  CAPTURE(findings_text(r));
  CHECK(first(r).kind == "side-only");
  CHECK(first(r).text == "only the decode side is wrong; the prefill side agrees");
}

TEST_CASE("heat maps: error / bound per request over query row x head, binned, NaN where never written",
          "[validation][heatmap]") {
  const Case c = prefill_case({40, 5, 17}, {40, 30, 60}, 8, 2);
  auto obs = rounded_reference(c);
  const Side& s = *c.prefill;
  spoil(c, obs, SideKind::prefill, s.qo_indptr[0] + 22, 6);  // request 0, row 22, head 6
  obs.out_p->set_bits(out_index(c, s.qo_indptr[2] + 3, 1, 4), kPoisonF16);  // request 2, row 3, head 1: unwritten
  const CaseResult judged = judge_case(c, obs);
  REQUIRE(judged.status == Status::incorrect);

  const auto maps = heat_maps(c, obs, Policy::calibrated, Profile::intended, 16, 4);
  REQUIRE(maps.size() == 6);  // 3 requests x (out, lse)
  const HeatMap* r0 = nullptr;
  for (const auto& m : maps) {
    CHECK(m.row_bins <= 16);
    CHECK(m.head_bins <= 4);
    CHECK(m.row_bins * m.rows_per_bin >= m.rows);
    CHECK((m.row_bins - 1) * m.rows_per_bin < m.rows);
    CHECK(m.heads_per_bin == 2);
    CHECK(m.cells.size() == static_cast<std::size_t>(m.row_bins * m.head_bins));
    if (m.request == 0 && m.kind == TensorKind::out) r0 = &m;
  }
  REQUIRE(r0);
  CHECK(r0->rows == 40);
  CHECK(r0->rows_per_bin == 3);  // 40 rows into at most 16 bins
  CHECK(r0->row_bins == 14);
  // The spoiled cell is in bin (22 / 3, 6 / 2) and is the only bin over its bound.
  for (std::int64_t i = 0; i < r0->row_bins; ++i)
    for (int j = 0; j < r0->head_bins; ++j) {
      CAPTURE(i, j);
      if (i == 7 && j == 3) CHECK(r0->at(i, j) > 1.0f);
      else CHECK(r0->at(i, j) <= 1.0f);
    }
  // The largest finite ratio of any map is the tensor's share of its bound as compare_tensor measured it.
  for (TensorKind k : {TensorKind::out, TensorKind::lse}) {
    float worst = 0;
    for (const auto& m : maps)
      if (m.kind == k)
        for (float v : m.cells)
          if (std::isfinite(v)) worst = std::max(worst, v);
    const double tol = testhelp::tensor(judged, k == TensorKind::out ? "out_p" : "lse_p").tol_used;
    CHECK(std::abs(worst - tol) <= 1e-5 * tol);
  }
  // Unwritten: NaN in request 2's output map (row 3, head 1 -> bin (0 or 1, 0)), never in its LSE map.
  for (const auto& m : maps)
    if (m.request == 2) {
      int nan_bins = 0;
      for (float v : m.cells) nan_bins += std::isnan(v);
      CHECK(nan_bins == (m.kind == TensorKind::out ? 1 : 0));
      if (m.kind == TensorKind::out) CHECK(std::isnan(m.at(3 / m.rows_per_bin, 0)));
    }
  // Unbinned when the map fits.
  for (const auto& m : heat_maps(c, obs, Policy::calibrated, Profile::intended, 64, 8)) {
    CHECK(m.rows_per_bin == 1);
    CHECK(m.heads_per_bin == 1);
    CHECK(m.row_bins == m.rows);
  }
}

TEST_CASE("cell errors fail exactly where compare_tensor does", "[validation][heatmap]") {
  const Case c = decode_case({40, 70, 33, 90}, 8, 2);
  auto obs = rounded_reference(c);
  const double atol = tolerance_value("flashinfer.lse.float16.atol");
  // LSE errors of 1.5 and 0.5 bounds (flashinfer policy: the LSE bound is atol), on alternate cells.
  for (std::int64_t i = 0; i < obs.lse_d->numel(); i += 3) obs.lse_d->set(i, obs.lse_d->get(i) + (i % 2 ? 1.5 : 0.5) * atol);
  const CaseResult r = judge_case(c, obs, Policy::flashinfer);
  const SideResult ref = reference_fast_side(c, SideKind::decode);
  const CellErrors e = cell_errors(Policy::flashinfer, c, SideKind::decode, obs, ref, nullptr);
  std::int64_t fails = 0;
  for (std::int64_t cell = 0; cell < e.rows * e.heads; ++cell) {
    fails += (e.flags[cell] & CellErrors::kLseFail) != 0;
    if (cell % 3 == 0) {
      CAPTURE(cell);
      // float32 storage rounds the planted error a little
      CHECK(std::abs(e.lse_ratio[cell] - (cell % 2 ? 1.5 : 0.5)) < 0.05);
    }
  }
  CHECK(fails == testhelp::tensor(r, "lse_d").over_tol);
  CHECK(fails > 0);
}
