// GPU probe of the wgmma building blocks (kernels/pod/wgmma_sm90.cuh), built for sm_90a only
// (kernels/tests/wgmma_probe.cu): S = Q K^T and O = P V on one warpgroup, with the operand layouts the sm_90a
// prefill path uses (the descriptors of desc_k_major / desc_mn_major), and S with Q from shared memory (WgmmaSS, what
// pod_ws_kernel uses under PODCHECK_WS_QSMEM), against exact host products.
#pragma once

#include <string>
#include <vector>

namespace podcheck::kernels::test {

struct WgmmaProbeResult {
  std::string what;      // e.g. "QK bf16 D128 N64"
  double max_abs_error;  // against the exact product (inputs are small multiples of 1/4: exact in fp32)
  long long unwritten;   // outputs left at their NaN poison
};

// Runs every probe on the current device (compute capability 9.0). Throws CudaError.
std::vector<WgmmaProbeResult> run_wgmma_probes();

}  // namespace podcheck::kernels::test
