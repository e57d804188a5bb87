// Case (reference/case.hpp) -> pod_problem (kernels/include/podcheck_kernel_abi.h), on the host.
// pack_case() fills every stride, dtype, page table and parameter; tensor pointers are left NULL (the
// DeviceCase in device_case.hpp uploads and fills them). Pure C++: the CPU tests check it without a GPU.
#pragma once

#include "kernels/include/podcheck_kernel_abi.h"
#include "reference/case.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace podcheck::kernels {

// Host copies behind one side's pod_side, plus where its bytes come from.
struct PackedSide {
  bool present = false;
  std::vector<std::int32_t> qo_indptr, kv_indptr, kv_indices, last_page_len;
  std::vector<std::int64_t> mask_indptr;
  const Tensor* q = nullptr;
  const Tensor* k = nullptr;      // tensor holding K (kv_stacked when stacked)
  const Tensor* v = nullptr;      // tensor holding V (same tensor as k when stacked)
  std::int64_t v_offset = 0;      // element offset of V inside *v (stacked: one K block)
  const std::vector<std::uint8_t>* mask = nullptr;
  std::vector<float> alibi_slopes;  // ALiBi: one per query head (the case's, else FlashInfer's defaults)
  std::int64_t rows = 0;          // query rows
};

struct PackedProblem {
  pod_problem problem{};  // host index pointers point into `side`; device pointers NULL
  PackedSide side[2];     // 0 prefill, 1 decode
  std::string unsupported;  // non-empty: a case-level feature the ABI cannot express
};

pod_dtype to_pod_dtype(DType t);  // float32 -> POD_DTYPE_F32; int32/uint8/float64 -> throws std::invalid_argument

// The returned object must not be copied after the call (problem points into it): use it in place.
void pack_case(const Case& c, PackedProblem& out);

}  // namespace podcheck::kernels
