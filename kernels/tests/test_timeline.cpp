// No GPU: the timeline summary of a fused launch (kernels/bench/timeline_summary.hpp) on spans worked out by hand.
#include "kernels/bench/timeline_summary.hpp"
#include "testing/catch.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

using namespace podcheck::kernels;

namespace {
bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }
// A span in microseconds from an arbitrary origin (the summary measures from the first CTA entry).
// wgs: pod_ws_kernel's warpgroups that ran the item (or, for a life, that run items); 0: the fused kernel's (one)
ItemSpan span(double t0_us, double t1_us, int cta, int item, int side, int role, int wgs = 0) {
  const std::uint64_t base = 5'000'000'000ull;
  return ItemSpan{base + std::uint64_t(t0_us * 1000), base + std::uint64_t(t1_us * 1000), cta, cta % 2, item,
                  side | (role << 1) | (wgs << 2)};
}
}  // namespace

TEST_CASE("timeline summary: each side's CTA time, stolen items, idle and tail, shares while both ran",
          "[kernels][host][bench]") {
  // CTA 0 (prefill role): two prefill items, then steals a decode item, exits at 95 us. CTA 1 (decode role): two
  // decode items until 100 us. Both enter at 10 us (the origin).
  const std::vector<ItemSpan> spans = {
      span(10, 105, 0, -1, 0, 0), span(10, 110, 1, -1, 1, 1),  // lives
      span(11, 51, 0, 0, 0, 0),   span(51, 71, 0, 1, 0, 0),   span(71, 100, 0, 3, 1, 0),
      span(12, 62, 1, 0, 1, 1),   span(62, 110, 1, 1, 1, 1),
  };
  const TimelineSummary t = summarize_timeline(spans);
  CHECK(t.ctas == 2);
  CHECK(near(t.span_us, 100));
  CHECK(near(t.entry_skew_us, 0));
  CHECK(near(t.first_exit_us, 95));
  CHECK(near(t.tail_fraction, 5.0 / 200));
  CHECK(near(t.idle_fraction, 1.0 - (40 + 20 + 29 + 50 + 48) / 200.0));
  CHECK(t.side[0].items == 2);
  CHECK(t.side[0].stolen == 0);
  CHECK(near(t.side[0].busy_us, 60));
  CHECK(near(t.side[0].first_us, 1));
  CHECK(near(t.side[0].last_us, 61));
  CHECK(near(t.side[0].median_us, 30));
  CHECK(near(t.side[0].max_us, 40));
  CHECK(t.side[1].items == 3);
  CHECK(t.side[1].stolen == 1);
  CHECK(near(t.side[1].busy_us, 127));
  CHECK(near(t.side[1].median_us, 48));
  CHECK(near(t.side[1].last_us, 100));
  // both sides ran until 61 us: prefill 60 CTA-us of 122, decode 50 + 9 (CTA 0's stolen item starts at 61)
  CHECK(near(t.overlap_us, 61));
  CHECK(near(t.side[0].share_overlap, 60.0 / 122));
  CHECK(near(t.side[1].share_overlap, 59.0 / 122));
  const std::string d = describe_timeline(t);
  CHECK(d.find("2 CTAs (2 workers), 100.0 us") != std::string::npos);
  CHECK(d.find("decode 3 items (1 stolen)") != std::string::npos);
}

TEST_CASE("timeline summary of pod_ws_kernel: items weighted by the warpgroups that ran them", "[kernels][host][bench]") {
  // SMs split by side. CTA 0 (prefill, 2 item-running warpgroups): two prefill items run by both consumers, then each
  // consumer one decode item; exits at 95 us. CTA 1 (decode, 3 warpgroups): five decode items, 3 at a time.
  const std::vector<ItemSpan> spans = {
      span(0, 95, 0, -1, 0, 0, 2), span(0, 100, 1, -1, 1, 1, 3),  // lives
      span(0, 40, 0, 0, 0, 0, 2),  span(40, 60, 0, 1, 0, 0, 2),      // prefill, both consumers
      span(60, 90, 0, 7, 1, 0, 1), span(60, 95, 0, 8, 1, 0, 1),      // decode, one consumer each
      span(0, 50, 1, 0, 1, 1, 1),  span(0, 50, 1, 1, 1, 1, 1),  span(0, 100, 1, 2, 1, 1, 1),
      span(50, 100, 1, 3, 1, 1, 1), span(50, 90, 1, 4, 1, 1, 1),
  };
  const TimelineSummary t = summarize_timeline(spans);
  CHECK(t.ctas == 2);
  CHECK(near(t.worker_us, 5 * 100));
  CHECK(near(t.side[0].busy_us, 40 * 2 + 20 * 2));
  CHECK(near(t.side[1].busy_us, 30 + 35 + 50 + 50 + 100 + 50 + 40));
  CHECK(near(t.idle_fraction, 1.0 - 475.0 / 500));
  CHECK(near(t.tail_fraction, 5.0 / 200));  // of CTA time: CTA 0 leaves 5 us early
  CHECK(t.side[1].stolen == 2);
  // both sides until 60 us: prefill 120 worker-us of 300, decode 50 + 50 + 60 + 10 + 10
  CHECK(near(t.overlap_us, 60));
  CHECK(near(t.side[0].share_overlap, 120.0 / 300));
  CHECK(near(t.side[1].share_overlap, 180.0 / 300));
  const std::string d = describe_timeline(t);
  CHECK(d.find("2 CTAs (5 workers), 100.0 us") != std::string::npos);
  CHECK(d.find("idle 5.0% of worker time (tail 2.5% of CTA time)") != std::string::npos);
}

