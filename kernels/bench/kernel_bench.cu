// podcheck bench kernel (see kernel_bench.hpp). Inputs are generated on the device (hash-based, never
// zeros), so the large decode caches cost no host time.
#include "kernels/bench/kernel_bench.hpp"
#include "kernels/host/cuda_check.hpp"
#include "kernels/pod/pod_launch.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>

namespace podcheck::kernels {

namespace {

#define CUBLAS_CHECK(call)                                                                       \
  do {                                                                                           \
    cublasStatus_t st_ = (call);                                                                 \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                            \
      throw CudaError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #call ": " + \
                      cublasGetStatusString(st_));                                               \
  } while (0)

__global__ void fill_bf16(__nv_bfloat16* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n; i += (std::size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ (seed * 0x9E3779B9u) ^ (unsigned)(i >> 32);
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    const float u1 = (h & 0xFFFF) / 65536.f, u2 = (h >> 16) / 65536.f;
    p[i] = __float2bfloat16((u1 + u2 - 1.f) * 2.4f);  // mean 0, sd ~1
  }
}

struct DevBuf {
  void* p = nullptr;
  DevBuf() = default;
  explicit DevBuf(std::size_t bytes) { CUDA_CHECK(cudaMalloc(&p, bytes)); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() {
    if (p) cudaFree(p);
  }
};

void fill(void* p, std::size_t elems, unsigned seed) {
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), elems, seed);
  CUDA_CHECK(cudaGetLastError());
}

template <class T>
void* upload(const std::vector<T>& v, std::vector<std::unique_ptr<DevBuf>>& keep) {
  keep.push_back(std::make_unique<DevBuf>(std::max<std::size_t>(v.size() * sizeof(T), 16)));
  CUDA_CHECK(cudaMemcpy(keep.back()->p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return keep.back()->p;
}

struct Shape {
  std::string name;
  int qp, lp;       // prefill query rows, KV length (dense, causal, bottom-right aligned)
  int batch, ld;    // decode requests, KV length each
};

constexpr int H = 32, HK = 8, D = 128, PS = 16;

// One input set (both sides) and its problem.
struct InputSet {
  std::vector<std::unique_ptr<DevBuf>> keep;
  std::vector<std::int32_t> qo_p, kvptr_p, last_p, qo_d, kvptr_d, last_d;
  pod_problem prob{};
};

std::unique_ptr<InputSet> make_set(const Shape& s, unsigned seed) {
  auto set = std::make_unique<InputSet>();
  auto& k = set->keep;
  auto alloc = [&](std::size_t elems, bool random) {
    k.push_back(std::make_unique<DevBuf>(elems * 2));
    if (random) fill(k.back()->p, elems, seed++);
    return k.back()->p;
  };
  pod_problem& p = set->prob;
  p.abi_version = POD_ABI_VERSION;
  p.num_qo_heads = H;
  p.num_kv_heads = HK;
  p.head_dim = D;
  p.dtype_q = p.dtype_kv = p.dtype_o = POD_DTYPE_BF16;
  // prefill: dense single request, one page holding the sequence
  pod_side& pf = p.prefill;
  pf.present = 1;
  pf.num_requests = 1;
  set->qo_p = {0, s.qp};
  set->kvptr_p = {0, 1};
  set->last_p = {s.lp};
  pf.qo_indptr = static_cast<const std::int32_t*>(upload(set->qo_p, k));
  pf.qo_indptr_host = set->qo_p.data();
  pf.q = alloc(std::size_t(s.qp) * H * D, true);
  pf.q_stride_row = H * D;
  pf.q_stride_head = D;
  pf.kv.k = alloc(std::size_t(s.lp) * HK * D, true);
  pf.kv.v = alloc(std::size_t(s.lp) * HK * D, true);
  pf.kv.k_stride_page = pf.kv.v_stride_page = 0;
  pf.kv.k_stride_slot = pf.kv.v_stride_slot = HK * D;
  pf.kv.k_stride_head = pf.kv.v_stride_head = D;
  pf.kv.page_size = s.lp;
  pf.kv.indptr = static_cast<const std::int32_t*>(upload(set->kvptr_p, k));
  pf.kv.indices = static_cast<const std::int32_t*>(upload(std::vector<std::int32_t>{0}, k));
  pf.kv.last_page_len = static_cast<const std::int32_t*>(upload(set->last_p, k));
  pf.kv.indptr_host = set->kvptr_p.data();
  pf.kv.last_page_len_host = set->last_p.data();
  pf.mask_mode = POD_MASK_CAUSAL;
  pf.window_left = -1;
  pf.sm_scale = 1.0f / std::sqrt(float(D));
  pf.q_scale = pf.k_scale = pf.v_scale = 1.0f;
  pf.o = alloc(std::size_t(s.qp) * H * D, false);
  pf.o_stride_row = H * D;
  pf.o_stride_head = D;
  k.push_back(std::make_unique<DevBuf>(std::size_t(s.qp) * H * 4));
  pf.lse = static_cast<float*>(k.back()->p);
  pf.lse_stride_row = H;
  // decode: paged, NHD, pages shuffled
  pod_side& dc = p.decode;
  dc = pf;
  dc.mask_mode = POD_MASK_NONE;
  const int ppr = (s.ld + PS - 1) / PS;
  const int pages = s.batch * ppr;
  set->qo_d.resize(s.batch + 1);
  set->kvptr_d.resize(s.batch + 1);
  for (int r = 0; r <= s.batch; ++r) {
    set->qo_d[r] = r;
    set->kvptr_d[r] = r * ppr;
  }
  set->last_d.assign(s.batch, s.ld - (ppr - 1) * PS);
  std::vector<std::int32_t> idx(pages);
  std::iota(idx.begin(), idx.end(), 0);
  std::shuffle(idx.begin(), idx.end(), std::mt19937(seed));
  dc.num_requests = s.batch;
  dc.qo_indptr = static_cast<const std::int32_t*>(upload(set->qo_d, k));
  dc.qo_indptr_host = set->qo_d.data();
  dc.q = alloc(std::size_t(s.batch) * H * D, true);
  dc.kv.k = alloc(std::size_t(pages) * PS * HK * D, true);
  dc.kv.v = alloc(std::size_t(pages) * PS * HK * D, true);
  dc.kv.k_stride_page = dc.kv.v_stride_page = std::int64_t(PS) * HK * D;
  dc.kv.k_stride_slot = dc.kv.v_stride_slot = HK * D;
  dc.kv.k_stride_head = dc.kv.v_stride_head = D;
  dc.kv.page_size = PS;
  dc.kv.indptr = static_cast<const std::int32_t*>(upload(set->kvptr_d, k));
  dc.kv.indices = static_cast<const std::int32_t*>(upload(idx, k));
  dc.kv.last_page_len = static_cast<const std::int32_t*>(upload(set->last_d, k));
  dc.kv.indptr_host = set->kvptr_d.data();
  dc.kv.last_page_len_host = set->last_d.data();
  dc.o = alloc(std::size_t(s.batch) * H * D, false);
  k.push_back(std::make_unique<DevBuf>(std::size_t(s.batch) * H * 4));
  dc.lse = static_cast<float*>(k.back()->p);
  return set;
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

// Median time of fn(rep) over reps after warm-up, with CUDA events around each call.
template <class F>
double time_ms(int warmup, int reps, F&& fn) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) fn(i);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(a));
    fn(warmup + i);
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t);
}

}  // namespace

