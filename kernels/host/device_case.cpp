// One case on the GPU (see device_case.hpp).
#include "kernels/host/device_case.hpp"

#include "kernels/host/cuda_check.hpp"

#include <cstring>

namespace podcheck::kernels {

namespace {
std::vector<std::uint8_t> poison_bytes(std::int64_t n, int elem_bytes, std::uint32_t pattern) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n) * elem_bytes);
  for (std::int64_t i = 0; i < n; ++i) std::memcpy(v.data() + i * elem_bytes, &pattern, elem_bytes);
  return v;
}
}  // namespace

void* DeviceCase::upload(const void* data, std::size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes > 0 ? bytes : 16));
  owned_.push_back(p);
  if (bytes > 0) CUDA_CHECK(cudaMemcpy(p, data, bytes, cudaMemcpyHostToDevice));
  return p;
}

DeviceCase::Buffer DeviceCase::make_output(const std::string& name, std::int64_t elems, int elem_bytes,
                                           std::uint32_t poison) {
  Buffer b;
  b.elems = elems;
  b.elem_bytes = elem_bytes;
  b.poison = poison;
  b.name = name;
  CUDA_CHECK(cudaMalloc(&b.base, static_cast<std::size_t>(elems + 2 * kGuardElems) * elem_bytes));
  owned_.push_back(b.base);
  return b;
}

DeviceCase::DeviceCase(const Case& c) : kase_(c) {
  pack_case(c, packed_);
  pod_problem& p = packed_.problem;
  const std::uint32_t opoison = c.dtype_o == DType::bfloat16 ? kPoisonBF16
                                : c.dtype_o == DType::float32 ? kPoisonF32 : kPoisonF16;
  for (int si = 0; si < 2; ++si) {
    PackedSide& ps = packed_.side[si];
    if (!ps.present) continue;
    pod_side& s = si == 0 ? p.prefill : p.decode;
    s.qo_indptr = static_cast<const std::int32_t*>(upload(ps.qo_indptr.data(), ps.qo_indptr.size() * 4));
    s.kv.indptr = static_cast<const std::int32_t*>(upload(ps.kv_indptr.data(), ps.kv_indptr.size() * 4));
    s.kv.indices = static_cast<const std::int32_t*>(upload(ps.kv_indices.data(), ps.kv_indices.size() * 4));
    s.kv.last_page_len = static_cast<const std::int32_t*>(upload(ps.last_page_len.data(), ps.last_page_len.size() * 4));
    s.q = upload(ps.q->bytes.data(), ps.q->bytes.size());
    const void* kd = upload(ps.k->bytes.data(), ps.k->bytes.size());
    s.kv.k = kd;
    if (ps.v == ps.k) {
      s.kv.v = static_cast<const char*>(kd) + ps.v_offset * static_cast<std::int64_t>(dtype_size(ps.k->dtype));
    } else {
      s.kv.v = upload(ps.v->bytes.data(), ps.v->bytes.size());
    }
    if (ps.mask) {
      s.custom_mask = static_cast<const std::uint8_t*>(upload(ps.mask->data(), ps.mask->size()));
      s.custom_mask_indptr = static_cast<const std::int64_t*>(upload(ps.mask_indptr.data(), ps.mask_indptr.size() * 8));
    }
    if (!ps.alibi_slopes.empty())
      s.alibi_slopes = static_cast<const float*>(upload(ps.alibi_slopes.data(), ps.alibi_slopes.size() * 4));
    const std::string nm = si == 0 ? "p" : "d";
    const int ob = static_cast<int>(dtype_size(c.dtype_o));
    out_[si] = make_output("out_" + nm, ps.rows * c.num_qo_heads * c.head_dim, ob, opoison);
    lse_[si] = make_output("lse_" + nm, ps.rows * c.num_qo_heads, 4, kPoisonF32);
    s.o = out_[si].payload();
    s.lse = static_cast<float*>(lse_[si].payload());
  }
  poison();
}

DeviceCase::~DeviceCase() {
  for (void* p : owned_) cudaFree(p);
}

void DeviceCase::poison() {
  for (int si = 0; si < 2; ++si)
    for (Buffer* b : {&out_[si], &lse_[si]}) {
      if (!b->base) continue;
      const auto bytes = poison_bytes(b->elems + 2 * kGuardElems, b->elem_bytes, b->poison);
      CUDA_CHECK(cudaMemcpy(b->base, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    }
}

std::vector<std::uint8_t> DeviceCase::read_all(const Buffer& b) const {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(b.elems + 2 * kGuardElems) * b.elem_bytes);
  CUDA_CHECK(cudaMemcpy(v.data(), b.base, v.size(), cudaMemcpyDeviceToHost));
  return v;
}

KernelOutputs DeviceCase::download() const {
  KernelOutputs out;
  for (int si = 0; si < 2; ++si) {
    if (!out_[si].base) continue;
    const PackedSide& ps = packed_.side[si];
    const SideKind kind = si == 0 ? SideKind::prefill : SideKind::decode;
    for (int w = 0; w < 2; ++w) {
      const Buffer& b = w == 0 ? out_[si] : lse_[si];
      const auto all = read_all(b);
      Tensor t;
      if (w == 0) {
        t.dtype = kase_.dtype_o;
        t.shape = {ps.rows, kase_.num_qo_heads, kase_.head_dim};
      } else {
        t.dtype = DType::float32;
        t.shape = {ps.rows, kase_.num_qo_heads};
      }
      t.bytes.assign(all.begin() + kGuardElems * b.elem_bytes, all.end() - kGuardElems * b.elem_bytes);
      (w == 0 ? out.out(kind) : out.lse(kind)) = std::move(t);
    }
  }
  return out;
}

std::string DeviceCase::check_guards() const {
  std::string report;
  for (int si = 0; si < 2; ++si)
    for (const Buffer* b : {&out_[si], &lse_[si]}) {
      if (!b->base) continue;
      const auto all = read_all(*b);
      std::int64_t bad = 0;
      const std::int64_t n = b->elems + 2 * kGuardElems;
      for (std::int64_t i = 0; i < n; ++i) {
        if (i >= kGuardElems && i < kGuardElems + b->elems) continue;
        std::uint32_t v = 0;
        std::memcpy(&v, all.data() + i * b->elem_bytes, b->elem_bytes);
        if (v != b->poison) ++bad;
      }
      if (bad) report += (report.empty() ? "" : "; ") + b->name + ": " + std::to_string(bad) + " guard elements overwritten";
    }
  return report;
}

}  // namespace podcheck::kernels
