// Small hand-built cases and "kernels" for the validation tests: a good kernel is the float64 reference
// rounded once to the output dtypes (the best any kernel can do), and faults are planted on top of it.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"
#include "reference/reference.hpp"
#include "testing/catch.hpp"
#include "validation/judge.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <random>
#include <vector>

namespace podcheck::testhelp {

inline Tensor random_tensor(DType t, std::vector<std::int64_t> shape, std::mt19937_64& rng, double amp = 1.0) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::normal_distribution<double> nd(0.0, amp);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = nd(rng);
  return Tensor::from_doubles(t, std::move(shape), v);
}

struct PodSpec {
  DType dtype = DType::float16;
  int heads = 8, kv_heads = 2, head_dim = 64;
  int qo_p = 19, kv_p = 40;  // qo_p = 0: no prefill side
  MaskMode mask_p = MaskMode::causal;
  std::vector<int> kv_d = {5, 33, 16, 70};  // empty: no decode side
  int page_size = 16;
  std::uint64_t seed = 1;
};

// Single POD: dense NHD prefill + paged NHD decode over shuffled pages (3 spare pages).
inline Case make_pod(const PodSpec& s) {
  std::mt19937_64 rng(s.seed);
  Case c;
  c.id = "test_pod_seed" + std::to_string(s.seed);
  c.num_qo_heads = s.heads;
  c.num_kv_heads = s.kv_heads;
  c.head_dim = s.head_dim;
  c.dtype_q = c.dtype_kv = c.dtype_o = s.dtype;
  const int H = s.heads, Hk = s.kv_heads, D = s.head_dim;
  if (s.qo_p > 0) {
    Side p;
    p.qo_indptr = {0, s.qo_p};
    p.q = random_tensor(s.dtype, {s.qo_p, H, D}, rng);
    p.kv.paged = false;
    p.kv.layout = Layout::NHD;
    p.kv.k = random_tensor(s.dtype, {s.kv_p, Hk, D}, rng);
    p.kv.v = random_tensor(s.dtype, {s.kv_p, Hk, D}, rng);
    p.params.mask_mode = s.mask_p;
    c.prefill = std::move(p);
  }
  if (!s.kv_d.empty()) {
    Side d;
    const int B = static_cast<int>(s.kv_d.size());
    d.qo_indptr.resize(B + 1);
    std::iota(d.qo_indptr.begin(), d.qo_indptr.end(), 0);
    d.q = random_tensor(s.dtype, {B, H, D}, rng);
    int pages = 3;
    for (int L : s.kv_d) pages += (L + s.page_size - 1) / s.page_size;
    std::vector<std::int32_t> ids(pages);
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    d.kv.paged = true;
    d.kv.layout = Layout::NHD;
    d.kv.pages.page_size = s.page_size;
    d.kv.pages.indptr = {0};
    int next = 0;
    for (int L : s.kv_d) {
      const int n = (L + s.page_size - 1) / s.page_size;
      for (int k = 0; k < n; ++k) d.kv.pages.indices.push_back(ids[next++]);
      d.kv.pages.indptr.push_back(static_cast<std::int32_t>(d.kv.pages.indices.size()));
      d.kv.pages.last_page_len.push_back(L - (n - 1) * s.page_size);
    }
    d.kv.k = random_tensor(s.dtype, {pages, s.page_size, Hk, D}, rng);
    d.kv.v = random_tensor(s.dtype, {pages, s.page_size, Hk, D}, rng);
    c.decode = std::move(d);
  }
  return c;
}

// The best a kernel can do: the reference (under `sem`) rounded once to dtype_o / float32.
inline KernelOutputs rounded_reference(const Case& c, const Semantics& sem = {}) {
  const PodResult r = reference_fast(c, sem);
  KernelOutputs o;
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    const SideResult* s = r.side(k);
    if (!s) continue;
    o.out(k) = Tensor::from_doubles(c.dtype_o, {s->rows, s->heads, s->head_dim}, s->out);
    o.lse(k) = Tensor::from_doubles(DType::float32, {s->rows, s->heads}, s->lse);
  }
  return o;
}

inline std::int64_t out_index(const Case& c, std::int64_t row, int head, int dim) {
  return (row * c.num_qo_heads + head) * c.head_dim + dim;
}

// The report of one output tensor ("out_p", "lse_d", ...) of a judged case; fails the test when absent.
inline const validation::TensorReport& tensor(const validation::CaseResult& r, const std::string& name) {
  for (const auto& t : r.tensors)
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  return r.tensors.front();
}

}  // namespace podcheck::testhelp
