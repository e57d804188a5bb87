// Test-only builder of small POD cases with random inputs, shared by the test suites of reference/, validation/
// and kernels/ (the real generator lives in fixtures/; these tests do not depend on it). Every feature of the
// case model can be switched on; draws come from std::mt19937_64(seed) in a fixed order (per side: Q, the page
// permutation, K, V, the custom mask bits), so a spec always gives the same case.
#pragma once

#include "reference/case.hpp"

#include <cstdint>
#include <optional>
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
  LseBase lse_base = LseBase::base2;
  double value_scale = 1.0;             // Q and K ~ value_scale * N(0, 1), V ~ N(0, 1)
  std::optional<double> kv_value_scale; // when set: K and V ~ kv_value_scale * N(0, 1) (Q keeps value_scale)
  std::uint64_t seed = 1;
  std::string id;                       // "" -> "test_case_seed<seed>"
};

Case build_case(const CaseSpec& spec);

Case build_case(const CaseSpec& spec);

}  // namespace podcheck::testing
