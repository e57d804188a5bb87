// Hand-built POD cases (see test_cases.hpp): the kernel tests' spec mapped onto the one case builder (fixtures).
#include "kernels/tests/test_cases.hpp"

#include "fixtures/case_builder.hpp"

namespace podcheck::kernels::test {

namespace {

SideRecipe side_spec(const CaseSpec& c, const SideSpec& s) {
  SideRecipe t;
  t.paged = s.paged;
  t.layout = c.layout;
  t.stacked = s.stacked;
  t.page_size = c.page_size;
  t.qo_lens.assign(s.qo_lens.begin(), s.qo_lens.end());
  t.kv_lens.assign(s.kv_lens.begin(), s.kv_lens.end());
  t.spare_pages = 3;  // a few pages nobody uses
  t.params.mask_mode = s.mask;
  t.params.window_left = s.window_left;
  t.params.q_scale = s.q_scale;
  t.params.k_scale = s.k_scale;
  t.params.v_scale = s.v_scale;
  t.custom_visible_quarters = static_cast<int>(s.custom_density * 4 + 0.5);
  return t;
}

}  // namespace

Case build_case(const CaseSpec& spec) {
  CaseRecipe t;
  t.id = spec.name;
  t.seed = spec.seed;
  t.num_qo_heads = spec.heads;
  t.num_kv_heads = spec.kv_heads;
  t.head_dim = spec.head_dim;
  t.dtype_q = spec.dtype_q;
  t.dtype_o = spec.dtype_q;
  t.dtype_kv = spec.dtype_kv;
  t.lse_base = spec.lse_base;
  // fp8 KV drawn wider so that its coarse grid is exercised (q stays N(0, 1))
  t.k_amp = t.v_amp = is_float8(spec.dtype_kv) ? 4.0 : 1.0;
  if (spec.prefill.present) t.prefill = side_spec(spec, spec.prefill);
  if (spec.decode.present) t.decode = side_spec(spec, spec.decode);
  return build_case(t);
}

}  // namespace podcheck::kernels::test
