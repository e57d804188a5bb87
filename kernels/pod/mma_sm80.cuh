// The warp-level building blocks (sm_80+) that podcheck-cuda's kernels, the wgmma probe and the gather bench share:
// a generic pointer's shared-space address, ldmatrix (x4, plain and transposed), movmatrix (transposed) and mma.sync
// m16n8k16 with fp32 accumulators. PTX ISA, "Warp Level Matrix Multiply-Accumulate Instructions" (fragment layouts).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace podcheck::kernels::sm80 {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
// Four 8 x 8 matrices of 16-bit elements from shared memory; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldsm_x4(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p))
               : "memory");
}
// The same, each matrix transposed (B fragments from row-major V: tokens as rows).
__device__ __forceinline__ void ldsm_x4_trans(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p))
               : "memory");
}
// One 8 x 8 matrix of 16-bit elements transposed across the warp: the thread holding elements (r, 2c), (r, 2c + 1)
// in x (r = lane / 4, c = lane % 4) receives elements (2c, r), (2c + 1, r) of x in the same positions. Turns an
// accumulator fragment, packed to 16 bits, into the B operand of the next mma.sync.
__device__ __forceinline__ std::uint32_t movmatrix_trans(std::uint32_t x) {
  std::uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}
// c (16 x 8, fp32) += a (16 x 16, row) b (16 x 8, col), 16-bit inputs of type T.
template <class T> __device__ __forceinline__ void mma16816(float* c, const std::uint32_t* a, const std::uint32_t* b);
template <> __device__ __forceinline__ void mma16816<__half>(float* c, const std::uint32_t* a, const std::uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <> __device__ __forceinline__ void mma16816<__nv_bfloat16>(float* c, const std::uint32_t* a,
                                                                    const std::uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace podcheck::kernels::sm80
