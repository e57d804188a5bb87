// random_case(seed): a small random POD case over every feature the reference knows (LSE base included), with
// the profile semantic sometimes set, drawn deterministically (built with fixtures/case_builder.hpp).
#pragma once

#include "reference/reference.hpp"
#include "fixtures/case_builder.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace podcheck::testing {

// A random case over every feature (sizes kept small) and the semantics to compute it under.
struct RandomDraw {
  Case kase;
  Semantics sem;
  std::string summary;  // readable list of the drawn features
};
RandomDraw random_case(std::uint64_t seed);

}  // namespace podcheck::testing
