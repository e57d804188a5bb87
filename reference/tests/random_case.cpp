#include "reference/tests/random_case.hpp"

namespace podcheck::testing {

RandomDraw random_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 17);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  RandomDraw out;
  std::string& sum = out.summary;
  CaseRecipe cs;
  cs.seed = seed;
  const int heads[][2] = {{1, 1}, {2, 1}, {4, 2}, {4, 4}, {6, 2}, {8, 1}, {3, 3}};
  const int hp = pick(7);
  cs.num_qo_heads = heads[hp][0];
  cs.num_kv_heads = heads[hp][1];
  const int dims[] = {2, 4, 8, 16, 32, 64};
  cs.head_dim = dims[pick(6)];
  const DType qd[] = {DType::float16, DType::bfloat16, DType::float32};
  const DType kd[] = {DType::float16, DType::bfloat16, DType::float8_e4m3fn, DType::float8_e5m2, DType::float32};
  cs.dtype_q = qd[pick(3)];
  cs.dtype_kv = kd[pick(5)];
  cs.dtype_o = cs.dtype_q;
  cs.q_amp = cs.k_amp = chance(0.2) ? 3.0 : 1.0;
  sum += "h" + std::to_string(cs.num_qo_heads) + "/" + std::to_string(cs.num_kv_heads) + " d" +
         std::to_string(cs.head_dim) + " " + std::string(dtype_name(cs.dtype_q)) + "/" +
         std::string(dtype_name(cs.dtype_kv));

  auto draw_side = [&](SideKind kind) {
    SideRecipe ss;
    const bool dense = kind == SideKind::prefill && chance(0.35);
    ss.paged = !dense;
    ss.layout = chance(0.5) ? Layout::NHD : Layout::HND;
    ss.stacked = ss.paged && chance(0.4);
    const int pss[] = {1, 5, 16};
    ss.page_size = pss[pick(3)];
    const int R = dense ? 1 : 1 + pick(kind == SideKind::decode ? 5 : 3);
    ss.qo_lens.clear();
    ss.kv_lens.clear();
    for (int r = 0; r < R; ++r) {
      const std::int64_t Q = kind == SideKind::decode ? 1 : (chance(0.1) ? 0 : 1 + pick(18));
      std::int64_t L = chance(0.08) ? 0 : 1 + pick(40);
      if (chance(0.15)) L = std::max<std::int64_t>(1, Q / 2);  // L < Q: fully masked causal rows
      ss.qo_lens.push_back(Q);
      ss.kv_lens.push_back(L);
    }
    SideParams& p = ss.params;
    const int mm = pick(3);
    p.mask_mode = mm == 0 ? MaskMode::none : mm == 1 ? MaskMode::causal : MaskMode::custom;
    ss.custom_empty_rows = chance(0.4);
    ss.custom_visible_quarters = chance(0.3) ? 1 : 3;
    if (chance(0.35)) p.window_left = pick(12);
    const int pe = pick(4);
    p.pos_encoding = pe == 1 ? PosEncoding::rope_llama : pe == 2 ? PosEncoding::alibi : PosEncoding::none;
    if (p.pos_encoding == PosEncoding::rope_llama && cs.head_dim % 2 != 0) p.pos_encoding = PosEncoding::none;
    if (p.pos_encoding == PosEncoding::rope_llama) {
      p.rope_theta = chance(0.5) ? 1e4 : 500.0;
      p.rope_scale = chance(0.5) ? 1.0 : 2.5;
    }
    if (p.pos_encoding == PosEncoding::alibi && chance(0.4)) {
      for (int h = 0; h < cs.num_qo_heads; ++h) p.alibi_slopes.push_back(0.05 * (h + 1));
    }
    if (chance(0.3)) p.logits_soft_cap = chance(0.5) ? 5.0 : 30.0;
    if (chance(0.3)) p.sm_scale = 0.05 + 0.5 * std::uniform_real_distribution<double>(0, 1)(rng);
    if (chance(0.3)) {
      p.q_scale = 0.5 + std::uniform_real_distribution<double>(0, 1)(rng);
      p.k_scale = 0.5 + std::uniform_real_distribution<double>(0, 1)(rng);
      p.v_scale = 0.5 + std::uniform_real_distribution<double>(0, 1)(rng);
    }
    sum += std::string(" ") + std::string(side_name(kind)) + "[" + (dense ? "dense" : "paged") + " " +
           std::string(layout_name(ss.layout)) + (ss.stacked ? " stacked" : "") + " ps" +
           std::to_string(ss.page_size) + " R" + std::to_string(R) + " " +
           std::string(mask_mode_name(p.mask_mode)) + " W" + std::to_string(p.window_left) + " " +
           std::string(pos_encoding_name(p.pos_encoding)) + " cap" + std::to_string(int(p.logits_soft_cap)) + "]";
    return ss;
  };
  const int kind = pick(4);
  if (kind != 1) cs.prefill = draw_side(SideKind::prefill);
  if (kind != 0) cs.decode = draw_side(SideKind::decode);
  out.kase = build_case(cs);

  // The LSE base is a property of the case; the one profile semantic is FlashInfer's ALiBi + soft cap quirk.
  if (chance(0.25)) {
    if (pick(2) == 0) {
      out.kase.lse_base = LseBase::base_e;
      sum += " lse_e";
    } else {
      out.sem.alibi_softcap_double_sm_scale = true;
      sum += " sem:alibi_cap_sm2";
    }
  }
  return out;
}

}  // namespace podcheck::testing
