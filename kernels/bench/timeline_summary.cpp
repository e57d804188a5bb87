// Summary of a timeline launch (timeline_summary.hpp).
#include "kernels/bench/timeline_summary.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace podcheck::kernels {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

TimelineSummary summarize_timeline(const std::vector<ItemSpan>& spans) {
  TimelineSummary t;
  std::map<int, const ItemSpan*> life;  // per CTA
  for (const ItemSpan& s : spans) {
    if (s.t1 < s.t0) throw std::invalid_argument("timeline: a span ends before it starts");
    if (s.item < 0 && !life.emplace(s.cta, &s).second)
      throw std::invalid_argument("timeline: CTA " + std::to_string(s.cta) + " has two life spans");
  }
  if (life.empty()) throw std::invalid_argument("timeline: no CTA life spans");
  std::uint64_t t_begin = ~std::uint64_t(0), t_end = 0, last_entry = 0, first_exit = ~std::uint64_t(0);
  for (const auto& [cta, s] : life) {
    t_begin = std::min(t_begin, s->t0);
    t_end = std::max(t_end, s->t1);
    last_entry = std::max(last_entry, s->t0);
    first_exit = std::min(first_exit, s->t1);
  }
  auto us = [&](std::uint64_t x) { return double(x - t_begin) * 1e-3; };
  t.ctas = int(life.size());
  t.span_us = us(t_end);
  t.entry_skew_us = us(last_entry);
  t.first_exit_us = us(first_exit);
  // a worker: a CTA of the fused kernel, a warpgroup that runs items in pod_ws_kernel (side_role bits 2 and up)
  auto workers = [](const ItemSpan& s) { return std::max(1, s.side_role >> 2); };
  std::vector<double> dur[2];
  std::uint64_t last_end[2] = {0, 0};
  double busy = 0;
  for (const auto& [cta, s] : life) t.worker_us += workers(*s) * t.span_us;
  for (const ItemSpan& s : spans) {
    if (s.item < 0) continue;
    const auto it = life.find(s.cta);
    if (it == life.end() || s.t0 < it->second->t0 || s.t1 > it->second->t1)
      throw std::invalid_argument("timeline: an item span outside its CTA's life (CTA " + std::to_string(s.cta) + ")");
    const int side = s.side_role & 1, role = (s.side_role >> 1) & 1;
    SideTimeline& st = t.side[side];
    const double d = double(s.t1 - s.t0) * 1e-3;
    if (st.items == 0 || us(s.t0) < st.first_us) st.first_us = us(s.t0);
    ++st.items;
    st.stolen += role != side;
    st.busy_us += d * workers(s);
    busy += d * workers(s);
    dur[side].push_back(d);
    last_end[side] = std::max(last_end[side], s.t1);
  }
  double tail = 0;
  for (const auto& [cta, s] : life) tail += double(t_end - s->t1) * 1e-3;
  t.idle_fraction = t.worker_us > 0 ? 1.0 - busy / t.worker_us : 0;
  t.tail_fraction = t.span_us > 0 ? tail / (t.ctas * t.span_us) : 0;
  for (int side = 0; side < 2; ++side) {
    SideTimeline& st = t.side[side];
    st.last_us = st.items ? us(last_end[side]) : 0;
    st.median_us = median_of(dur[side]);
    st.max_us = dur[side].empty() ? 0 : *std::max_element(dur[side].begin(), dur[side].end());
  }
  // the SMs' clock: per CTA, the clocked span ends (clock64 against globaltimer) from the first to the last, at least
  // a microsecond apart
  std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> ends;  // per CTA: (t1, c1)
  for (const ItemSpan& s : spans)
    if (s.c1 != 0) ends[s.cta].emplace_back(s.t1, s.c1);
  std::vector<double> mhz;
  for (auto& [cta, e] : ends) {
    std::sort(e.begin(), e.end());
    if (e.size() >= 2 && e.back().first - e.front().first >= 1000 && e.back().second > e.front().second)
      mhz.push_back(double(e.back().second - e.front().second) * 1e3 / double(e.back().first - e.front().first));
  }
  if (!mhz.empty()) {
    t.clock_ctas = int(mhz.size());
    t.clock_mhz_median = median_of(mhz);
    t.clock_mhz_min = *std::min_element(mhz.begin(), mhz.end());
    t.clock_mhz_max = *std::max_element(mhz.begin(), mhz.end());
  }
  if (t.side[0].items && t.side[1].items) {
    const std::uint64_t until = std::min(last_end[0], last_end[1]);
    t.overlap_us = us(until);
    double in[2] = {0, 0};
    for (const ItemSpan& s : spans) {
      if (s.item < 0 || s.t0 >= until) continue;
      in[s.side_role & 1] += double(std::min(s.t1, until) - s.t0) * 1e-3 * workers(s);
    }
    for (int side = 0; side < 2; ++side)
      t.side[side].share_overlap = t.overlap_us > 0 ? in[side] * t.span_us / (t.overlap_us * t.worker_us) : 0;
  }
  return t;
}

