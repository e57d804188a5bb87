// The KV copies of podcheck-cuda's kernels (kernels/pod/pod_kernels.cuh): cp.async of 16 (or 8) bytes from global
// to shared memory, and a tile of KV tokens gathered through the page table into a stage, in each of the stage
// layouts the kernels read. Shared with the loop bench (kernels/bench/loop_bench.cu), whose producer modes copy the
// prefill's stages with this very code.
#pragma once

#include <cstdint>

#include "kernels/pod/fast_div.hpp"
#include "kernels/pod/mma_sm80.cuh"
#include "kernels/pod/tile_softmax.cuh"
#include "kernels/pod/wgmma_sm90.cuh"

namespace podcheck::kernels {

// 16 bytes global -> shared (dst: a 32-bit shared-space address), L2 only; valid == false writes 16 zero bytes
// and reads nothing. 8 bytes: fp8 KV (strides are multiples of 8 elements = 8 bytes, not always 16).
// Each copy asks L2 to fetch the whole 128-byte line it falls in (PODCHECK_CP_L2 = 128, from v3.6; 0: no hint, as
// v3.5; 256). A warp's copies cover whole lines anyway, so the hint changes no byte read. With it the decode alone
// is 2-5 % faster, with 256 bytes slower than with none (notebook step 11); why is not known: ncu puts the decode's
// L2 hit rate at 48 % with the hint, 35 % without (FlashInfer's decode: 2 %; step 12).
#ifndef PODCHECK_CP_L2
#define PODCHECK_CP_L2 128
#endif
#if PODCHECK_CP_L2 == 128
#define PODCHECK_CP_HINT ".L2::128B"
#elif PODCHECK_CP_L2 == 256
#define PODCHECK_CP_HINT ".L2::256B"
#elif PODCHECK_CP_L2 == 0
#define PODCHECK_CP_HINT ""
#else
#error "PODCHECK_CP_L2: 0, 128 or 256"
#endif
__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global" PODCHECK_CP_HINT " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async8(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global" PODCHECK_CP_HINT " [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 8 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Where one KV head's tokens of one request live, resolved once per work item: the head's base pointers
// and the request's page indices. Strides and the page size stay in the kernel's parameters (constant bank:
// the item functions get their side by a compile-time index, so they are instruction operands, not registers).
struct KvSrc {
  const unsigned char* k;
  const unsigned char* v;
  const std::int32_t* pages;
};
template <class KVT>
__device__ __forceinline__ KvSrc kv_src(const SideDev& SDv, int page_base, int kv_head) {
  const pod_kv& kv = SDv.s.kv;
  KvSrc r;
  r.k = static_cast<const unsigned char*>(kv.k) + kv_head * kv.k_stride_head * (std::int64_t)sizeof(KVT);
  r.v = static_cast<const unsigned char*>(kv.v) + kv_head * kv.v_stride_head * (std::int64_t)sizeof(KVT);
  r.pages = kv.indices + page_base;
  return r;
}

// Issues the copies of KV tokens [t0, t0 + NTOK) (tokens >= kv_hi zero-filled, never read) into K/V stage
// buffers; chunks of 8 elements, chunk c = idx + i * NTHR handled by thread idx of NTHR. CPR divides NTHR,
// so a thread keeps one column and steps over rows: per row one page lookup (FastDiv, read-only load) and one
// 32 x 32 -> 64-bit multiply-add for the element offset (V reuses K's when their strides are equal); the head
// offset is resolved once per item (KvSrc). v3 re-derived the head offset and a signed division per chunk
// (about two thirds of the decode kernel's instructions), v3.1 still formed two 64 x 64-bit products per row.
// PV (the decode's warp tiles, NTHR = 32, NTOK = 16, from v3.7): the page numbers come from `pv`, lane j's lookup
// for token t0 + (j & 15) made one tile ahead (decode_pages), by a shuffle instead of a load per row.
// XS (the decode's 16-bit tiles, v3.9): rows of D elements, no padding, 16-byte chunk j of row r stored at chunk
// (j & ~7) | ((j ^ r) & 7) (attend_tile reads them so). kd / vd point at the thread's row0 and its chunk's 128-byte
// group, `xo` is its chunk's position in the group (bytes) for row0; row0 + i RPP differs from row0 in the bits of
// i RPP alone (row0 < RPP, a power of 2), so each row's position is xo ^ ((i RPP) & 7) * 16, a constant per row.
// CE: elements per chunk, 8 (16 bytes of 16-bit KV, 8 of fp8) or 16 (fp8 only: 16 bytes, the decode's wide copies).
// SIDES: 3 copies K and V, 1 K alone, 2 V alone (the loop bench's tmix: K by tensor copies).
template <int D, int NTOK, int NTHR, class KVT, bool SAME, int ROWB, bool PV = false, bool XS = false, int CE = 8,
          int SIDES = 3>
__device__ __forceinline__ void issue_kv_rows(const SideDev& SDv, const KvSrc& src, int t0, int kv_hi,
                                              std::uint32_t kd, std::uint32_t vd, int row0, int col,
                                              std::uint32_t pv = 0, std::uint32_t xo = 0) {
  static_assert(!PV || (NTHR == 32 && NTOK <= 16), "a page vector: one warp, at most 16 rows");
  static_assert(CE == 8 || (CE == 16 && sizeof(KVT) == 1), "16-element chunks: fp8 only");
  constexpr int CPR = D / CE;
  constexpr int RPP = NTHR / CPR;  // rows per pass of all NTHR threads
  constexpr int E = sizeof(KVT);   // ROWB: bytes from one stage row to the next
  const unsigned char* kb = src.k + col * E;
  const unsigned char* vb = src.v + col * E;
  // at most 8 rows' lookups in flight (16 for D 256 decode would keep 32 more registers live)
#pragma unroll(NTOK / RPP > 8 ? 8 : NTOK / RPP)
  for (int i = 0; i < NTOK / RPP; ++i) {
    const int t = t0 + row0 + i * RPP;
    const bool ok = t < kv_hi;
    const int tc = ok ? t : t0;  // t0 < kv_hi: its page exists, so the lookup below stays in range
    const int q = SDv.ps.div(tc);
    const std::uint32_t page = PV ? __shfl_sync(0xffffffffu, pv, row0 + i * RPP)
                                  : static_cast<std::uint32_t>(__ldg(src.pages + q));
    const std::uint32_t slot = static_cast<std::uint32_t>(SDv.ps.mod(tc, q));
    const std::uint64_t ko = std::uint64_t(page) * SDv.k_sp + slot * SDv.k_ss;  // elements
    const std::uint64_t vo = SAME ? ko : std::uint64_t(page) * SDv.v_sp + slot * SDv.v_ss;
    const unsigned char* ks = kb + ko * E;
    const unsigned char* vs = vb + vo * E;
    if constexpr (XS) {
      static_assert(E == 2 && ROWB == D * 2 && (RPP & (RPP - 1)) == 0, "XS: 16-bit, dense rows, RPP a power of 2");
      const std::uint32_t x = xo ^ std::uint32_t(((i * RPP) & 7) * 16);
      if constexpr ((SIDES & 1) != 0) cp_async16(kd + i * RPP * ROWB + x, ks, ok);
      if constexpr ((SIDES & 2) != 0) cp_async16(vd + i * RPP * ROWB + x, vs, ok);
    } else if constexpr (E == 2 || CE == 16) {
      if constexpr ((SIDES & 1) != 0) cp_async16(kd + i * RPP * ROWB, ks, ok);
      if constexpr ((SIDES & 2) != 0) cp_async16(vd + i * RPP * ROWB, vs, ok);
    } else {
      if constexpr ((SIDES & 1) != 0) cp_async8(kd + i * RPP * ROWB, ks, ok);
      if constexpr ((SIDES & 2) != 0) cp_async8(vd + i * RPP * ROWB, vs, ok);
    }
  }
}
// SWZ: the sm_90a prefill's layout, [NTOK][64]-element blocks with the 128-byte swizzle (16-bit KV): a thread's
// rows step by RPP, a multiple of 8, so its chunk's swizzled position is the same in every row it copies.
// XS: the decode's unpadded, xor-swizzled 16-bit tiles (issue_kv_rows); the stage must be 128-byte aligned.
template <int D, int NTOK, int NTHR, class KVT, bool SWZ = false, bool PV = false, bool XS = false, int CE = 8,
          int SIDES = 3>
__device__ __forceinline__ void issue_kv_tile(const SideDev& SDv, const KvSrc& src, int t0, int kv_hi,
                                              unsigned char* kdst, unsigned char* vdst, int idx,
                                              std::uint32_t pv = 0) {
  constexpr int CPR = D / CE;           // CE-element chunks per token row
  static_assert(NTHR % CPR == 0, "a thread keeps one column");
  static_assert(NTOK % (NTHR / CPR) == 0, "whole passes");
  constexpr int SD = D + 8;
  constexpr int E = sizeof(KVT);
  static_assert(!SWZ || (E == 2 && (NTHR / CPR) % 8 == 0), "swizzled rows: 16-bit KV, passes of 8 rows");
  static_assert(!(SWZ && XS), "one layout");
  static_assert(CE == 8 || (!SWZ && !XS), "16-element chunks: fp8's dense rows");
  constexpr int ROWB = SWZ ? 128 : XS ? D * 2 : E == 2 ? SD * 2 : D;
  const int row0 = idx / CPR, chunk = idx % CPR, col = chunk * CE;
  const std::uint32_t off = SWZ  ? (chunk / 8) * NTOK * 128 + sm90::swz128(row0, chunk % 8)
                            : XS ? row0 * ROWB + (chunk / 8) * 128
                                 : row0 * ROWB + col * E;
  const std::uint32_t xo = XS ? std::uint32_t(((chunk ^ row0) & 7) * 16) : 0u;
  const std::uint32_t kd = sm80::smem_u32(kdst) + off;
  const std::uint32_t vd = sm80::smem_u32(vdst) + off;
  if (SDv.kv_same)
    issue_kv_rows<D, NTOK, NTHR, KVT, true, ROWB, PV, XS, CE, SIDES>(SDv, src, t0, kv_hi, kd, vd, row0, col, pv, xo);
  else
    issue_kv_rows<D, NTOK, NTHR, KVT, false, ROWB, PV, XS, CE, SIDES>(SDv, src, t0, kv_hi, kd, vd, row0, col, pv, xo);
}

// A tile of NTOK tokens that lies whole within page table entry q (slots slot .. slot + NTOK - 1) of a 16-bit KV
// head, copied into the SWZ stage layout by tensor copies (maps of boxes 64 columns x NTOK slots x 1 head x 1 page,
// 128-byte swizzle): one per 64-column block of K and of V, each issued by lane 0 of one of the 4 warps that call
// this (NTHR = 128), which also expects its bytes on `bar`; every other thread arrives on `bar` plainly, so the barrier
// sees the same 128 arrivals as after issue_kv_tile's mbar_arrive_cp_async.
template <int D, int NTOK>
__device__ __forceinline__ void issue_kv_tile_tma(const void* map_k, const void* map_v, const KvSrc& src, int q, int slot,
                                                  int kv_head, std::uint32_t kd, std::uint32_t vd, std::uint32_t bar,
                                                  int idx) {
  constexpr int NB = D / 64, N = 2 * NB;  // copies per tile
  static_assert(D % 64 == 0 && N <= 4, "head_dim 64 or 128: at most one copy per producer warp");
  const int w = idx >> 5;
  if ((idx & 31) == 0 && w < N) {
    const int page = __ldg(src.pages + q), side = w / NB, cb = w % NB;
    sm90::arrive_expect_tx(bar, NTOK * 128);
    sm90::tma_load_4d((side ? vd : kd) + cb * NTOK * 128, side ? map_v : map_k, 64 * cb, slot, kv_head, page, bar);
  } else {
    sm90::mbar_arrive(bar);
  }
}

// (PODCHECK_WS_TMA=2, the loop bench's tmix) K of a tile of NTOK tokens that begins page table entry q and spans
// NTOK / rows whole pages of `rows` slots each (rows divides NTOK), copied into the SWZ stage layout by tensor copies
// (maps of boxes 64 columns x rows slots x 1 head x 1 page): one per page and 64-column block, box j issued by lane 0
// of producer warp j mod 4, which also expects its boxes' bytes on `bar` without an arrival (every producer thread
// arrives through its cp.async of V: issue_kv_tile with SIDES = 2, then mbar_arrive_cp_async).
template <int D, int NTOK>
__device__ __forceinline__ void issue_k_pages_tma(const void* map_k, const KvSrc& src, int q, int rows, int kv_head,
                                                  std::uint32_t kd, std::uint32_t bar, int idx) {
  static_assert(D % 64 == 0, "64-column blocks");
  const int w = idx >> 5, n = (NTOK / rows) * (D / 64);  // boxes per tile
  if ((idx & 31) != 0 || w >= n) return;
  sm90::expect_tx(bar, std::uint32_t((n - w + 3) / 4) * rows * 128);
#pragma unroll 1
  for (int j = w; j < n; j += 4) {
    const int cb = j % (D / 64), b = j / (D / 64);
    sm90::tma_load_4d(kd + cb * NTOK * 128 + b * rows * 128, map_k, 64 * cb, 0, kv_head, __ldg(src.pages + q + b), bar);
  }
}

}  // namespace podcheck::kernels
