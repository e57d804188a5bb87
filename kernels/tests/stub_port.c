/* A minimal "port" in plain C: a shared library implementing the podcheck kernel ABI that supports
 * nothing. kernels_tests loads it with dlopen (as `podcheck run --kernel-lib` does) to prove the ABI is
 * usable from C and that the loader resolves the entry points, reports the info and the reasons. */
#include "podcheck_kernel_abi.h"

static const char* g_reason = "";

const pod_kernel_info* podcheck_kernel_info(void) {
  static const pod_kernel_info info = {POD_ABI_VERSION, "stub-port", "0.1", "supports nothing (ABI test)"};
  return &info;
}

pod_status podcheck_kernel_supports(const pod_problem* p) {
  if (!p || p->abi_version != POD_ABI_VERSION) {
    g_reason = "stub-port: ABI version mismatch";
    return POD_INVALID;
  }
  g_reason = p->head_dim == 128 ? "stub-port: head_dim 128 is not supported" : "stub-port: nothing is supported";
  return POD_NOT_SUPPORTED;
}

pod_status podcheck_kernel_run(const pod_problem* p, void* stream) {
  (void)stream;
  return podcheck_kernel_supports(p);
}

const char* podcheck_kernel_last_error(void) { return g_reason; }
