// Hand-built POD cases (see test_cases.hpp).
#include "kernels/tests/test_cases.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace podcheck::kernels::test {

namespace {

Tensor random_tensor(DType t, std::vector<std::int64_t> shape, std::mt19937_64& rng, double sd) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::normal_distribution<double> nd(0.0, sd);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = nd(rng);
  return Tensor::from_doubles(t, std::move(shape), v);
}

Side build_side(const CaseSpec& c, const SideSpec& s, std::mt19937_64& rng) {
  Side side;
  const int nreq = static_cast<int>(s.qo_lens.size());
  side.qo_indptr.assign(1, 0);
  for (int q : s.qo_lens) side.qo_indptr.push_back(side.qo_indptr.back() + q);
  side.q = random_tensor(c.dtype_q, {side.qo_indptr.back(), c.heads, c.head_dim}, rng, 1.0);
  KvStorage& kv = side.kv;
  kv.layout = c.layout;
  const double kvsd = (c.dtype_kv == DType::float8_e4m3fn || c.dtype_kv == DType::float8_e5m2) ? 4.0 : 1.0;
  if (!s.paged) {
    const std::int64_t L = s.kv_lens.at(0);
    std::vector<std::int64_t> shape = c.layout == Layout::NHD ? std::vector<std::int64_t>{L, c.kv_heads, c.head_dim}
                                                              : std::vector<std::int64_t>{c.kv_heads, L, c.head_dim};
    kv.k = random_tensor(c.dtype_kv, shape, rng, kvsd);
    kv.v = random_tensor(c.dtype_kv, shape, rng, kvsd);
  } else {
    kv.paged = true;
    PageTable& pt = kv.pages;
    pt.page_size = c.page_size;
    pt.indptr.assign(1, 0);
    int total = 0;
    for (int L : s.kv_lens) {
      const int np = (L + c.page_size - 1) / c.page_size;
      total += np;
      pt.indptr.push_back(total);
      pt.last_page_len.push_back(L == 0 ? 1 : L - (np - 1) * c.page_size);
    }
    const int num_pages = total + 3;  // a few pages nobody uses
    std::vector<std::int32_t> perm(num_pages);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    pt.indices.assign(perm.begin(), perm.begin() + total);
    const std::int64_t P = num_pages, ps = c.page_size, H = c.kv_heads, D = c.head_dim;
    if (s.stacked) {
      std::vector<std::int64_t> shape = c.layout == Layout::NHD ? std::vector<std::int64_t>{P, 2, ps, H, D}
                                                                : std::vector<std::int64_t>{P, 2, H, ps, D};
      kv.kv_stacked = random_tensor(c.dtype_kv, shape, rng, kvsd);
    } else {
      std::vector<std::int64_t> shape = c.layout == Layout::NHD ? std::vector<std::int64_t>{P, ps, H, D}
                                                                : std::vector<std::int64_t>{P, H, ps, D};
      kv.k = random_tensor(c.dtype_kv, shape, rng, kvsd);
      kv.v = random_tensor(c.dtype_kv, shape, rng, kvsd);
    }
  }
  SideParams& p = side.params;
  p.mask_mode = s.mask;
  p.window_left = s.window_left;
  p.q_scale = s.q_scale;
  p.k_scale = s.k_scale;
  p.v_scale = s.v_scale;
  if (s.mask == MaskMode::custom) {
    std::bernoulli_distribution bit(s.custom_density);
    p.custom_mask_indptr.assign(1, 0);
    for (int r = 0; r < nreq; ++r) {
      const std::int64_t nbits = std::int64_t(s.qo_lens[r]) * s.kv_lens[r];
      const std::int64_t nbytes = (nbits + 7) / 8;
      const std::size_t base = p.custom_mask.size();
      p.custom_mask.resize(base + nbytes, 0);
      for (std::int64_t b = 0; b < nbits; ++b)
        if (bit(rng)) p.custom_mask[base + b / 8] |= std::uint8_t(1u << (b % 8));
      p.custom_mask_indptr.push_back(static_cast<std::int64_t>(p.custom_mask.size()));
    }
  }
  return side;
}

}  // namespace

Case build_case(const CaseSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  Case c;
  c.id = spec.name;
  c.num_qo_heads = spec.heads;
  c.num_kv_heads = spec.kv_heads;
  c.head_dim = spec.head_dim;
  c.dtype_q = spec.dtype_q;
  c.dtype_kv = spec.dtype_kv;
  c.dtype_o = spec.dtype_q;
  c.lse_base = spec.lse_base;
  c.seed = spec.seed;
  c.distribution = "normal";
  if (spec.prefill.present) c.prefill = build_side(spec, spec.prefill, rng);
  if (spec.decode.present) c.decode = build_side(spec, spec.decode, rng);
  return c;
}

}  // namespace podcheck::kernels::test
