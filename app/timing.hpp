// Wall time of the jobs' phases (steady clock), for their summaries.
#pragma once

#include <chrono>

namespace podcheck::app {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace podcheck::app
