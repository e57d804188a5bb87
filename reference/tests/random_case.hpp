// Test-only builders of small random POD cases (the real generator lives in fixtures/). Every feature the
// reference knows can be switched on; random_case(seed) draws a mix of them deterministically.
#pragma once

#include "reference/case.hpp"
#include "reference/reference.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace podcheck::testing {

struct SideSpec {
  bool paged = true;
  Layout layout = Layout::NHD;
  bool stacked = false;
  int page_size = 16;
  std::vector<std::int64_t> qo_lens{1};
  std::vector<std::int64_t> kv_lens{16};
  int spare_pages = 2;  // unused pages in the pool (so that page ids are a real permutation)
  SideParams params;    // mask bits are filled by custom_density when mask_mode is custom
  double custom_density = 0.7;
  bool custom_empty_rows = false;  // some custom-mask rows all zero
};

struct CaseSpec {
  int num_qo_heads = 4, num_kv_heads = 2, head_dim = 16;
  DType dtype_q = DType::float16, dtype_kv = DType::float16, dtype_o = DType::float16;
  std::optional<SideSpec> prefill, decode;
  double value_scale = 1.0;  // inputs ~ value_scale * N(0, 1)
  std::uint64_t seed = 1;
};

Case build_case(const CaseSpec& spec);

// A random case over every feature (sizes kept small) and matching random semantics flips.
struct RandomDraw {
  Case kase;
  Semantics sem;
  std::string summary;  // readable list of the drawn features
};
RandomDraw random_case(std::uint64_t seed);

}  // namespace podcheck::testing
