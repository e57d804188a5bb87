// See wgmma_probe.hpp. Compiled for sm_90a only (kernels/CMakeLists.txt).
#include "kernels/host/cuda_check.hpp"
#include "kernels/pod/mma_sm80.cuh"
#include "kernels/pod/wgmma_sm90.cuh"
#include "kernels/tests/wgmma_probe.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>

namespace podcheck::kernels::test {
namespace {

using namespace podcheck::kernels::sm90;

using sm80::ldsm_x4;
using sm80::smem_u32;

// Stores rows x C (C a multiple of 64) 16-bit elements from global (row-major) as C / 64 swizzled
// [rows][64] blocks at `blk` (1024-byte aligned).
template <class T>
__device__ void store_swizzled(const T* g, int rows, int C, unsigned char* blk) {
  for (int c = threadIdx.x; c < rows * (C / 8); c += blockDim.x) {
    const int row = c / (C / 8), c8 = c % (C / 8);
    const uint4 v = *reinterpret_cast<const uint4*>(g + row * C + c8 * 8);
    *reinterpret_cast<uint4*>(blk + (c8 / 8) * rows * 128 + swz128(row, c8 % 8)) = v;
  }
}
// Stores rows x C elements into padded rows of C + 8 (the layout ldmatrix reads in pod_kernels.cuh).
template <class T>
__device__ void store_padded(const T* g, int rows, int C, T* s) {
  for (int c = threadIdx.x; c < rows * (C / 8); c += blockDim.x) {
    const int row = c / (C / 8), c8 = c % (C / 8);
    *reinterpret_cast<uint4*>(s + row * (C + 8) + c8 * 8) = *reinterpret_cast<const uint4*>(g + row * C + c8 * 8);
  }
}
__device__ unsigned char* align1024(unsigned char* p) {
  return reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(p) + 1023) & ~std::uintptr_t(1023));
}
// Writes a 64 x N accumulator (the per-warp m16n8 C fragments) to out [64][N].
template <int N>
__device__ void store_acc(const float* acc, float* out) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int j = 0; j < N / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      out[(16 * warp + gq + 8 * (e >> 1)) * N + 8 * j + 2 * tq + (e & 1)] = acc[4 * j + e];
}

// S [64][N] = Q [64][D] K [N][D]^T: A = Q fragments (ldmatrix, registers), B = K swizzled, K-major.
template <class T, int D, int N>
__global__ void __launch_bounds__(128) qk_probe(const T* q, const T* k, float* s) {
  extern __shared__ unsigned char smem[];
  T* Qs = reinterpret_cast<T*>(smem);
  unsigned char* Ks = align1024(smem + 64 * (D + 8) * sizeof(T));
  store_padded(q, 64, D, Qs);
  store_swizzled(k, N, D, Ks);
  fence_async_smem();
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;

  std::uint32_t a[D / 16][4];  // every k-step's Q fragment live until the wait (wgmma reads them late)
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) ldsm_x4(a[kk], Qs + (16 * warp + (lane & 15)) * (D + 8) + kk * 16 + (lane >> 4) * 8);
  wg_pin<N / 2>(acc);
  wg_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const std::uint64_t db = desc_k_major(smem_u32(Ks) + (kk / 4) * N * 128 + (kk % 4) * 32);
    Wgmma<T, N>::template run<0>(acc, a[kk], db, kk > 0);
  }
  wg_commit();
  wg_wait<0>();
  wg_pin<N / 2>(acc);
  wg_keep<D / 4>(&a[0][0]);
  store_acc<N>(acc, s);
}

// The same S with A = Q from shared memory too (WgmmaSS: Q swizzled, K-major, like K; no fragments in registers).
template <class T, int D, int N>
__global__ void __launch_bounds__(128) qk_ss_probe(const T* q, const T* k, float* s) {
  extern __shared__ unsigned char smem[];
  unsigned char* Qs = align1024(smem);
  unsigned char* Ks = Qs + 64 * D * sizeof(T);  // a multiple of 1024 bytes past Qs
  store_swizzled(q, 64, D, Qs);
  store_swizzled(k, N, D, Ks);
  fence_async_smem();
  __syncthreads();
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
  wg_pin<N / 2>(acc);
  wg_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const std::uint64_t da = desc_k_major(smem_u32(Qs) + (kk / 4) * 64 * 128 + (kk % 4) * 32);
    const std::uint64_t db = desc_k_major(smem_u32(Ks) + (kk / 4) * N * 128 + (kk % 4) * 32);
    WgmmaSS<T, N>::template run<0>(acc, da, db, kk > 0);
  }
  wg_commit();
  wg_wait<0>();
  wg_pin<N / 2>(acc);
  store_acc<N>(acc, s);
}

// O [64][D] = P [64][N] V [N][D]: A = P fragments (registers), B = V swizzled, MN-major (transposed).
template <class T, int D, int N>
__global__ void __launch_bounds__(128) pv_probe(const T* p, const T* v, float* o) {
  extern __shared__ unsigned char smem[];
  T* Ps = reinterpret_cast<T*>(smem);
  unsigned char* Vs = align1024(smem + 64 * (N + 8) * sizeof(T));
  store_padded(p, 64, N, Ps);
  store_swizzled(v, N, D, Vs);
  fence_async_smem();
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float acc[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) acc[i] = 0.f;

  std::uint32_t a[N / 16][4];
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk) ldsm_x4(a[kk], Ps + (16 * warp + (lane & 15)) * (N + 8) + kk * 16 + (lane >> 4) * 8);
  wg_pin<D / 2>(acc);
  wg_fence();
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk) {
    const std::uint64_t db = desc_mn_major(smem_u32(Vs) + kk * 16 * 128, N * 128);
    Wgmma<T, D>::template run<1>(acc, a[kk], db, kk > 0);
  }
  wg_commit();
  wg_wait<0>();
  wg_pin<D / 2>(acc);
  wg_keep<N / 4>(&a[0][0]);
  store_acc<D>(acc, o);
}

