// Two deliberately broken ports for podcheck's own verdict tests (built as podcheck_faulty_crash.so and
// podcheck_faulty_guard.so). Recorded through `podcheck run` on a GPU, they give the golden traces of a
// crashed launch and of a guard-band overwrite (traces/golden/faulty-ports/), which replay must call failures:
//   crash  every launch stores through a wild device pointer: the synchronisation reports an illegal address,
//          and the CUDA context is lost for the rest of the process;
//   guard  every output element is written (zeros: wrong, but written) and one more element past the end of
//          each output tensor: podcheck's guard bands change.
// Every CUDA call's return code is checked; what fails is reported through podcheck_kernel_last_error.
#include "kernels/include/podcheck_kernel_abi.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#ifndef PODCHECK_FAULT_GUARD
#define PODCHECK_FAULT_GUARD 0
#endif

namespace {

thread_local std::string g_error;

__global__ void wild_store(float* p) { p[threadIdx.x * 1024] = 1.0f; }

// Zeroes rows x heads x dim elements at `o` (row and head strides in elements), then writes one element past
// the last one. 16-bit outputs: the pattern is the same bytes for float16 and bfloat16 zeros.
__global__ void zero_and_overrun(std::uint16_t* o, std::int64_t rows, int heads, int dim, std::int64_t srow,
                                 std::int64_t shead) {
  const std::int64_t n = rows * heads * dim;
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / (heads * dim), h = (i / dim) % heads, d = i % dim;
    o[r * srow + h * shead + d] = 0;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && n > 0) {
    const std::int64_t last = (rows - 1) * srow + (heads - 1) * shead + dim - 1;
    o[last + 1] = 0x7C00u;  // +inf in float16: past the end
  }
}

__global__ void lse_and_overrun(float* lse, std::int64_t rows, int heads, std::int64_t srow) {
  const std::int64_t n = rows * heads;
  for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    lse[(i / heads) * srow + i % heads] = 0.0f;
  if (blockIdx.x == 0 && threadIdx.x == 0 && n > 0) lse[(rows - 1) * srow + heads] = 1.0f;  // past the end
}

pod_status check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return POD_OK;
  g_error = std::string(what) + ": " + cudaGetErrorString(e);
  return POD_CUDA_ERROR;
}

pod_status guard_side(const pod_problem& p, const pod_side& s, cudaStream_t st) {
  if (!s.present) return POD_OK;
  const std::int64_t rows = s.qo_indptr_host[s.num_requests];
  if (rows == 0) return POD_OK;
  zero_and_overrun<<<64, 256, 0, st>>>(static_cast<std::uint16_t*>(s.o), rows, p.num_qo_heads, p.head_dim,
                                       s.o_stride_row, s.o_stride_head);
  if (pod_status r = check(cudaGetLastError(), "zero_and_overrun launch"); r != POD_OK) return r;
  if (s.lse) {
    lse_and_overrun<<<64, 256, 0, st>>>(s.lse, rows, p.num_qo_heads, s.lse_stride_row);
    if (pod_status r = check(cudaGetLastError(), "lse_and_overrun launch"); r != POD_OK) return r;
  }
  return POD_OK;
}

}  // namespace

extern "C" {

const pod_kernel_info* podcheck_kernel_info(void) {
  static const pod_kernel_info info = {
      POD_ABI_VERSION, PODCHECK_FAULT_GUARD ? "faulty-guard" : "faulty-crash", "1",
      PODCHECK_FAULT_GUARD ? "writes zeros and one element past each output (test port)"
                           : "stores through a wild pointer (test port)"};
  return &info;
}

pod_status podcheck_kernel_supports(const pod_problem* p) {
  g_error.clear();
  if (!p || p->abi_version != POD_ABI_VERSION) {
    g_error = "ABI version mismatch";
    return POD_INVALID;
  }
  if (p->dtype_o != POD_DTYPE_F16 && p->dtype_o != POD_DTYPE_BF16) {
    g_error = "16-bit outputs only";
    return POD_NOT_SUPPORTED;
  }
  return POD_OK;
}

pod_status podcheck_kernel_run(const pod_problem* p, void* stream) {
  if (pod_status r = podcheck_kernel_supports(p); r != POD_OK) return r;
  auto st = static_cast<cudaStream_t>(stream);
  if (!PODCHECK_FAULT_GUARD) {
    wild_store<<<1, 32, 0, st>>>(reinterpret_cast<float*>(std::uintptr_t{0x1000}));
    return check(cudaGetLastError(), "wild_store launch");
  }
  if (pod_status r = guard_side(*p, p->prefill, st); r != POD_OK) return r;
  return guard_side(*p, p->decode, st);
}

const char* podcheck_kernel_last_error(void) { return g_error.c_str(); }

}  // extern "C"
