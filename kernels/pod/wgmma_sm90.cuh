// Hopper warpgroup MMA (wgmma, sm_90a only) for podcheck-cuda's prefill: what the sm_90a path needs and
// nothing more. The operand shapes chosen so that the rest of the kernel keeps its mma.sync layouts:
//   - A (Q for S = Q K^T, P for O += P V) from registers, in exactly the fragment layout of mma.sync
//     m16n8k16's A: warp w of the warpgroup supplies rows 16 w .. 16 w + 15 (ldmatrix on the padded Q tile,
//     or the packed P of the softmax);
//   - B from shared memory through a matrix descriptor: K and V tiles stored as [tokens][64]-element blocks
//     (one per 64 columns of head_dim) with the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r & 7),
//     on 1024-byte aligned blocks); K is B "K-major" (head_dim contiguous) for Q K^T, V is B "MN-major" (also
//     head_dim contiguous, transposed by the instruction) for P V;
//   - the fp32 accumulator of m64nNk16 per warp is the mma.sync m16n8 C fragment for each 8 columns, so a
//     float s[N / 8][4] (or o[D / 8][4]) passed as float* is the accumulator as attend_tile already holds it.
// PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate" (matrix descriptor, canonical layouts).
// The building blocks are checked alone by kernels/tests/wgmma_probe.cu (test_wgmma.cpp, hidden tag [.wgmma]).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace podcheck::kernels::sm90 {

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a [rows][64] 16-bit block with the 128-byte
// swizzle (the block 1024-byte aligned).
__host__ __device__ constexpr std::uint32_t swz128(int row, int chunk) {
  return std::uint32_t(row) * 128u + (std::uint32_t((chunk ^ row) & 7) << 4);
}

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (all in 16-byte units,
// 14 bits each), base offset 0, layout type in bits 62-63 (1: 128-byte swizzle).
__device__ __forceinline__ std::uint64_t smem_desc(std::uint32_t smem_addr, std::uint32_t lbo, std::uint32_t sbo) {
  return std::uint64_t((smem_addr & 0x3FFFFu) >> 4) | (std::uint64_t((lbo & 0x3FFFFu) >> 4) << 16) |
         (std::uint64_t((sbo & 0x3FFFFu) >> 4) << 32) | (std::uint64_t(1) << 62);
}

// The two operand layouts the prefill uses, both of [rows][64]-element blocks with the 128-byte swizzle:
// K-major (B = K for Q K^T, 16 head_dim columns per k-step inside one block; groups of 8 token rows 1024 bytes
// apart, the leading offset unused) and MN-major (B = V for P V: 16 token rows per k-step; the 64-column
// blocks of head_dim `block_bytes` apart as the leading offset, groups of 8 rows 1024 bytes apart as the
// stride). Checked on the H200 by the kernel's parity tests and tiers (and the probe, kernels/tests/wgmma_probe.cu);
// the same descriptors with the two offsets swapped address outside the tile (an illegal-address fault).
__device__ __forceinline__ std::uint64_t desc_k_major(std::uint32_t smem_addr) { return smem_desc(smem_addr, 16, 1024); }
__device__ __forceinline__ std::uint64_t desc_mn_major(std::uint32_t smem_addr, std::uint32_t block_bytes) {
  return smem_desc(smem_addr, block_bytes, 1024);
}

// Ordering of the asynchronous warpgroup operations (every thread of the warpgroup executes them).
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared memory written by ordinary stores (or cp.async) becomes visible to wgmma's operand reads (the async
// proxy) only after this fence, executed by the writing threads before the barrier that precedes the wgmma.
__device__ __forceinline__ void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Keeps the compiler from moving reads or writes of accumulator registers across wg_fence / wg_wait.
template <int N> __device__ __forceinline__ void wg_pin(float* r) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// ---- mbarriers and register reallocation for the warp-specialised prefill (pod_prefill_ws_kernel) ----------------
// An mbarrier in shared memory (8 bytes, 8-byte aligned) completes a phase once `count` arrivals have been made;
// waiting threads poll the parity of the phase they expect. A fresh barrier is in phase 0, so a wait for parity 1
// (the phase "before" it) passes at once: the producer's first pass over an empty ring does not block.
__device__ __forceinline__ void mbar_init(std::uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// One arrival (release semantics: this thread's earlier shared-memory reads and writes are ordered before it).
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
// One arrival made by the hardware once every cp.async this thread issued so far has landed (.noinc: the arrival
// is one of the `count` the barrier was initialised with, not an extra one).
__device__ __forceinline__ void mbar_arrive_cp_async(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
// Blocks until the phase of parity `parity` has completed (acquire semantics).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
// An arrival that also expects `bytes` more of asynchronous copies to land on the barrier before the phase completes.
__device__ __forceinline__ void arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Expects `bytes` more of asynchronous copies on the barrier's current phase, without an arrival (for a thread that
// arrives otherwise, e.g. through mbar_arrive_cp_async).
__device__ __forceinline__ void expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Tensor copies (TMA) of one box from global memory to shared memory at dst, described by the tensor map at `map`
// (a CUtensorMap in kernel-parameter, constant or global memory), at element coordinates c0 (innermost) ..; the
// bytes land on mbarrier `bar` (complete_tx).
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const void* map, int c0, int c1, int c2,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_load_4d(std::uint32_t dst, const void* map, int c0, int c1, int c2, int c3,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
// The same copy with an L2 cache policy (createpolicy: l2_evict_first) for the bytes it reads.
__device__ __forceinline__ void tma_load_4d_hint(std::uint32_t dst, const void* map, int c0, int c1, int c2, int c3,
                                                 std::uint32_t bar, std::uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, "
      "%4, %5}], [%6], %7;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar), "l"(policy)
      : "memory");
}
// An L2 cache policy under which the lines a copy brings are the first evicted: for bytes read once (a decode's KV
// stream), so they do not push out what other CTAs read again.
__device__ __forceinline__ std::uint64_t l2_evict_first() {
  std::uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// The warpgroup's register budget per thread, changed at run time (sm_90a): the producer gives registers back,
// the consumers take them. Every warp of the warpgroup executes it; the kernel needs a register cap at entry.
template <int N> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N)); }
template <int N> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N)); }
// A bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) from shared to global memory, in the
// issuing thread's bulk group. The writes to its source must have been made visible to the async proxy
// (fence_async_smem by each writer, then a barrier); bulk_commit closes the thread's group, and bulk_wait_read
// waits until every group it committed has read its source (the shared memory may then be written again).
__device__ __forceinline__ void bulk_store(void* gdst, std::uint32_t ssrc, int bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(gdst), "r"(ssrc), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// A barrier among `count` threads of the CTA (named barrier `id`, 1..15; 0 is __syncthreads').
__device__ __forceinline__ void named_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
// An arrival on named barrier `id` without waiting (the `count` of the barrier's bar.sync side included).
__device__ __forceinline__ void named_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// wgmma reads A from registers and writes D asynchronously: until the wg_wait that covers it, neither may be
// touched, and the compiler must not reuse A's registers for anything else. Issue every wgmma of a group from
// fragments that are all live at once (e.g. a[K / 16][4]), and pass them through this after the wg_wait.
template <int N> __device__ __forceinline__ void wg_keep(const std::uint32_t* r) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" ::"r"(r[i]) : "memory");
}

