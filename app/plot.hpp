// `podcheck plot TRACE --case ID -o map.png`: one case of a trace judged as replay judges it, and its heat
// maps of error / bound (the same the HTML report draws) written as one PNG for an issue or a pull request.
#pragma once

#include <string>

namespace podcheck::app {

struct PlotOptions {
  std::string trace, case_id, output;
  std::string profile;                // "" = the first profile the trace's expectations name, else intended
  std::string policy = "calibrated";
  bool force = false;
};

// Prints the case's verdict (as replay does) and the file written. Returns 0 when the PNG was written; throws
// UsageError / InputError (exit 2) for bad options, an unreadable trace or case, or a case with no recorded
// output to draw.
int run_plot(const PlotOptions& options);

}  // namespace podcheck::app