TEST_CASE("timeline summary refuses spans that are not one life per CTA with items inside", "[kernels][host][bench]") {
  std::vector<ItemSpan> two_lives = {span(0, 10, 0, -1, 0, 0), span(0, 10, 0, -1, 0, 0)};
  CHECK_THROWS_AS(summarize_timeline(two_lives), std::invalid_argument);
  std::vector<ItemSpan> outside = {span(0, 10, 0, -1, 0, 0), span(5, 12, 0, 0, 0, 0)};
  CHECK_THROWS_AS(summarize_timeline(outside), std::invalid_argument);
  std::vector<ItemSpan> no_life = {span(0, 10, 0, 0, 0, 0)};
  CHECK_THROWS_AS(summarize_timeline(no_life), std::invalid_argument);
  std::vector<ItemSpan> backwards = {span(0, 10, 0, -1, 0, 0), span(6, 5, 0, 0, 0, 0)};
  CHECK_THROWS_AS(summarize_timeline(backwards), std::invalid_argument);
}

TEST_CASE("timeline spans as CSV: times from the earliest start, the item's chunk from the plan",
          "[kernels][host][bench]") {
  PodPlan plan;
  // prefill item 0: rows 128.. of request 0, KV [0, 2048) of which its rows see 160 keys (cost = 160 + kTileKV)
  plan.side[0].items.push_back(WorkItem{0, 3, 128, 0, 2048, 0, 1, 160 + kTileKV});
  plan.side[1].items.push_back(WorkItem{5, 1, 0, 512, 1024, 1, 4, 512 + kTileKV});
  const std::vector<ItemSpan> spans = {
      span(10, 40, 7, -1, 0, 1, 3),  // CTA 7's life: role 1 (decode), warpgroups 3
      span(11, 14.5, 7, 0, 0, 0, 2),
      span(20, 30, 7, 0, 1, 1, 1),
      span(31, 32, 7, 9, 1, 1, 1),  // an index the plan does not hold
  };
  std::vector<ItemSpan> clocked = spans;
  clocked[2].c1 = 123456789012ull;  // the SM's clock at the span's end, raw (0: not recorded)
  // the prefill item's phases, ns from its start (the producer's item and Q before it: negative); two not recorded
  const std::int32_t ph[ItemSpan::kPhases] = {250, 1500, 3000, -2000, -1250, ItemSpan::kNoPhase, ItemSpan::kNoPhase};
  std::copy(ph, ph + ItemSpan::kPhases, clocked[1].ph);
  const std::string csv = spans_csv(1, clocked, plan, true);
  CHECK(csv ==
        "mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks,clk1,"
        "c_ready,c_q,c_tiles,p_item,p_q,p_tile0,p_last\n"
        "1,0,-1,7,1,1,3,0.000,30.000,-1,-1,-1,-1,-1,0,,,,,,,\n"
        "1,0,0,7,1,0,2,1.000,3.500,0,2048,160,128,1,0,0.250,1.500,3.000,-2.000,-1.250,,\n"
        "1,1,0,7,1,1,1,10.000,10.000,512,1024,512,0,4,123456789012,,,,,,,\n"
        "1,1,9,7,1,1,1,21.000,1.000,-1,-1,-1,-1,-1,0,,,,,,,\n");
  CHECK(spans_csv(0, {}, plan, false).empty());
}

TEST_CASE("timeline summary: the SMs' clock from each CTA's span ends (globaltimer and clock64)",
          "[kernels][host][bench]") {
  // three CTAs at 1,500, 1,700 and 1,800 MHz over their span ends (clock64 counts from an arbitrary per-SM origin);
  // CTA 3 has one clocked end only, and CTA 4 none: neither has a rate
  const double mhz[3] = {1500, 1700, 1800};
  std::vector<ItemSpan> spans;
  for (int c = 0; c < 5; ++c) {
    spans.push_back(span(0, 100, c, -1, 0, 0));
    spans.push_back(span(0, 30, c, 0, 0, 0));
    spans.push_back(span(30, 80, c, 1, 0, 0));
  }
  for (int c = 0; c < 3; ++c) {
    const std::uint64_t origin = 1'000'000'000ull * (c + 1);
    spans[3 * c].c1 = origin + std::uint64_t(100 * mhz[c]);      // the life's end at 100 us
    spans[3 * c + 1].c1 = origin + std::uint64_t(30 * mhz[c]);   // 30 us
    spans[3 * c + 2].c1 = origin + std::uint64_t(80 * mhz[c]);   // 80 us
  }
  spans[3 * 3].c1 = 42;
  TimelineSummary t = summarize_timeline(spans);
  CHECK(t.clock_ctas == 3);
  CHECK(std::fabs(t.clock_mhz_median - 1700) < 1e-6);
  CHECK(std::fabs(t.clock_mhz_min - 1500) < 1e-6);
  CHECK(std::fabs(t.clock_mhz_max - 1800) < 1e-6);
  CHECK(describe_timeline(t).find("SM clock 1700 MHz (median of 3 CTAs, 1500-1800)") != std::string::npos);
  // no clocked spans (a module without clock64 in its spans): no rate, and the report says nothing of it
  for (ItemSpan& s : spans) s.c1 = 0;
  t = summarize_timeline(spans);
  CHECK(t.clock_ctas == 0);
  CHECK(describe_timeline(t).find("SM clock") == std::string::npos);
}
