#include "reference/tests/random_case.hpp"

#include <algorithm>
#include <numeric>

namespace podcheck::testing {
namespace {

std::vector<std::uint8_t> pack_bits(const std::vector<bool>& b) {
  std::vector<std::uint8_t> out((b.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b[i]) out[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
  return out;
}

Tensor random_tensor(std::mt19937_64& rng, DType t, std::vector<std::int64_t> shape, double scale) {
  std::normal_distribution<double> n(0.0, scale);
  Tensor x = Tensor::zeros(t, std::move(shape));
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, n(rng));
  return x;
}

Side build_side(const CaseSpec& cs, const SideSpec& ss, std::mt19937_64& rng) {
  Side s;
  const int R = static_cast<int>(ss.qo_lens.size());
  s.qo_indptr.assign(1, 0);
  for (auto q : ss.qo_lens) s.qo_indptr.push_back(s.qo_indptr.back() + static_cast<std::int32_t>(q));
  s.q = random_tensor(rng, cs.dtype_q, {s.qo_indptr.back(), cs.num_qo_heads, cs.head_dim}, cs.value_scale);
  s.kv.paged = ss.paged;
  s.kv.layout = ss.layout;
  const std::int64_t Hkv = cs.num_kv_heads, D = cs.head_dim;
  if (!ss.paged) {
    const std::int64_t L = ss.kv_lens.at(0);
    std::vector<std::int64_t> shape = ss.layout == Layout::NHD ? std::vector<std::int64_t>{L, Hkv, D}
                                                               : std::vector<std::int64_t>{Hkv, L, D};
    s.kv.k = random_tensor(rng, cs.dtype_kv, shape, cs.value_scale);
    s.kv.v = random_tensor(rng, cs.dtype_kv, shape, 1.0);
  } else {
    PageTable& pt = s.kv.pages;
    pt.page_size = ss.page_size;
    pt.indptr.assign(1, 0);
    for (int r = 0; r < R; ++r) {
      const std::int64_t L = ss.kv_lens.at(r);
      const std::int64_t n = (L + ss.page_size - 1) / ss.page_size;
      pt.indptr.push_back(pt.indptr.back() + static_cast<std::int32_t>(n));
      pt.last_page_len.push_back(n == 0 ? 0 : static_cast<std::int32_t>(L - (n - 1) * ss.page_size));
    }
    const std::int64_t P = pt.indptr.back() + ss.spare_pages;
    std::vector<std::int32_t> perm(static_cast<std::size_t>(P));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    pt.indices.assign(perm.begin(), perm.begin() + pt.indptr.back());
    const std::int64_t ps = ss.page_size;
    if (ss.stacked) {
      std::vector<std::int64_t> shape = ss.layout == Layout::NHD ? std::vector<std::int64_t>{P, 2, ps, Hkv, D}
                                                                 : std::vector<std::int64_t>{P, 2, Hkv, ps, D};
      s.kv.kv_stacked = random_tensor(rng, cs.dtype_kv, shape, cs.value_scale);
    } else {
      std::vector<std::int64_t> shape = ss.layout == Layout::NHD ? std::vector<std::int64_t>{P, ps, Hkv, D}
                                                                 : std::vector<std::int64_t>{P, Hkv, ps, D};
      s.kv.k = random_tensor(rng, cs.dtype_kv, shape, cs.value_scale);
      s.kv.v = random_tensor(rng, cs.dtype_kv, shape, 1.0);
    }
  }
  s.params = ss.params;
  if (s.params.mask_mode == MaskMode::custom) {
    std::bernoulli_distribution bit(ss.custom_density);
    s.params.custom_mask.clear();
    s.params.custom_mask_indptr.assign(1, 0);
    for (int r = 0; r < R; ++r) {
      const std::int64_t Q = ss.qo_lens[r], L = s.kv_len(r);
      std::vector<bool> b(static_cast<std::size_t>(Q * L));
      for (std::int64_t i = 0; i < Q; ++i) {
        const bool empty = ss.custom_empty_rows && i % 3 == 1;
        for (std::int64_t j = 0; j < L; ++j) b[i * L + j] = !empty && bit(rng);
      }
      auto packed = pack_bits(b);
      s.params.custom_mask.insert(s.params.custom_mask.end(), packed.begin(), packed.end());
      s.params.custom_mask_indptr.push_back(s.params.custom_mask_indptr.back() +
                                            static_cast<std::int64_t>(packed.size()));
    }
  }
  return s;
}

}  // namespace

Case build_case(const CaseSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  Case c;
  c.id = "test_case_seed" + std::to_string(spec.seed);
  c.num_qo_heads = spec.num_qo_heads;
  c.num_kv_heads = spec.num_kv_heads;
  c.head_dim = spec.head_dim;
  c.dtype_q = spec.dtype_q;
  c.dtype_kv = spec.dtype_kv;
  c.dtype_o = spec.dtype_o;
  c.seed = spec.seed;
  c.distribution = "normal";
  if (spec.prefill) c.prefill = build_side(spec, *spec.prefill, rng);
  if (spec.decode) c.decode = build_side(spec, *spec.decode, rng);
  return c;
}

RandomDraw random_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 17);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  RandomDraw out;
  std::string& sum = out.summary;
  CaseSpec cs;
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
  cs.value_scale = chance(0.2) ? 3.0 : 1.0;
  sum += "h" + std::to_string(cs.num_qo_heads) + "/" + std::to_string(cs.num_kv_heads) + " d" +
         std::to_string(cs.head_dim) + " " + std::string(dtype_name(cs.dtype_q)) + "/" +
         std::string(dtype_name(cs.dtype_kv));

  auto draw_side = [&](SideKind kind) {
    SideSpec ss;
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
    ss.custom_density = chance(0.3) ? 0.15 : 0.7;
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

  Semantics& sem = out.sem;
  if (chance(0.25)) {
    switch (pick(8)) {
      case 0: sem.lse_base = LseBase::base_e; sum += " sem:lse_e"; break;
      case 1: sem.causal_top_left = true; sum += " sem:top_left"; break;
      case 2: sem.gqa_modulo = true; sum += " sem:gqa_mod"; break;
      case 3: sem.ignore_page_table = true; sum += " sem:no_pages"; break;
      case 4: sem.window_shift = 1; sum += " sem:window+1"; break;
      case 5: sem.alibi_softcap_double_sm_scale = true; sum += " sem:alibi_cap_sm2"; break;
      case 6: sem.alibi_true_position = true; sum += " sem:alibi_true_pos"; break;
      case 7: sem.v_scale_in_output = false; sum += " sem:no_v_scale"; break;
    }
  }
  return out;
}

}  // namespace podcheck::testing
