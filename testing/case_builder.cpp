// Test-only case builder (case_builder.hpp).
#include "testing/case_builder.hpp"

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
  const double k_scale = cs.kv_value_scale.value_or(cs.value_scale), v_scale = cs.kv_value_scale.value_or(1.0);
  if (!ss.paged) {
    const std::int64_t L = ss.kv_lens.at(0);
    std::vector<std::int64_t> shape = ss.layout == Layout::NHD ? std::vector<std::int64_t>{L, Hkv, D}
                                                               : std::vector<std::int64_t>{Hkv, L, D};
    s.kv.k = random_tensor(rng, cs.dtype_kv, shape, k_scale);
    s.kv.v = random_tensor(rng, cs.dtype_kv, shape, v_scale);
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
      s.kv.kv_stacked = random_tensor(rng, cs.dtype_kv, shape, k_scale);
    } else {
      std::vector<std::int64_t> shape = ss.layout == Layout::NHD ? std::vector<std::int64_t>{P, ps, Hkv, D}
                                                                 : std::vector<std::int64_t>{P, Hkv, ps, D};
      s.kv.k = random_tensor(rng, cs.dtype_kv, shape, k_scale);
      s.kv.v = random_tensor(rng, cs.dtype_kv, shape, v_scale);
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
  c.id = spec.id.empty() ? "test_case_seed" + std::to_string(spec.seed) : spec.id;
  c.num_qo_heads = spec.num_qo_heads;
  c.num_kv_heads = spec.num_kv_heads;
  c.head_dim = spec.head_dim;
  c.dtype_q = spec.dtype_q;
  c.dtype_kv = spec.dtype_kv;
  c.dtype_o = spec.dtype_o;
  c.lse_base = spec.lse_base;
  c.seed = spec.seed;
  c.distribution = "normal";
  if (spec.prefill) c.prefill = build_side(spec, *spec.prefill, rng);
  if (spec.decode) c.decode = build_side(spec, *spec.decode, rng);
  return c;
}

}  // namespace podcheck::testing