std::string describe_timeline(const TimelineSummary& t) {
  char buf[1024];
  auto side = [&](const SideTimeline& s, const char* name) {
    char b[400];
    std::snprintf(b, sizeof b,
                  "%s %d items (%d stolen), %.1f%% of worker time, %.1f-%.1f us, item median %.1f max %.1f us, "
                  "%.0f%% of workers while both ran",
                  name, s.items, s.stolen, t.worker_us > 0 ? 100.0 * s.busy_us / t.worker_us : 0.0, s.first_us,
                  s.last_us, s.median_us, s.max_us, 100.0 * s.share_overlap);
    return std::string(b);
  };
  char clock[96] = "";
  if (t.clock_ctas > 0)
    std::snprintf(clock, sizeof clock, "; SM clock %.0f MHz (median of %d CTAs, %.0f-%.0f)", t.clock_mhz_median,
                  t.clock_ctas, t.clock_mhz_min, t.clock_mhz_max);
  std::snprintf(buf, sizeof buf,
                "timeline: %d CTAs (%d workers), %.1f us (entry skew %.1f, both sides until %.1f, first CTA done %.1f); "
                "idle %.1f%% of worker time (tail %.1f%% of CTA time)%s\n",
                t.ctas, t.span_us > 0 ? int(t.worker_us / t.span_us + 0.5) : t.ctas, t.span_us, t.entry_skew_us,
                t.overlap_us, t.first_exit_us, 100.0 * t.idle_fraction, 100.0 * t.tail_fraction, clock);
  return std::string(buf) + "    " + side(t.side[0], "prefill") + "\n    " + side(t.side[1], "decode") + "\n";
}

std::string spans_csv(int mode, const std::vector<ItemSpan>& spans, const PodPlan& plan, bool header) {
  std::string out =
      header ? "mode,side,item,cta,sm,role,warpgroups,t0_us,dur_us,kv_begin,kv_end,kv_visible,row_begin,nchunks,clk1"
             : "";
  if (header) {
    for (const char* name : kPhaseNames) out += std::string(",") + name;
    out += "\n";
  }
  std::uint64_t t_min = UINT64_MAX;
  for (const ItemSpan& s : spans) t_min = std::min(t_min, s.t0);
  char line[192];
  for (const ItemSpan& s : spans) {
    const int side = s.side_role & 1;
    const std::vector<WorkItem>& items = plan.side[side].items;
    const bool known = s.item >= 0 && s.item < int(items.size());
    const WorkItem w = known ? items[s.item] : WorkItem{-1, -1, -1, -1, -1, -1, -1, -1 + kTileKV};
    std::snprintf(line, sizeof line, "%d,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%d,%d,%d,%d,%d,%llu", mode, side, s.item, s.cta,
                  s.sm, (s.side_role >> 1) & 1, s.side_role >> 2, double(s.t0 - t_min) / 1e3, double(s.t1 - s.t0) / 1e3,
                  w.kv_begin, w.kv_end, w.cost - kTileKV, w.row_begin, w.nchunks, (unsigned long long)s.c1);
    out += line;
    for (std::int32_t p : s.ph) {  // us from the item's start, empty where not recorded
      out += ',';
      if (p != ItemSpan::kNoPhase) {
        std::snprintf(line, sizeof line, "%.3f", double(p) / 1e3);
        out += line;
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace podcheck::kernels
