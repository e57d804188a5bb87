// Hand-built POD cases for the kernels tests: a per-case spec (one layout and page size for both sides, the
// kernels tests' defaults) mapped onto a CaseRecipe and built by the one case builder (fixtures/case_builder.hpp).
#pragma once

#include "reference/case.hpp"

#include <string>
#include <vector>

namespace podcheck::kernels::test {

struct SideSpec {
  bool present = false;
  bool paged = true;                // false: dense single request (prefill only)
  std::vector<int> qo_lens;         // per request
  std::vector<int> kv_lens;         // per request
  MaskMode mask = MaskMode::none;
  int window_left = -1;
  bool stacked = false;
  double q_scale = 1, k_scale = 1, v_scale = 1;
  double custom_density = 0.5;      // custom mask: probability a bit is set, to the nearest quarter (0: all rows empty)
};

struct CaseSpec {
  std::string name;
  DType dtype_q = DType::float16, dtype_kv = DType::float16;
  int heads = 8, kv_heads = 2, head_dim = 128, page_size = 16;
  Layout layout = Layout::NHD;
  LseBase lse_base = LseBase::base2;
  SideSpec prefill, decode;
  unsigned seed = 1;
};

Case build_case(const CaseSpec& spec);

}  // namespace podcheck::kernels::test
