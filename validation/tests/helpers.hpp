// Small hand-built cases and "kernels" for the validation tests: a good kernel is the float64 reference
// rounded once to the output dtypes (the best any kernel can do), and faults are planted on top of it.
#pragma once

#include "reference/case.hpp"
#include "reference/outputs.hpp"
#include "reference/reference.hpp"
#include "fixtures/case_builder.hpp"
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
  CaseRecipe cs;
  cs.id = "test_pod_seed" + std::to_string(s.seed);
  cs.seed = s.seed;
  cs.num_qo_heads = s.heads;
  cs.num_kv_heads = s.kv_heads;
  cs.head_dim = s.head_dim;
  cs.dtype_q = cs.dtype_kv = s.dtype;
  cs.dtype_o = cs.dtype_q;
  if (s.qo_p > 0) {
    SideRecipe p;
    p.paged = false;
    p.qo_lens = {s.qo_p};
    p.kv_lens = {s.kv_p};
    p.params.mask_mode = s.mask_p;
    cs.prefill = p;
  }
  if (!s.kv_d.empty()) {
    SideRecipe d;
    d.page_size = s.page_size;
    d.spare_pages = 3;
    d.qo_lens.assign(s.kv_d.size(), 1);
    d.kv_lens.assign(s.kv_d.begin(), s.kv_d.end());
    cs.decode = d;
  }
  return build_case(cs);
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

// A judged case as text for CAPTURE: status, message, each tensor's metrics and worst element, diagnosis.
inline std::string verdict_text(const validation::CaseResult& r) {
  std::string s = std::string(validation::status_name(r.status)) + " " + r.id + ": " + r.message;
  for (const auto& t : r.tensors) {
    s += "\n  " + t.name + (t.checked ? "" : " (not checked)") + " max_abs " + std::to_string(t.max_abs) +
         " tol_used " + std::to_string(t.tol_used) + " over_tol " + std::to_string(t.over_tol) + " nonfinite " +
         std::to_string(t.bad_nonfinite());
    if (t.worst) s += " @ " + t.worst->text();
  }
  for (const auto& d : r.diagnosis) s += "\n  diagnosis: " + d;
  return s;
}

}  // namespace podcheck::testhelp