template <class T> T to_t(float x);
template <> __nv_bfloat16 to_t<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <> __half to_t<__half>(float x) { return __float2half(x); }

struct Dev {
  void* p = nullptr;
  explicit Dev(std::size_t bytes) { CUDA_CHECK(cudaMalloc(&p, bytes)); }
  ~Dev() { cudaFree(p); }
};

// Values in {-2, -1.75, ..., 2}: products and sums of up to 256 of them are exact in fp32.
std::vector<float> small_values(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<float> v(n);
  for (float& x : v) x = float(int(g() % 17) - 8) / 4.f;
  return v;
}

WgmmaProbeResult compare(const std::string& what, const std::vector<float>& ref, Dev& out) {
  const std::size_t n = ref.size();
  std::vector<float> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), out.p, n * sizeof(float), cudaMemcpyDeviceToHost));
  WgmmaProbeResult r{what, 0.0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(got[i])) ++r.unwritten;
    else r.max_abs_error = std::max(r.max_abs_error, double(std::fabs(got[i] - ref[i])));
  }
  return r;
}

// One probe kernel on one warpgroup: its shared memory granted, the output poisoned (NaN), launched, synchronised, and
// judged against the exact product.
template <class T, class Kernel>
WgmmaProbeResult launch_probe(const std::string& what, Kernel kernel, int smem, const Dev& a, const Dev& b, Dev& out,
                              const std::vector<float>& ref) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CUDA_CHECK(cudaMemset(out.p, 0xFF, ref.size() * sizeof(float)));  // NaN poison
  kernel<<<1, 128, smem>>>(static_cast<const T*>(a.p), static_cast<const T*>(b.p), static_cast<float*>(out.p));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  return compare(what, ref, out);
}

template <class T, int D, int N>
void probe(std::vector<WgmmaProbeResult>& results, const char* tname) {
  const std::string shape = std::string(tname) + " D" + std::to_string(D) + " N" + std::to_string(N);
  // QK
  {
    const std::vector<float> q = small_values(64 * D, 1), k = small_values(N * D, 2);
    std::vector<T> qh(q.size()), kh(k.size());
    for (std::size_t i = 0; i < q.size(); ++i) qh[i] = to_t<T>(q[i]);
    for (std::size_t i = 0; i < k.size(); ++i) kh[i] = to_t<T>(k[i]);
    std::vector<float> ref(64 * N, 0.f);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < N; ++j) {
        double a = 0;
        for (int d = 0; d < D; ++d) a += double(q[i * D + d]) * k[j * D + d];
        ref[i * N + j] = float(a);
      }
    Dev dq(qh.size() * sizeof(T)), dk(kh.size() * sizeof(T)), ds(ref.size() * sizeof(float));
    CUDA_CHECK(cudaMemcpy(dq.p, qh.data(), qh.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dk.p, kh.data(), kh.size() * sizeof(T), cudaMemcpyHostToDevice));
    results.push_back(launch_probe<T>("QK " + shape, qk_probe<T, D, N>,
                                      64 * (D + 8) * int(sizeof(T)) + 1024 + N * D * int(sizeof(T)), dq, dk, ds, ref));
    if constexpr (N == 64 || N == 128)  // WgmmaSS's shapes
      results.push_back(launch_probe<T>("QK-SS " + shape, qk_ss_probe<T, D, N>, 1024 + (64 + N) * D * int(sizeof(T)),
                                        dq, dk, ds, ref));
  }
  // PV
  {
    const std::vector<float> p = small_values(64 * N, 3), v = small_values(N * D, 4);
    std::vector<T> ph(p.size()), vh(v.size());
    for (std::size_t i = 0; i < p.size(); ++i) ph[i] = to_t<T>(p[i]);
    for (std::size_t i = 0; i < v.size(); ++i) vh[i] = to_t<T>(v[i]);
    std::vector<float> ref(64 * D, 0.f);
    for (int i = 0; i < 64; ++i)
      for (int d = 0; d < D; ++d) {
        double a = 0;
        for (int j = 0; j < N; ++j) a += double(p[i * N + j]) * v[j * D + d];
        ref[i * D + d] = float(a);
      }
    Dev dp(ph.size() * sizeof(T)), dv(vh.size() * sizeof(T)), dout(ref.size() * sizeof(float));
    CUDA_CHECK(cudaMemcpy(dp.p, ph.data(), ph.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv.p, vh.data(), vh.size() * sizeof(T), cudaMemcpyHostToDevice));
    results.push_back(launch_probe<T>("PV " + shape, pv_probe<T, D, N>,
                                      64 * (N + 8) * int(sizeof(T)) + 1024 + N * D * int(sizeof(T)), dp, dv, dout, ref));
  }
}

}  // namespace

std::vector<WgmmaProbeResult> run_wgmma_probes() {
  std::vector<WgmmaProbeResult> r;
  probe<__nv_bfloat16, 64, 64>(r, "bf16");
  probe<__nv_bfloat16, 128, 64>(r, "bf16");
  probe<__nv_bfloat16, 128, 32>(r, "bf16");
  probe<__nv_bfloat16, 128, 128>(r, "bf16");  // the 128-key tile (PODCHECK_WS_QSMEM with PODCHECK_WS_TK_PREFILL=128)
  probe<__half, 128, 64>(r, "f16");
  probe<__half, 128, 128>(r, "f16");
  return r;
}

}  // namespace podcheck::kernels::test