BenchReport run_kernel_bench(const BenchOptions& o) {
  BenchReport rep;
  rep.device = device_description();
  rep.version = build_version();
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  int l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));

  {  // ceiling 1: device-to-device copy of 2 GiB (bytes read + written)
    const std::size_t bytes = std::size_t(2) << 30;
    DevBuf src(bytes), dst(bytes);
    fill(src.p, bytes / 2, 7);
    const double ms = time_ms(3, 10, [&](int) { CUDA_CHECK(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice)); });
    rep.copy_tbps = 2.0 * bytes / (ms * 1e-3) / 1e12;
  }
  {  // ceiling 2: cuBLAS bf16 GEMM 8192^3, fp32 accumulate, random inputs
    const int n = 8192;
    DevBuf a(std::size_t(n) * n * 2), b(std::size_t(n) * n * 2), c(std::size_t(n) * n * 2);
    fill(a.p, std::size_t(n) * n, 11);
    fill(b.p, std::size_t(n) * n, 12);
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    const float alpha = 1.f, beta = 0.f;
    const double ms = time_ms(3, 10, [&](int) {
      CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.p, CUDA_R_16BF, n, b.p, CUDA_R_16BF, n,
                                &beta, c.p, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    });
    cublasDestroy(h);
    rep.gemm_tflops = 2.0 * n * double(n) * n / (ms * 1e-3) / 1e12;
  }

  const Shape shapes[] = {
      {"p2048/2048c + d128x2048", 2048, 2048, 128, 2048},
      {"p1024@8192c + d64x4096", 1024, 8192, 64, 4096},
      {"p512/4096c + d256x1024", 512, 4096, 256, 1024},
  };
  for (const Shape& s : shapes) {
    BenchRow row;
    row.name = s.name;
    // Work: prefill causal bottom-right (row i sees lp - qp + i + 1 keys), decode full.
    double vis = 0;
    for (int i = 0; i < s.qp; ++i) vis += s.lp - s.qp + i + 1;
    row.flops_p = 4.0 * D * H * vis;
    row.flops_d = 4.0 * D * H * double(s.ld) * s.batch;
    row.bytes_p = 2.0 * (2.0 * s.qp * H * D + 2.0 * s.lp * HK * D) + 4.0 * s.qp * H;
    row.bytes_d = 2.0 * (2.0 * s.batch * H * D + 2.0 * double(s.batch) * s.ld * HK * D) + 4.0 * s.batch * H;
    row.flops = row.flops_p + row.flops_d;
    row.bytes = row.bytes_p + row.bytes_d;
    const int sets = std::clamp(int(std::ceil(4.0 * l2 / row.bytes)), 2, 8);
    row.rotation_sets = sets;
    std::vector<std::unique_ptr<InputSet>> in;
    for (int i = 0; i < sets; ++i) in.push_back(make_set(s, 100 + 17 * i));
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int mode = 0; mode < 3; ++mode) {  // 0 fused, 1 prefill alone, 2 decode alone
      std::vector<std::unique_ptr<PreparedPod>> prepared;
      for (auto& set : in) {
        set->prob.only_side = mode;
        prepared.push_back(std::make_unique<PreparedPod>(set->prob));
      }
      const double ms = time_ms(o.warmup, o.reps, [&](int i) { prepared[i % sets]->launch(nullptr); });
      (mode == 0 ? row.fused_ms : mode == 1 ? row.prefill_ms : row.decode_ms) = ms;
      if (mode == 0) {
        const pod_run_stats& st = prepared[0]->stats();
        row.scheduling = "grid " + std::to_string(st.grid_ctas) + ", items p/d " + std::to_string(st.items_prefill) +
                         "/" + std::to_string(st.items_decode) + ", splits p/d " +
                         std::to_string(st.max_splits_prefill) + "/" + std::to_string(st.max_splits_decode);
      }
    }
    rep.rows.push_back(row);
  }
  return rep;
}

