// The driver's cuTensorMapEncodeTiled (its CUDA 12.0 form), reached through the runtime so that nothing links
// libcuda: what builds the tensor maps of the group decode (pod_attention.cu) and of podcheck_gather_bench.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

namespace podcheck::kernels {

// The function, or null where the lookup fails or the driver has no such entry point.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

}  // namespace podcheck::kernels