// D (64 x N fp32, N / 2 per thread) += A (64 x 16, registers) x B (16 x N, descriptor); accumulate == 0:
// D = A x B. TNSP_B: 0 B K-major (K^T for Q K^T), 1 B MN-major (V for P V).
template <class T, int N> struct Wgmma;
template <> struct Wgmma<__nv_bfloat16, 32> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, %22;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};
template <> struct Wgmma<__nv_bfloat16, 64> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};
template <> struct Wgmma<__nv_bfloat16, 128> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};
template <> struct Wgmma<__nv_bfloat16, 256> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};
template <> struct Wgmma<__half, 32> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, %22;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};
template <> struct Wgmma<__half, 64> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};
template <> struct Wgmma<__half, 128> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};
template <> struct Wgmma<__half, 256> {
  template <int TNSP_B>
  static __device__ __forceinline__ void run(float* d, const std::uint32_t* a, std::uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));
  }
};

// D (64 x N fp32, N 64 or 128) += A (64 x 16, shared memory, K-major: desc_k_major on a swizzled [rows][64] block,
// like K) x B (descriptor): the form that leaves Q in shared memory instead of 32 registers per thread, which 128-key
// tiles need (pod_ws_kernel with PODCHECK_WS_QSMEM). Checked alone by the probe (qk_ss in kernels/tests/wgmma_probe.cu).
template <class T, int N> struct WgmmaSS;
// The accumulator operands of m64nNk16 (N / 2 registers per thread) and the numbers of the operands after them.
#define PODCHECK_WGMMA_D64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define PODCHECK_WGMMA_D64_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define PODCHECK_WGMMA_D128 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define PODCHECK_WGMMA_D128_OUT "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define PODCHECK_WGMMA_SS(N, T, TY, DREGS, DOUT, A, B, ACC, TNSP)                                                 \
  template <> struct WgmmaSS<T, N> {                                                                               \
    template <int TNSP_B>                                                                                          \
    static __device__ __forceinline__ void run(float* d, std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) { \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " ACC ", 0;\n"                                                \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " {" DREGS "}, " A ", " B          \
                   ", p, 1, 1, 0, " TNSP ";\n}\n"                                                                   \
                   : DOUT                                                                                          \
                   : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TNSP_B));                                      \
    }                                                                                                              \
  };
PODCHECK_WGMMA_SS(64, __nv_bfloat16, "bf16", PODCHECK_WGMMA_D64, PODCHECK_WGMMA_D64_OUT, "%32", "%33", "%34", "%35")
PODCHECK_WGMMA_SS(64, __half, "f16", PODCHECK_WGMMA_D64, PODCHECK_WGMMA_D64_OUT, "%32", "%33", "%34", "%35")
PODCHECK_WGMMA_SS(128, __nv_bfloat16, "bf16", PODCHECK_WGMMA_D128, PODCHECK_WGMMA_D128_OUT, "%64", "%65", "%66",
                  "%67")
PODCHECK_WGMMA_SS(128, __half, "f16", PODCHECK_WGMMA_D128, PODCHECK_WGMMA_D128_OUT, "%64", "%65", "%66", "%67")
#undef PODCHECK_WGMMA_SS
#undef PODCHECK_WGMMA_D64
#undef PODCHECK_WGMMA_D64_OUT
#undef PODCHECK_WGMMA_D128
#undef PODCHECK_WGMMA_D128_OUT

// The warp-specialised prefill's two products for one warpgroup, each one commit group (pod_ws_kernel's consumers and
// the loop bench, kernels/bench/loop_bench.cu). A stage holds K then V as D / 64 swizzled [TK][64] blocks each.
// S (64 x TK) = Q K^T over head_dim D, K at ka; Q from the warp's fragments qf[D / 16] or (SS) from D / 64 swizzled
// [rows][64] blocks at qa, q_block bytes apart (WgmmaSS; qf unused).
template <class T, int TK, int D, bool SS>
__device__ __forceinline__ void issue_qk(float* s, const std::uint32_t (*qf)[4], std::uint32_t qa, std::uint32_t q_block,
                                         std::uint32_t ka) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const std::uint64_t kd = desc_k_major(ka + (kk / 4) * TK * 128 + (kk % 4) * 32);
    if constexpr (SS)
      WgmmaSS<T, TK>::template run<0>(s, desc_k_major(qa + (kk / 4) * q_block + (kk % 4) * 32), kd, kk > 0);
    else
      Wgmma<T, TK>::template run<0>(s, qf[kk], kd, kk > 0);
  }
  wg_commit();
}
// O (64 x D) += P V over TK keys, P as A fragments pa[TK / 16], V at va.
template <class T, int TK, int D>
__device__ __forceinline__ void issue_pv(float* o, const std::uint32_t (*pa)[4], std::uint32_t va) {
#pragma unroll
  for (int kk = 0; kk < TK / 16; ++kk)
    Wgmma<T, D>::template run<1>(o, pa[kk], desc_mn_major(va + kk * 16 * 128, TK * 128), 1);
  wg_commit();
}

}  // namespace podcheck::kernels::sm90
