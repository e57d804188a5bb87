// GPU test of the sm_90a building blocks (kernels/pod/wgmma_sm90.cuh) through the probe kernels of
// kernels/tests/wgmma_probe.cu. Hidden tag: it runs only when asked (`kernels_tests "[.wgmma]"`,
// device_run.sh step `wgmma`), in a process of its own, since a wrong descriptor can leave the CUDA context
// unusable for whatever runs after it. Without a compute capability 9.0 GPU it is skipped, never passed.
#include "kernels/tests/wgmma_probe.hpp"
#include "testing/catch.hpp"

#include <cuda_runtime.h>

#include <cstdio>

using namespace podcheck::kernels;

TEST_CASE("wgmma building blocks: register or shared-memory A, swizzled K-major and transposed B, accumulator layout",
          "[gpu][.wgmma]") {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) PODCHECK_SKIP("no GPU");
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) PODCHECK_SKIP("not a compute capability 9.0 GPU");
  const auto results = test::run_wgmma_probes();
  REQUIRE(!results.empty());
  for (const auto& r : results) {
    std::printf("wgmma probe: %-22s max |error| %g, unwritten %lld\n", r.what.c_str(), r.max_abs_error, r.unwritten);
    INFO(r.what);
    CHECK(r.unwritten == 0);
    CHECK(r.max_abs_error == 0.0);
  }
}