void print_bench(const BenchReport& r, std::FILE* f) {
  std::fprintf(f, "podcheck bench kernel: %s on %s\n", r.version.c_str(), r.device.c_str());
  std::fprintf(f, "ceilings measured in this run: D2D copy %.2f TB/s (read+write), cuBLAS bf16 GEMM %.0f TFLOP/s\n",
               r.copy_tbps, r.gemm_tflops);
  std::fprintf(f, "shapes: bf16, 32 qo / 8 kv heads, D128, decode paged (page 16, NHD, pages shuffled), prefill dense causal\n");
  std::fprintf(f, "%-26s %9s %9s %9s %9s %8s %8s %6s %7s %6s\n", "case", "fused ms", "pref ms", "dec ms", "serial",
               "fus/ser", "TFLOP/s", "%gemm", "TB/s", "%copy");
  for (const BenchRow& w : r.rows) {
    const double serial = w.prefill_ms + w.decode_ms;
    const double tf = w.flops / (w.fused_ms * 1e-3) / 1e12, tb = w.bytes / (w.fused_ms * 1e-3) / 1e12;
    std::fprintf(f, "%-26s %9.3f %9.3f %9.3f %9.3f %8.2f %8.1f %5.1f%% %7.2f %5.1f%%\n", w.name.c_str(), w.fused_ms,
                 w.prefill_ms, w.decode_ms, serial, w.fused_ms / serial, tf, 100 * tf / r.gemm_tflops, tb,
                 100 * tb / r.copy_tbps);
  }
  std::fprintf(f, "per side alone (achieved):\n");
  for (const BenchRow& w : r.rows)
    std::fprintf(f, "  %-26s prefill %.1f TFLOP/s (%.1f%% gemm) | decode %.2f TB/s (%.1f%% copy) | %s, %d input sets\n",
                 w.name.c_str(), w.flops_p / (w.prefill_ms * 1e-3) / 1e12,
                 100 * w.flops_p / (w.prefill_ms * 1e-3) / 1e12 / r.gemm_tflops, w.bytes_d / (w.decode_ms * 1e-3) / 1e12,
                 100 * w.bytes_d / (w.decode_ms * 1e-3) / 1e12 / r.copy_tbps, w.scheduling.c_str(), w.rotation_sets);
}

}  // namespace podcheck::kernels
