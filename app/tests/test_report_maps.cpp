// Heat maps as reports carry them: planted faults land in the right cell, binning keeps every bin the max of
// the cells it covers (checked against the unbinned map), the JSON form round-trips, case attributes.
#include "testing/catch.hpp"

#include "app/report.hpp"
#include "app/report_maps.hpp"
#include "validation/tests/helpers.hpp"

#include <cmath>
#include <limits>

using namespace podcheck;
using namespace podcheck::app;
using namespace podcheck::validation;
using podcheck::testhelp::make_pod;
using podcheck::testhelp::PodSpec;
using podcheck::testhelp::rounded_reference;

namespace {

const HeatMap* find(const std::vector<HeatMap>& maps, SideKind side, TensorKind kind, int request) {
  for (const auto& m : maps)
    if (m.side == side && m.kind == kind && m.request == request) return &m;
  return nullptr;
}

// Element index of (row, head, dim) in an out tensor / (row, head) in an lse tensor.
std::int64_t out_index(const Case& c, std::int64_t row, int head, int dim) {
  return (row * c.num_qo_heads + head) * c.head_dim + dim;
}

bool same_cell(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// The bin of `binned` that covers (row, head) must be the max (NaN first) of the unbinned cells it covers.
void check_binning(const HeatMap& binned, const HeatMap& full) {
  REQUIRE(binned.rows == full.rows);
  REQUIRE(binned.heads == full.heads);
  CHECK(binned.row_bins == (full.rows + binned.rows_per_bin - 1) / binned.rows_per_bin);
  CHECK(binned.head_bins == (full.heads + binned.heads_per_bin - 1) / binned.heads_per_bin);
  for (std::int64_t i = 0; i < binned.row_bins; ++i)
    for (int h = 0; h < binned.head_bins; ++h) {
      float want = 0;
      bool nan = false;
      for (std::int64_t r = i * binned.rows_per_bin; r < std::min(full.rows, (i + 1) * binned.rows_per_bin); ++r)
        for (int k = h * binned.heads_per_bin; k < std::min(full.heads, (h + 1) * binned.heads_per_bin); ++k) {
          nan = nan || std::isnan(full.at(r, k));
          if (!std::isnan(full.at(r, k))) want = std::max(want, full.at(r, k));
        }
      if (!same_cell(binned.at(i, h), nan ? std::numeric_limits<float>::quiet_NaN() : want)) {
        FAIL_CHECK("bin (" << i << ", " << h << ") = " << binned.at(i, h) << ", expected " << want << (nan ? " (NaN)" : ""));
        return;
      }
    }
}

}  // namespace

TEST_CASE("report maps: a planted wrong element and a never-written LSE sit in their cells, every other cell within", "[app][maps]") {
  const Case c = make_pod(PodSpec{});  // prefill 19 rows; decode 4 requests of 1 row; 8 heads
  KernelOutputs o = rounded_reference(c);
  o.out_d->set(out_index(c, 2, 5, 7), o.out_d->get(out_index(c, 2, 5, 7)) + 1.0);  // request 2, head 5
  o.lse_p->set(4 * c.num_qo_heads + 1, std::numeric_limits<double>::quiet_NaN());  // prefill row 4, head 1
  const auto maps = report_heat_maps(c, o, Policy::calibrated, Profile::intended);
  CHECK(maps.size() == 2 + 2 * 4);  // prefill out/lse, decode out/lse per request
  for (const HeatMap& m : maps)
    for (std::int64_t i = 0; i < m.row_bins; ++i)
      for (int h = 0; h < m.head_bins; ++h) {
        const bool planted_out = m.side == SideKind::decode && m.kind == TensorKind::out && m.request == 2 && h == 5;
        const bool planted_lse = m.side == SideKind::prefill && m.kind == TensorKind::lse && i == 4 && h == 1;
        INFO(tensor_name(m.side, m.kind) << " request " << m.request << " bin (" << i << ", " << h << ")");
        if (planted_out) CHECK(m.at(i, h) >= 1.0f);
        else if (planted_lse) CHECK(std::isnan(m.at(i, h)));
        else CHECK(m.at(i, h) < 1.0f);
      }
  const HeatMap* d2 = find(maps, SideKind::decode, TensorKind::out, 2);
  REQUIRE(d2);
  CHECK(d2->rows == 1);
  CHECK(d2->head_bins == 8);
}

TEST_CASE("report maps: a big side is binned to the report's limits, each bin the max of the cells it covers", "[app][maps]") {
  PodSpec ps;
  ps.qo_p = 600;
  ps.kv_p = 600;
  ps.heads = 8;
  ps.kv_heads = 8;
  ps.head_dim = 16;
  ps.kv_d = {};
  const Case c = make_pod(ps);
  KernelOutputs o = rounded_reference(c);
  o.out_p->set(out_index(c, 200, 3, 0), o.out_p->get(out_index(c, 200, 3, 0)) + 0.5);
  o.out_p->set(out_index(c, 10, 6, 1), std::numeric_limits<double>::quiet_NaN());
  const auto full = heat_maps(c, o, Policy::calibrated, Profile::intended, 1 << 20, 1 << 20);
  const auto binned = report_heat_maps(c, o, Policy::calibrated, Profile::intended);
  const HeatMap* f = find(full, SideKind::prefill, TensorKind::out, 0);
  const HeatMap* b = find(binned, SideKind::prefill, TensorKind::out, 0);
  REQUIRE(f);
  REQUIRE(b);
  CHECK(f->row_bins == 600);
  CHECK(b->row_bins <= kMaxPanelRowBins);
  CHECK(b->rows_per_bin > 1);
  check_binning(*b, *f);
  CHECK(b->at(200 / b->rows_per_bin, 3) >= 1.0f);
  CHECK(std::isnan(b->at(10 / b->rows_per_bin, 6)));

  // heads: 128 query heads in 64 bins of 2; decode requests keep one bin each
  PodSpec hs;
  hs.qo_p = 0;
  hs.heads = 128;
  hs.kv_heads = 2;
  hs.head_dim = 16;
  hs.kv_d = {3, 40, 17};
  const Case d = make_pod(hs);
  KernelOutputs od = rounded_reference(d);
  od.lse_d->set(1 * 128 + 77, od.lse_d->get(1 * 128 + 77) + 1.0);
  const auto hm = report_heat_maps(d, od, Policy::calibrated, Profile::intended);
  const HeatMap* l1 = find(hm, SideKind::decode, TensorKind::lse, 1);
  REQUIRE(l1);
  CHECK(l1->head_bins == kMaxHeadBins);
  CHECK(l1->heads_per_bin == 2);
  CHECK(l1->at(0, 77 / 2) >= 1.0f);
  CHECK(l1->at(0, 76 / 2 - 1) < 1.0f);
}

TEST_CASE("report maps: a panel's rows are fitted over its requests, exactly, with one bin per request at least", "[app][maps]") {
  auto make = [](int request, std::int64_t rows, SideKind side) {
    HeatMap m;
    m.side = side;
    m.request = request;
    m.rows = m.row_bins = rows;
    m.heads = m.head_bins = 3;
    for (std::int64_t i = 0; i < rows * 3; ++i) m.cells.push_back(static_cast<float>((i * 37) % 101) / 50.0f);
    if (rows > 7) m.cells[7 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();
    return m;
  };
  std::vector<HeatMap> maps = {make(0, 100, SideKind::prefill), make(1, 50, SideKind::prefill), make(2, 10, SideKind::prefill)};
  for (int r = 0; r < 90; ++r) maps.push_back(make(r, 1, SideKind::decode));
  const auto fitted = fit_panel_rows(maps, 64);
  std::int64_t prefill_rows = 0, decode_rows = 0;
  for (std::size_t k = 0; k < fitted.size(); ++k) {
    (fitted[k].side == SideKind::prefill ? prefill_rows : decode_rows) += fitted[k].row_bins;
    check_binning(fitted[k], maps[k]);
    CHECK(fitted[k].row_bins >= 1);
  }
  CHECK(prefill_rows <= 64);
  CHECK(prefill_rows >= 32);    // not coarser than needed
  CHECK(decode_rows == 90);     // one bin per request is the floor
}

TEST_CASE("report maps: the JSON form round-trips NaN, inf and 3 digits, and refuses a malformed map", "[app][maps]") {
  HeatMap m;
  m.side = SideKind::decode;
  m.kind = TensorKind::lse;
  m.request = 3;
  m.rows = 5;
  m.heads = 4;
  m.row_bins = 3;
  m.rows_per_bin = 2;
  m.head_bins = 2;
  m.heads_per_bin = 2;
  m.cells = {0.0f, 0.123456f, 1.0f, 987.654f, std::numeric_limits<float>::quiet_NaN(),
             std::numeric_limits<float>::infinity()};
  const nlohmann::json j = heat_maps_json({m});
  REQUIRE(j.size() == 1);
  CHECK(j[0]["tensor"] == "lse_d");
  CHECK(j[0]["side"] == "decode");
  CHECK(j[0]["cells"] == "0 0.123 1 988 nan inf");
  const auto back = heat_maps_from_json(j);
  REQUIRE(back.size() == 1);
  const HeatMap& b = back[0];
  CHECK(b.side == m.side);
  CHECK(b.kind == m.kind);
  CHECK(b.request == 3);
  CHECK(b.rows_per_bin == 2);
  CHECK(b.heads_per_bin == 2);
  REQUIRE(b.cells.size() == 6);
  for (std::size_t i = 0; i < 4; ++i) CHECK(std::abs(b.cells[i] - m.cells[i]) <= 5e-3f * std::max(1.0f, m.cells[i]));
  CHECK(std::isnan(b.cells[4]));
  CHECK(std::isinf(b.cells[5]));

  nlohmann::json bad = j;
  bad[0]["cells"] = "0 1 2";
  CHECK_THROWS_WITH(heat_maps_from_json(bad), HasSubstring("3 cells for 3 x 2 bins"));
  bad = j;
  bad[0]["cells"] = "0 1 2 x 4 5";
  CHECK_THROWS_WITH(heat_maps_from_json(bad), HasSubstring("cell 'x'"));
  bad = j;
  bad[0].erase("row_bins");
  CHECK_THROWS_WITH(heat_maps_from_json(bad), HasSubstring("'row_bins'"));
}

TEST_CASE("report maps: case attributes, and extras attached to the JSON report's cases by source, id and profile", "[app][maps]") {
  const Case c = make_pod(PodSpec{});
  const nlohmann::json info = case_info(c);
  CHECK(info["kind"] == "single");
  CHECK(info["dtype"] == "f16");
  CHECK(info["heads"] == "8/2");
  const auto f = info["features"].get<std::vector<std::string>>();
  CHECK(std::find(f.begin(), f.end(), "causal") != f.end());
  CHECK(std::find(f.begin(), f.end(), "gqa") != f.end());
  CHECK(std::find(f.begin(), f.end(), "rope") == f.end());

  KernelOutputs bad = rounded_reference(c);
  bad.out_d->set(3, bad.out_d->get(3) + 1.0);
  CaseResult good = judge(c, rounded_reference(c), {}, JudgeOptions{});
  CaseResult wrong = judge(c, bad, {}, JudgeOptions{});
  good.source = "a.h5";
  wrong.source = "b.h5";
  REQUIRE(wants_maps(wrong));
  CHECK_FALSE(wants_maps(good));
  ReportExtras ex;
  ex.add(good, c, rounded_reference(c));
  ex.add(wrong, c, bad);
  nlohmann::json rep = report_json({good, wrong}, summarize({good, wrong}, 0));
  ex.attach(rep);
  CHECK(rep["cases"][0]["case"]["kind"] == "single");
  CHECK_FALSE(rep["cases"][0].contains("heat_maps"));
  REQUIRE(rep["cases"][1].contains("heat_maps"));
  CHECK(rep["cases"][1]["heat_maps"].size() == 10);

  // a run carries the maps of its first max_map_cases failing cases only; later ones say so
  ReportExtras capped;
  capped.max_map_cases = 1;
  CaseResult wrong2 = wrong;
  wrong2.source = "c.h5";
  capped.add(wrong, c, bad);
  capped.add(wrong2, c, bad);
  nlohmann::json rep2 = report_json({wrong, wrong2}, summarize({wrong, wrong2}, 0));
  capped.attach(rep2);
  CHECK(rep2["cases"][0].contains("heat_maps"));
  CHECK_FALSE(rep2["cases"][1].contains("heat_maps"));
  CHECK(rep2["cases"][1].value("heat_maps_note", "").find("first 1 failing cases") != std::string::npos);
}
