// C++ face of podcheck's CUDA POD kernel: plan once, launch many times (benchmarks), plus the device
// facts the planner needs. The C ABI entry points (podcheck_kernel_*) are built on this.
#pragma once

#include "kernels/include/podcheck_kernel_abi.h"
#include "kernels/pod/pod_plan.hpp"

#include <memory>
#include <string>
#include <vector>

namespace podcheck::kernels {

inline constexpr const char* kKernelName = "podcheck-cuda";
inline constexpr const char* kKernelVersion = "v3.19";

// A planned launch with its device-side plan and workspace. Not copyable. Throws CudaError.
class PreparedPod {
 public:
  explicit PreparedPod(const pod_problem& problem);
  ~PreparedPod();
  PreparedPod(const PreparedPod&) = delete;
  PreparedPod& operator=(const PreparedPod&) = delete;

  // Enqueues: counter reset (memset), the fused kernel, and the LSE merge kernel when a request was split.
  void launch(void* stream) const;
  // One launch like launch() that also records when each CTA ran each item (%globaltimer), synchronised and
  // read back: one span per item and one per CTA (its life). Slower than launch() by a few atomics per item.
  std::vector<ItemSpan> launch_timeline(void* stream) const;
  const pod_run_stats& stats() const;
  const PodPlan& plan() const;
  // Which decode a launch of the split form (PODCHECK_CUDA_WS=3) runs: "group" (the group decode fed by tensor
  // copies), "warpgroups" and why not the group one, or "" for a launch not of that form.
  std::string split_decode() const;
  // A launch of the split form: its prefill SMs (PODCHECK_CUDA_PREFILL_SMS, else the split rule's); else 0.
  int split_prefill_sms() const;
  // A launch of the split form: where the split model (pod_plan's ws_split_ends, with the decode it runs) puts each
  // side's end at that count of prefill SMs; zeros for a launch not of that form.
  SplitEnds split_model() const;

  struct Impl;  // defined in pod_attention.cu

 private:
  std::unique_ptr<Impl> impl_;
};

// "podcheck-cuda v3.15 (git <describe>)" (kKernelName, kKernelVersion, git_describe()): trace provenance.
std::string build_version();
// `git describe --always --dirty --tags` of the tree this library was built from (generated on every build).
const char* git_describe();
// "NVIDIA H200 (sm_90, 132 SMs)" for the current device.
std::string device_description();
std::string driver_version();  // NVIDIA driver version (e.g. "580.159.04") when readable, else the CUDA driver API version

}  // namespace podcheck::kernels
