// What a timeline launch (PreparedPod::launch_timeline) says about one fused launch: how the CTAs' time went to
// each side, when each queue ran dry, how much of the grid's time was idle and where. CUDA-free (host-tested).
#pragma once

#include "kernels/pod/pod_plan.hpp"

#include <string>
#include <vector>

namespace podcheck::kernels {

struct SideTimeline {
  int items = 0;
  int stolen = 0;           // items run by CTAs whose role was the other side
  double busy_us = 0;       // worker-microseconds spent on this side's items
  double first_us = 0;      // first item's start, from the kernel's start
  double last_us = 0;       // last item's end
  double median_us = 0, max_us = 0;  // item durations
  double share_overlap = 0;  // mean fraction of the workers on this side while both sides had items running
};

struct TimelineSummary {
  int ctas = 0;
  double span_us = 0;        // first CTA entry to last CTA exit
  double entry_skew_us = 0;  // last CTA entry - first
  double overlap_us = 0;     // until the earlier of the two sides' last item end (both sides running)
  double first_exit_us = 0;  // the first CTA to find both queues empty
  // A worker: a CTA of the fused kernel, or a warpgroup of pod_ws_kernel that runs items (ItemSpan::side_role); an
  // item's time counts once per warpgroup that ran it.
  double worker_us = 0;      // sum over CTAs of their workers x span
  double idle_fraction = 0;  // of worker_us: time in no item (start skew, queue pops, the tail)
  double tail_fraction = 0;  // of ctas x span: from each CTA's exit to the end
  SideTimeline side[2];      // 0 prefill, 1 decode
  // The SMs' clock while the launch ran: per CTA, its spans' clock64 ends against their globaltimer ends, from the
  // first to the last (ItemSpan::c1; a CTA with fewer than two clocked ends has none); over the CTAs that have one.
  int clock_ctas = 0;
  double clock_mhz_median = 0, clock_mhz_min = 0, clock_mhz_max = 0;
};

// Throws std::invalid_argument when the spans are not one life span per CTA plus item spans inside them.
TimelineSummary summarize_timeline(const std::vector<ItemSpan>& spans);
// One paragraph (two lines, indented) for the bench report.
std::string describe_timeline(const TimelineSummary& t);
// The raw spans as CSV lines (the header line first when `header`), for fits of item time against item size
// (`PODCHECK_BENCH_SPANS`, kernels/tools/spans_fit.py): mode (the bench's launch: 0 fused, 1 prefill alone, 2 decode
// alone), side, item (-1: a CTA's life), cta, sm, role, warpgroups (ItemSpan::side_role's fields), t0_us (from the
// earliest span's start), dur_us, then the item's fields from `plan`: kv_begin, kv_end, kv_visible (the keys of that
// chunk its rows see: the planner's cost less its fixed part), row_begin, nchunks; -1 for a life or an index the
// plan does not hold; then clk1, the SM's clock64 at the span's end (ItemSpan::c1, raw: each SM counts from its own
// origin; 0 where not recorded); then the prefill items' phases (ItemSpan::ph, kPhaseNames) in us from the item's
// start, empty where not recorded.
std::string spans_csv(int mode, const std::vector<ItemSpan>& spans, const PodPlan& plan, bool header);

}  // namespace podcheck::kernels
