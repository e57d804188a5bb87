// podcheck plot (plot.hpp).
#include "app/plot.hpp"

#include "app/errors.hpp"
#include "app/heat_plot.hpp"
#include "app/replay.hpp"
#include "app/report.hpp"
#include "app/report_maps.hpp"
#include "app/report_target.hpp"
#include "traces/trace_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace podcheck::app {

using namespace validation;

int run_plot(const PlotOptions& o) {
  Policy policy;
  std::optional<Profile> forced;
  try {
    policy = policy_from_name(o.policy);
    if (!o.profile.empty()) forced = profile_from_name(o.profile);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  check_report_target(o.output, o.force);
  // read in a child process (fixtures/isolated_read.hpp): a libhdf5 crash on a corrupt file is an input error
  ReadOptions ro_read;
  ro_read.want = [&](const std::string& id) { return id == o.case_id; };
  FileRead<Trace> read = read_trace_file(o.trace, ro_read);
  if (!read.ok()) throw InputError(read.error);
  if (read.cases.empty()) throw UsageError(fmt::format("no case '{}' in {}", o.case_id, o.trace));
  if (!read.cases.front().ok()) throw InputError(read.cases.front().error);
  const Trace t = std::move(*read.cases.front().value);
  const Profile profile = profiles_for(t, forced).front();

  ReplayOptions ro;
  ro.policy = policy;
  ro.artifacts.enabled = false;
  const CaseResult r = replay_trace(t, o.trace, profile, ro);
  print_case(stdout, r);

  std::vector<HeatMap> maps;
  try {
    maps = report_heat_maps(t.kase, t.observed, policy, profile);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: case '{}': cannot compute its heat maps: {}", o.trace, o.case_id, e.what()));
  }
  if (maps.empty())
    throw InputError(fmt::format("{}: case '{}': nothing to plot (no output with the reference's shape was recorded; "
                                 "run: {})", o.trace, o.case_id, r.run_status));
  std::vector<std::string> header = {
      r.id,
      fmt::format("profile {}, policy {}: {} ({})", profile_name(profile), policy_name(policy), status_name(r.status),
                  verdict_name(r.verdict)),
  };
  if (!r.diagnosis.empty()) header.push_back("diagnosis: " + r.diagnosis.front());
  const Image img = plot_figure(maps, header);
  write_text_file(o.output, encode_png(img), o.force);
  std::printf("plot: %s written (%d x %d pixels, %zu panels)\n", o.output.c_str(), img.width(), img.height(),
              panels_of(maps).size());
  return 0;
}

}  // namespace podcheck::app
