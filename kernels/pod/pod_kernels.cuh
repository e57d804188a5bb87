// The POD kernels' device code: the kernels pod_attention.cu launches (the fused kernel, the
// warp-specialised pod_ws_kernel, the LSE merge) and the launch parameters the host fills in for them. Included by
// pod_attention.cu (the host side: plan, launch, ABI) and by the kernel-set translation units that CMake generates
// (kernels/CMakeLists.txt): each instantiates kernel_set<D, QT> for one head_dim and query dtype, so that nvcc
// compiles the six sets in parallel instead of one 90-second translation unit.
#pragma once

#include "kernels/host/cuda_check.hpp"
#include "kernels/pod/fast_div.hpp"
#include "kernels/pod/kv_copy.cuh"
#include "kernels/pod/mma_sm80.cuh"
#include "kernels/pod/pod_launch.hpp"
#include "kernels/pod/tensor_map.hpp"
#include "kernels/pod/tile_softmax.cuh"
#include "kernels/pod/wgmma_sm90.cuh"

// The sm_90a prefill path (wgmma) exists in the device code compiled for sm_90a only; sm_80 / sm_90 builds
// and the host pass keep the mma.sync path.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PODCHECK_WGMMA 1
#else
#define PODCHECK_WGMMA 0
#endif

#include <cuda.h>  // CUtensorMap
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace podcheck::kernels::pod_detail {

using sm80::ldsm_x4;
using sm80::ldsm_x4_trans;
using sm80::mma16816;
using sm80::movmatrix_trans;
using sm80::smem_u32;

constexpr int kMaxSms = 1024;

struct KParams {
  SideDev side[2];
  int num_qo_heads, num_kv_heads, group;
  FastDiv gdiv;  // the group size: packed row -> (query row, head in group)
  int lse_base_e;
  int* counters;  // [0] prefill queue head, [1] decode queue head, [2 + sm] per-SM tickets
  int ctas_per_sm, prefill_ctas_per_sm;
  int ws_prefill_ctas;  // pod_ws_kernel with SMs split by side: CTAs (one per SM) 0 .. ws_prefill_ctas - 1 run the prefill
  int ws_role_by_sm;    // (split SMs; PODCHECK_CUDA_WS_ROLE=0 clears it) the prefill CTAs are those on the SMs ws_prefill_sm picks
  // (split SMs) the group decode (gd_cta; PreparedPod sets it up where the decode qualifies): on, its groups (per group
  // the decode items of kGdHeads consecutive KV heads of one request and chunk, in head order) and the decode side's
  // K and V as 4-D tensor maps (column, slot, head, page; boxes of 64 x 16 x kGdHeads x 1, 128-byte swizzle)
  int gdec, gdec_n;
  const int4* gdec_groups;
  CUtensorMap gdec_k, gdec_v;
  // (builds with PODCHECK_WS_TMA) the prefill side's K and V as tensor maps of the same kind, boxes of 64 x pre_tma
  // slots x 1 x 1, pre_tma 0 where PreparedPod did not set them up; else the prefill tile (a warp-specialised form,
  // the page size a multiple of the tile) or (PODCHECK_WS_TMA=2) the page size (8 or more, dividing the tile)
  int pre_tma;
  CUtensorMap pre_k, pre_v;
  ItemSpan* timeline;  // null, or a timeline launch: one span per item and per CTA (PreparedPod::launch_timeline)
  int* timeline_count;
  int timeline_cap;
  // (timeline launches) 8 stamps per prefill item, zeroed: pod_ws_kernel's phases of it (put_phase, ItemSpan::ph)
  std::uint64_t* timeline_phases;
  // (PODCHECK_CUDA_TAIL_SPLIT=2, PODCHECK_WS_PAIR_MERGE builds) null, or per prefill item -1 or its pair slot; per
  // slot and consumer warp (8: 2 consumers x 4 warps) two flags, zeroed before each launch: [0] the pieces' warps
  // past their tiles, [1] set once the first one's partial rows are written. Last in the struct: the default build's
  // parameter offsets stay as they were.
  const std::int32_t* pair_slot;
  int* pair_flags;
  // (PODCHECK_CUDA_COUNTER_FLIP builds) the other of the two counter blocks PreparedPod alternates between launches:
  // this launch's CTA 0 zeroes it for the next one (the launch before, which used it, has completed in stream order),
  // so no memset runs ahead of each launch; null where the build keeps the memset
  int* counters_next;
};
// 1: no cudaMemsetAsync of the counters before each launch. PreparedPod holds two blocks, zeroed once when it is
// made; launch g uses block g % 2 and its CTA 0 zeroes block (g + 1) % 2 (zero_next_counters) for launch g + 1. The
// memset is a node of its own on the stream, ahead of the kernel's; FlashInfer's POD runs one too (SPEC 11.14).
#ifndef PODCHECK_CUDA_COUNTER_FLIP
#define PODCHECK_CUDA_COUNTER_FLIP 0
#endif
constexpr bool kCounterFlip = PODCHECK_CUDA_COUNTER_FLIP != 0;
// (kCounterFlip) the next launch's counters zeroed by the threads of CTA 0; every kernel that reads the counters
// calls it (the merge reads none)
__device__ __forceinline__ void zero_next_counters(const KParams& P) {
  if (kCounterFlip && P.counters_next != nullptr && blockIdx.x == 0)
    for (int i = int(threadIdx.x); i < 2 + kMaxSms; i += int(blockDim.x)) P.counters_next[i] = 0;
}

// ---- element types: Pack2 in kernels/pod/tile_softmax.cuh ------------------------------------------

// Scalar conversions of the 16-bit operand types (round to nearest even).
__device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// RoPE-LLaMA frequency of pair t: rope_theta^(-2t/D) / rope_scale, in double.
template <int D> __device__ __forceinline__ double rope_freq(const SideDev& SDv, int t) {
  return exp2(-(2.0 * t / D) * SDv.rope_log2_theta) * SDv.rope_rcp_scale;
}
// Rotates the pair (x0, x1) = (dim t, dim t + D/2) by `angle` (radians, double). The angle is reduced to
// [-pi, pi] in double, so positions up to any KV length keep full accuracy, and the hardware __sincosf
// (absolute error ~2^-21 on that range, far below a 16-bit rounding) needs no slow path.
__device__ __forceinline__ void rope_pair(float& x0, float& x1, double angle) {
  const double k = rint(angle * 0.15915494309189535);  // 1 / (2 pi)
  const float r = static_cast<float>(fma(-k, 6.283185307179586, angle));
  float sn, cs;
  __sincosf(r, &sn, &cs);
  const float a = x0 * cs - x1 * sn, b = x1 * cs + x0 * sn;
  x0 = a;
  x1 = b;
}

// 8 fp8 KV elements (8 raw bytes) -> 8 query-dtype elements in one uint4, exactly.
template <class QT, __nv_fp8_interpretation_t I> __device__ __forceinline__ uint4 fp8x8_to(uint2 raw) {
  const std::uint32_t w[2] = {raw.x, raw.y};
  std::uint32_t outw[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const __nv_fp8x2_storage_t pair = static_cast<__nv_fp8x2_storage_t>((w[k / 2] >> (16 * (k % 2))) & 0xFFFFu);
    __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(pair, I);  // exact: every fp8 value is an fp16 value
    if constexpr (std::is_same_v<QT, __half>) {
      outw[k] = std::uint32_t(h.x) | (std::uint32_t(h.y) << 16);
    } else {
      const float a = __half2float(__ushort_as_half(h.x)), b = __half2float(__ushort_as_half(h.y));
      outw[k] = Pack2<__nv_bfloat16>::pack(a, b);  // exact too (fp8 fits bf16)
    }
  }
  return make_uint4(outw[0], outw[1], outw[2], outw[3]);
}
template <class QT, class KVT> struct Fp8Cvt;
template <class QT> struct Fp8Cvt<QT, __nv_fp8_e4m3> {
  static __device__ __forceinline__ uint4 cvt8(uint2 raw) { return fp8x8_to<QT, __NV_E4M3>(raw); }
};
template <class QT> struct Fp8Cvt<QT, __nv_fp8_e5m2> {
  static __device__ __forceinline__ uint4 cvt8(uint2 raw) { return fp8x8_to<QT, __NV_E5M2>(raw); }
};

__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ std::uint64_t globaltimer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// A timeline launch's record (one thread of the CTA; spans past the buffer's capacity are dropped, and counted).
// wgs: the warpgroups that ran the item, or (item -1) that run items in the CTA (ItemSpan::side_role). The SM's clock
// at the end beside the timer's gives the clock the launch ran at (timeline_summary; v3.15).
// The end is stamped before the atomic that takes the record's slot: its round trip (1-3 us behind the copies of a
// busy SM) would otherwise count as the item's (step 33: it was most of the prefill's "epilogue" phase).
__device__ __forceinline__ void put_span(const KParams& P, std::uint64_t t0, int item, int side, int role, int wgs = 1) {
  const std::uint64_t c1 = clock64(), t1 = globaltimer();
  const int k = atomicAdd(P.timeline_count, 1);
  if (k < P.timeline_cap) {
    P.timeline[k] = ItemSpan{t0, t1, int(blockIdx.x), int(smid()), item, side | (role << 1) | (wgs << 2), c1};
  }
}

// A timeline launch's phase stamp k of prefill item idx (pod_ws_kernel; ItemSpan::ph's order).
__device__ __forceinline__ void put_phase(const KParams& P, int idx, int k) {
  P.timeline_phases[idx * 8 + k] = globaltimer();
}

// ---- asynchronous copies and ldmatrix (sm_80+) -----------------------------------------------------------
// The kernels' dynamic shared memory aligned to 1024 bytes (the sm_90a swizzle is of absolute addresses), as an
// offset added to the array itself: the compiler then still knows every pointer derived from it is shared memory
// and reads and writes it with LDS / STS. An address rebuilt from an integer is generic to it: through v3.11 every
// plain access (fp8's conversion of each raw tile above all: a generic LD, then its first use waiting on the long
// scoreboard, 24 % of the fp8 decode's stall samples) went out as a generic LD / ST (notebook step 19).
// PODCHECK_SMEM_GENERIC=1 builds v3.11's form, for same-call timing.
#ifndef PODCHECK_SMEM_GENERIC
#define PODCHECK_SMEM_GENERIC 0
#endif
__device__ __forceinline__ unsigned char* smem_aligned_1024(uint4* raw) {
#if PODCHECK_SMEM_GENERIC
  return reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) & ~std::uintptr_t(1023));
#else
  return reinterpret_cast<unsigned char*>(raw) + ((1024u - (smem_u32(raw) & 1023u)) & 1023u);
#endif
}
// ---- shared-memory layouts (bytes; every block a multiple of 16) --------------------------------------------
// 16-bit KV tiles are stored padded (row = D + 8 elements: ldmatrix rows fall on distinct banks) and read by
// ldmatrix directly. fp8 KV is copied raw (dense rows of D bytes) into the stages and converted (exactly) by
// the thread that copied it into one padded 16-bit tile after the copy completed.
// PODCHECK_FP8_WG = 0: fp8 KV's prefill on mma.sync, as up to v3.9 (a build switch for same-call comparisons,
// notebook step 16); 1: on wgmma from the converted tile (prefill_item's WG8)
#ifndef PODCHECK_FP8_WG
#define PODCHECK_FP8_WG 1
#endif
template <int D> constexpr int kDecStages = D == 64 ? 3 : 2;  // per-warp cp.async stages of the decode path
// v3.11: the fp8 decode copies 16-byte chunks of 16 elements where the KV's pointers and strides allow it
// (SideDev::kv_wide; every layout podcheck's generator builds), half the copy instructions of 8-byte chunks, and
// through L2 only (cp.async.cg) as 16-bit KV's are; else, or with PODCHECK_CUDA_FP8_WIDE=0, 8-byte chunks (v3.10's).
template <int D> constexpr int kPreKV = D == 64 ? 64 : 32;      // prefill KV tile, mma.sync path (tokens; smem)
// the sm_90a wgmma prefill's KV tile: Q lives in registers there, so stage 1 overlays the Q tile (Smem::wg_bytes)
template <int D> constexpr int kPreKVWg = 64;
template <int D> constexpr int tile16_bytes(int ntok) { return ntok * (D + 8) * 2; }  // one padded 16-bit tile
template <int D, class KVT> constexpr int stage_bytes(int ntok) {                      // K + V of one stage
  return sizeof(KVT) == 1 ? 2 * ntok * D : 2 * tile16_bytes<D>(ntok);
}
template <int D, class KVT> struct Smem {
  static constexpr int SD = D + 8;
  static constexpr bool kConv = sizeof(KVT) == 1;
  static constexpr int tile16(int ntok) { return tile16_bytes<D>(ntok); }
  static constexpr int stage(int ntok) { return stage_bytes<D, KVT>(ntok); }
  // prefill: Q [64][SD] | 2 stages of kPreKV tokens | (fp8) converted K, V
  static constexpr int pre_q = tile16_bytes<D>(kTileQ);
  static constexpr int pre_bytes =
      pre_q + 2 * stage_bytes<D, KVT>(kPreKV<D>) + (kConv ? 2 * tile16_bytes<D>(kPreKV<D>) : 0);
  // decode: Q [16][SD] | per warp: kDecStages<D> stages | (fp8) converted K, V; the warp's merge scratch
  // (fp32 O [16][SD], m[16], d[16]) overlays its own region once its pipeline is drained.
  static constexpr int dec_q = tile16_bytes<D>(kTileQDecode);
  // (the warp-specialised fused kernel's decode warpgroups choose their own ring depth: dec_warp_of, dec_bytes_of)
  static constexpr int dec_warp_of(int ns) {
    return ns * stage_bytes<D, KVT>(kTileKVDecode) + (kConv ? 2 * tile16_bytes<D>(kTileKVDecode) : 0);
  }
  static constexpr int dec_bytes_of(int ns) { return dec_q + kWarps * dec_warp_of(ns); }
  static constexpr int dec_warp = dec_warp_of(kDecStages<D>);
  static constexpr int dec_scratch = kTileQDecode * SD * 4 + 2 * kTileQDecode * 4;
  static constexpr int dec_bytes = dec_bytes_of(kDecStages<D>);
  // prefill on the sm_90a path (16-bit KV, head_dim 64 / 128): 2 stages of K, V as [TK][64]-element blocks with
  // the 128-byte swizzle (no padding; every block 1024-byte aligned), laid out [stage 1 | stage 0]: the Q tile
  // (padded, as above) is written at offset 0, read once into the warps' registers, and then stage 1 (at least as
  // large) takes its place, so the Q tile costs no shared memory of its own
  static constexpr int wg_block = kPreKVWg<D> * D * 2;  // one of K or V in a stage
  static constexpr int wg_bytes = 2 * 2 * wg_block;
  static_assert(pre_q % 1024 == 0 && wg_block % 1024 == 0, "1024-byte aligned swizzled blocks");
  static_assert(2 * wg_block >= pre_q, "stage 1 covers the Q tile it overlays");
  // + 1024: the kernel aligns its dynamic shared memory to 1024 bytes (the swizzle is of absolute addresses)
  static constexpr int bytes =
      1024 + (pre_bytes > dec_bytes ? (pre_bytes > wg_bytes ? pre_bytes : wg_bytes) : (dec_bytes > wg_bytes ? dec_bytes : wg_bytes));
  static_assert(dec_scratch <= dec_warp_of(2), "decode merge scratch must fit in a warp's stage region");
  static_assert(pre_q % 16 == 0 && dec_q % 16 == 0 && dec_warp % 16 == 0 && stage_bytes<D, KVT>(16) % 16 == 0,
                "16-byte alignment of every block");
};

// The decode's page vector of the warp tile at t0 (decode_item): lane j looks up the page of token t0 + (j & 15)
// (tokens past kv_hi: t0's, which exists when t0 < kv_hi). Issued one tile before the copies that use it, so the
// page-table load's latency is off their path; one load per lane and tile instead of one per row (at page 1,
// every row its own page). PODCHECK_DEC_PV = 0: v3.6's lookup per row at issue time.
#ifndef PODCHECK_DEC_PV
#define PODCHECK_DEC_PV 1
#endif
// PODCHECK_DEC_XS = 0: v3.8's padded decode tiles (a build switch for same-call comparisons, notebook step 14)
#ifndef PODCHECK_DEC_XS
#define PODCHECK_DEC_XS 1
#endif
__device__ __forceinline__ std::uint32_t decode_pages(const SideDev& SDv, const KvSrc& src, int t0, int kv_hi,
                                                      int lane) {
  const int t = t0 + (lane & 15);
  return static_cast<std::uint32_t>(__ldg(src.pages + SDv.ps.div(t < kv_hi ? t : t0)));
}

// fp8 only: the raw chunks of one NTOK x D tile that thread idx of NTHR copied (issue_kv_tile's mapping, CE
// elements each), converted and handed to store(row, col, 8 converted elements). Every load of the thread's share
// first, then the conversions and stores: a store between two loads keeps the next load from being issued before
// it (for the compiler they may alias), so v3.11's loop had one load in flight per thread, its first use waiting
// on it (notebook step 19).
template <int D, int NTOK, int CE, int NTHR, class QT, class KVT, class Store>
__device__ __forceinline__ void convert_raw_tile(const unsigned char* raw, int idx, Store&& store) {
  constexpr int CPR = D / CE, H = CE / 8, PER = NTOK * CPR / NTHR;
  static_assert(CE == 8 || CE == 16, "chunks of 8 or 16 fp8 elements");
  static_assert(NTOK * CPR % NTHR == 0, "every thread converts the same number of chunks");
  uint2 r[PER][H];
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int c = idx + i * NTHR, row = c / CPR, col = (c % CPR) * CE;
    if constexpr (H == 2) {
      const uint4 q = *reinterpret_cast<const uint4*>(raw + row * D + col);
      r[i][0] = make_uint2(q.x, q.y);
      r[i][1] = make_uint2(q.z, q.w);
    } else {
      r[i][0] = *reinterpret_cast<const uint2*>(raw + row * D + col);
    }
  }
#pragma unroll
  for (int i = 0; i < PER; ++i) {
    const int c = idx + i * NTHR, row = c / CPR, col = (c % CPR) * CE;
#pragma unroll
    for (int h = 0; h < H; ++h) store(row, col + 8 * h, Fp8Cvt<QT, KVT>::cvt8(r[i][h]));
  }
}

// fp8 only: the chunks this thread copied converted to the padded 16-bit tiles (rows of D + 8 elements).
// CE: elements per chunk (issue_kv_tile's; 16: the decode's wide fp8 copies); NTHR: the threads that copied.
template <int D, int NTOK, class QT, class KVT, int NTHR, int CE = 8>
__device__ __forceinline__ void convert_kv_tile(const unsigned char* kraw, const unsigned char* vraw, QT* kt, QT* vt,
                                                int idx) {
  constexpr int SD = D + 8;
  convert_raw_tile<D, NTOK, CE, NTHR, QT, KVT>(
      kraw, idx, [&](int row, int col, uint4 x) { *reinterpret_cast<uint4*>(kt + row * SD + col) = x; });
  convert_raw_tile<D, NTOK, CE, NTHR, QT, KVT>(
      vraw, idx, [&](int row, int col, uint4 x) { *reinterpret_cast<uint4*>(vt + row * SD + col) = x; });
}

// fp8 only, sm_90a prefill (PODCHECK_FP8_WG): the chunks this thread copied (issue_kv_tile's mapping, as above)
// converted into wgmma's layout, [NTOK][64]-element blocks with the 128-byte swizzle (K at kt, V at vt, each
// 1024-byte aligned): what issue_kv_tile<..., SWZ> writes for 16-bit KV, so attend_tile_wg reads it unchanged.
template <int D, int NTOK, class QT, class KVT, int NTHR>
__device__ __forceinline__ void convert_kv_tile_swz(const unsigned char* kraw, const unsigned char* vraw,
                                                    unsigned char* kt, unsigned char* vt, int idx) {
  auto at = [](int row, int col) { return (col / 64) * NTOK * 128 + sm90::swz128(row, (col / 8) % 8); };
  convert_raw_tile<D, NTOK, 8, NTHR, QT, KVT>(
      kraw, idx, [&](int row, int col, uint4 x) { *reinterpret_cast<uint4*>(kt + at(row, col)) = x; });
  convert_raw_tile<D, NTOK, 8, NTHR, QT, KVT>(
      vraw, idx, [&](int row, int col, uint4 x) { *reinterpret_cast<uint4*>(vt + at(row, col)) = x; });
}

// RoPE-LLaMA of a padded 16-bit K tile in shared memory holding tokens t0 .. t0 + NTOK - 1 (rows past the
// KV end hold zeros and stay zero): pair (row, t) handled by thread idx of nthr. nthr and D/2 divide one
// another, so each thread keeps to one or a few pairs t and computes their frequencies once.
template <int D, int NTOK, class QT>
__device__ __forceinline__ void rope_k_tile(QT* Kt, const SideDev& SDv, int t0, int idx, int nthr) {
  constexpr int HALF = D / 2, SD = D + 8;
  const int row_step = nthr >= HALF ? nthr / HALF : 1;
  for (int t = idx % HALF; t < HALF; t += nthr) {
    const double f = rope_freq<D>(SDv, t);
    for (int row = nthr >= HALF ? idx / HALF : 0; row < NTOK; row += row_step) {
      QT* k = Kt + row * SD;
      float x0 = to_f(k[t]), x1 = to_f(k[t + HALF]);
      rope_pair(x0, x1, static_cast<double>(t0 + row) * f);
      k[t] = from_f<QT>(x0);
      k[t + HALF] = from_f<QT>(x1);
    }
  }
}

// One warp: its 16 query rows (Qw, padded rows) against NTOK KV tokens starting at t0 (Kt, Vt padded 16-bit
// tiles), online softmax in the log2 domain, O += P V with P rounded to the query dtype; mma.sync m16n8k16
// with ldmatrix fragments. m: row maxima of the scaled logits (rows gq, gq + 8). d: row sums of the rounded
// weights as an mma accumulator (d[0] = d[1]: row gq, d[2] = d[3]: row gq + 8; every lane holds its rows'
// whole sums): the weights PV uses, summed in fp32 by the tensor core. XS: Kt, Vt in the decode's unpadded
// xor-swizzled layout (issue_kv_rows); every ldmatrix row address below has row & 7 == lane & 7, so a chunk's
// stored position is the chunk xor (lane & 7).
template <int D, int NTOK, class QT, bool F, bool XS = false>
__device__ __forceinline__ void attend_tile(const QT* Qw, const QT* Kt, const QT* Vt, int t0, const RowMask& M,
                                            float (&o)[D / 8][4], float (&m)[2], float (&d)[4], int lane) {
  constexpr int SD = D + 8;
  constexpr int KP = XS ? D : SD;  // K / V tile row pitch (elements)
  const int xl = XS ? (lane & 7) : 0;
  constexpr int NN = NTOK / 8;
  constexpr int NT_D = D / 8;
  float s[NN][4];
#pragma unroll
  for (int n = 0; n < NN; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[4];
    ldsm_x4(a, Qw + (lane & 15) * SD + kk * 16 + (lane >> 4) * 8);
#pragma unroll
    for (int nb = 0; nb < NN / 2; ++nb) {
      std::uint32_t b[4];
      ldsm_x4(b, Kt + (nb * 16 + (lane & 7) + (lane >> 4) * 8) * KP + ((kk * 2 + ((lane >> 3) & 1)) ^ xl) * 8);
      mma16816<QT>(s[2 * nb], a, b);
      mma16816<QT>(s[2 * nb + 1], a, b + 2);
    }
  }
  float alpha[2];
  std::uint32_t pa[NTOK / 16][4];  // P as A fragments, one per 16-token k-step
  if (softmax_tile<NTOK, QT, F>(s, t0, M, m, alpha, pa, lane)) rescale<D>(o, d, alpha);
#pragma unroll
  for (int kk = 0; kk < NTOK / 16; ++kk) {
#pragma unroll
    for (int n = 0; n < NT_D; n += 2) {
      std::uint32_t b[4];
      ldsm_x4_trans(b, Vt + (kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * KP + ((n + (lane >> 4)) ^ xl) * 8);
      mma16816<QT>(o[n], pa[kk], b);
      mma16816<QT>(o[n + 1], pa[kk], b + 2);
    }
  }
  row_sums<NTOK, QT>(d, pa);
}

#if PODCHECK_WGMMA
// The sm_90a variant for one warpgroup (the CTA's 4 warps, 64 rows): S = Q K^T and O += P V on wgmma
// m64nNk16 with A from registers (qf: the warp's Q fragments, loaded once per item; pa: the softmax's P) and
// B from the swizzled K / V stage (kernels/pod/wgmma_sm90.cuh: [TK][64]-element blocks, 1024-byte aligned).
// Same softmax, masks, rescale and row sums as attend_tile, so the same numerics up to the order of the
// tensor core's additions. Every warp of the CTA must call it (wgmma is warpgroup-wide); a warp whose rows are
// past the request computes on zero Q rows and writes nothing.
template <int D, int NTOK, class QT>
__device__ __forceinline__ void attend_tile_wg(const std::uint32_t (&qf)[D / 16][4], std::uint32_t kaddr,
                                               std::uint32_t vaddr, int t0, const RowMask& M, float (&o)[D / 8][4],
                                               float (&m)[2], float (&d)[4], int lane) {
  using namespace sm90;
  constexpr int NN = NTOK / 8;
  float s[NN][4];
#pragma unroll
  for (int n = 0; n < NN; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
  wg_pin<NN * 4>(&s[0][0]);
  wg_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    Wgmma<QT, NTOK>::template run<0>(&s[0][0], qf[kk], desc_k_major(kaddr + (kk / 4) * NTOK * 128 + (kk % 4) * 32),
                                     kk > 0);
  wg_commit();
  wg_wait<0>();
  wg_pin<NN * 4>(&s[0][0]);
  float alpha[2];
  std::uint32_t pa[NTOK / 16][4];
  if (softmax_tile<NTOK, QT, false>(s, t0, M, m, alpha, pa, lane)) rescale<D>(o, d, alpha);
  wg_pin<D / 2>(&o[0][0]);
  wg_fence();  // O was last written by ordinary instructions (the rescale, or zeros)
#pragma unroll
  for (int kk = 0; kk < NTOK / 16; ++kk)
    Wgmma<QT, D>::template run<1>(&o[0][0], pa[kk], desc_mn_major(vaddr + kk * 16 * 128, NTOK * 128), 1);
  wg_commit();
  row_sums<NTOK, QT>(d, pa);  // mma.sync beside the asynchronous PV (both only read pa)
  wg_wait<0>();
  wg_pin<D / 2>(&o[0][0]);
  wg_keep<NTOK / 4>(&pa[0][0]);
}
#endif

// Where one packed row's results go, resolved once per row: its output row (or, for a split item, its
// fp32 partial row), the factor that normalises O (and applies v_scale to a final output), and its LSE.
template <int D, class QT>
struct RowOut {
  float* part;      // split item: the partial O row; null: the final output row `out`
  QT* out;
  float f;          // 1 / d (partial) or v_scale / d (final); 0 for a row that saw no key
  float* lse_dst;   // null: the case records no LSE
  float lse;
  __device__ __forceinline__ void put(int col, float a0, float a1) const {  // columns col, col + 1
    if (part) *reinterpret_cast<float2*>(part + col) = make_float2(a0 * f, a1 * f);
    else *reinterpret_cast<std::uint32_t*>(out + col) = Pack2<QT>::pack(a0 * f, a1 * f);
  }
  __device__ __forceinline__ void put1(int col, float a) const {  // column col alone
    if (part) part[col] = a * f;
    else out[col] = from_f<QT>(a * f);
  }
  __device__ __forceinline__ void put_lse() const {
    if (lse_dst) *lse_dst = lse;
  }
};
// The output row of query row q_row (of the side's whole output) and head h.
template <class QT>
__device__ __forceinline__ QT* out_row(const pod_side& S, int q_row, int h) {
  return static_cast<QT*>(S.o) + (std::int64_t)q_row * S.o_stride_row + (std::int64_t)h * S.o_stride_head;
}
// Packed row prow of an item on KV head kv_head: its query row i (within the request) and query head h.
struct RowHead {
  int i, h;
};
__device__ __forceinline__ RowHead row_head(const KParams& P, int kv_head, int prow) {
  const int i = P.gdiv.div(prow);
  return {i, kv_head * P.group + P.gdiv.mod(prow, i)};
}
template <int D, class QT>
__device__ __forceinline__ RowOut<D, QT> row_out(const KParams& P, const SideDev& SDv, const WorkItem& it, int q_start,
                                                 int qo_len, int prow, float mrow, float drow) {
  const pod_side& S = SDv.s;
  const auto [i, h] = row_head(P, it.kv_head, prow);
  const bool empty = !(drow > 0.f);
  const float lse2 = empty ? -INFINITY : mrow + log2f(drow);
  const float inv = empty ? 0.f : 1.f / drow;
  RowOut<D, QT> r;
  if (it.nchunks > 1) {
    const std::int64_t e = SDv.part_base[it.request] + ((std::int64_t)it.chunk * qo_len + i) * P.num_qo_heads + h;
    r.part = SDv.part_o + e * D;
    r.out = nullptr;
    r.f = inv;
    r.lse_dst = SDv.part_lse + e;
    r.lse = lse2;
  } else {
    r.part = nullptr;
    r.out = out_row<QT>(S, q_start + i, h);
    r.f = inv * S.v_scale;
    r.lse_dst = S.lse ? S.lse + (std::int64_t)(q_start + i) * S.lse_stride_row + h : nullptr;
    r.lse = P.lse_base_e ? (empty ? -INFINITY : lse2 * 0.69314718055994531f) : lse2;
  }
  return r;
}

// A merged row's LSE (mxl + log2 wsum, -inf for a row that saw no key) stored as the side records it (base 2, or
// base e where lse_base_e): pod_merge_kernel's and pair_merge_row's.
__device__ __forceinline__ void put_merged_lse(const KParams& P, const pod_side& S, int q_row, int h, float mxl,
                                               float wsum, bool empty) {
  const float lse2 = empty ? -INFINITY : mxl + log2f(wsum);
  S.lse[(std::int64_t)q_row * S.lse_stride_row + h] =
      P.lse_base_e ? (empty ? -INFINITY : lse2 * 0.69314718055994531f) : lse2;
}

// (PODCHECK_CUDA_TAIL_SPLIT=2) A cut item's piece that ends second: packed row prow's output and LSE from the other
// piece's partial state (written, fenced and flagged before this runs; read through L2) and this piece's own (mrow,
// drow and the thread's O columns 8 nn + 2 tq of row half hr), combined in chunk order with pod_merge_kernel's
// operations, as if this piece's partial row had been stored and both merged after the launch.
template <int D, class QT, int NT>
__device__ __forceinline__ void pair_merge_row(const KParams& P, const SideDev& SDv, const WorkItem& it, int q_start,
                                               int qo_len, int prow, float mrow, float drow, const float (&o)[NT][4],
                                               int hr, int tq) {
  const pod_side& S = SDv.s;
  const int H = P.num_qo_heads;
  const auto [i, h] = row_head(P, it.kv_head, prow);
  const bool own_empty = !(drow > 0.f);
  const float own_lse = own_empty ? -INFINITY : mrow + log2f(drow);
  const float inv = own_empty ? 0.f : 1.f / drow;
  const std::int64_t e_other = SDv.part_base[it.request] + ((std::int64_t)(1 - it.chunk) * qo_len + i) * H + h;
  const float other_lse = __ldcg(SDv.part_lse + e_other);
  const float l0 = it.chunk == 0 ? own_lse : other_lse, l1 = it.chunk == 0 ? other_lse : own_lse;
  const float mxl = fmaxf(fmaxf(-INFINITY, l0), l1);
  const float w0 = (mxl == -INFINITY) ? 0.f : exp2f(l0 - mxl), w1 = (mxl == -INFINITY) ? 0.f : exp2f(l1 - mxl);
  float wsum = 0.f;
  wsum += w0;
  wsum += w1;
  const bool empty = !(wsum > 0.f);
  const float f = empty ? 0.f : S.v_scale / wsum;
  QT* dst = out_row<QT>(S, q_start + i, h);
  const float* other = SDv.part_o + e_other * D;
#pragma unroll
  for (int nn = 0; nn < NT; ++nn) {
    const int col = nn * 8 + 2 * tq;
    const float2 vo = __ldcg(reinterpret_cast<const float2*>(other + col));
    const float2 vs = make_float2(o[nn][hr * 2] * inv, o[nn][hr * 2 + 1] * inv);  // this piece's partial values
    const float2 v0 = it.chunk == 0 ? vs : vo, v1 = it.chunk == 0 ? vo : vs;
    float a0 = 0.f, a1 = 0.f;
    if (!empty) {
      a0 += w0 * v0.x;
      a1 += w0 * v0.y;
      a0 += w1 * v1.x;
      a1 += w1 * v1.y;
    }
    *reinterpret_cast<std::uint32_t*>(dst + col) = Pack2<QT>::pack(a0 * f, a1 * f);
  }
  if (tq == 0 && S.lse) put_merged_lse(P, S, q_start + i, h, mxl, wsum, empty);
}

// Loads packed query rows [row_begin, row_begin + rows) into padded smem rows (zeros past the request).
template <int D, class QT>
__device__ __forceinline__ void load_q_tile(const pod_side& S, int q_start, int packed, const FastDiv& gd, int kv_head,
                                            int row_begin, int rows, QT* Qs, int tid) {
  constexpr int SD = D + 8;
  for (int c = tid; c < rows * (D / 8); c += kThreads) {
    const int row = c / (D / 8), col = (c % (D / 8)) * 8;
    const int pr = row_begin + row;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (pr < packed) {
      const int i = gd.div(pr), h = kv_head * gd.d + gd.mod(pr, i);
      v = *reinterpret_cast<const uint4*>(static_cast<const QT*>(S.q) + (std::int64_t)(q_start + i) * S.q_stride_row +
                                          (std::int64_t)h * S.q_stride_head + col);
    }
    *reinterpret_cast<uint4*>(Qs + row * SD + col) = v;
  }
}

// RoPE-LLaMA variant of load_q_tile: each query row rotated at its position i + L - qo_len (pairs t, t + D/2),
// in float with the angle reduced in double, then rounded to the query dtype (zeros past the request).
template <int D, class QT>
__device__ __forceinline__ void load_q_tile_rope(const SideDev& SDv, int q_start, int packed, const FastDiv& gd,
                                                 int kv_head, int pos_off, int row_begin, int rows, QT* Qs, int tid) {
  constexpr int HALF = D / 2, SD = D + 8;
  const pod_side& S = SDv.s;
  const int row_step = kThreads >= HALF ? kThreads / HALF : 1;
  for (int t = tid % HALF; t < HALF; t += kThreads) {
    const double f = rope_freq<D>(SDv, t);
    for (int row = kThreads >= HALF ? tid / HALF : 0; row < rows; row += row_step) {
      const int pr = row_begin + row;
      float x0 = 0.f, x1 = 0.f;
      if (pr < packed) {
        const int i = gd.div(pr), h = kv_head * gd.d + gd.mod(pr, i);
        const QT* q = static_cast<const QT*>(S.q) + (std::int64_t)(q_start + i) * S.q_stride_row +
                      (std::int64_t)h * S.q_stride_head;
        x0 = to_f(q[t]);
        x1 = to_f(q[t + HALF]);
        rope_pair(x0, x1, static_cast<double>(i + pos_off) * f);
      }
      Qs[row * SD + t] = from_f<QT>(x0);
      Qs[row * SD + t + HALF] = from_f<QT>(x1);
    }
  }
}

// What both roles derive from a work item: its request's extents and the KV range its rows can see.
struct ItemCtx {
  int r, q_start, qo_len, Lr, g, packed, page_base;
  int kv_lo, kv_hi;  // the item's chunk, narrowed by the causal and window bounds of its rows
};
__device__ __forceinline__ ItemCtx item_ctx(const KParams& P, const SideDev& SDv, const WorkItem& it, int tile_rows) {
  const pod_side& S = SDv.s;
  ItemCtx c;
  c.r = it.request;
  c.q_start = S.qo_indptr[c.r];
  c.qo_len = S.qo_indptr[c.r + 1] - c.q_start;
  c.Lr = SDv.kv_len[c.r];
  c.g = P.group;
  c.packed = c.qo_len * c.g;
  c.page_base = S.kv.indptr[c.r];
  const int i_min = it.row_begin / c.g;
  const int i_max = (min(c.packed, it.row_begin + tile_rows) - 1) / c.g;
  c.kv_lo = it.kv_begin;
  c.kv_hi = it.kv_end;
  if (S.mask_mode == POD_MASK_CAUSAL) c.kv_hi = min(c.kv_hi, max(0, i_max + c.Lr - c.qo_len + 1));
  if (S.window_left >= 0) c.kv_lo = max(c.kv_lo, i_min + c.Lr - c.qo_len - S.window_left);
  return c;
}
// The mask and logit transform of the 16-row block starting at packed row row0.
__device__ __forceinline__ RowMask row_mask(const SideDev& SDv, const ItemCtx& c, const FastDiv& gd, int kv_head,
                                            int row0) {
  RowMask M;
  M.S = &SDv.s;
  M.r = c.r;
  M.packed = c.packed;
  M.qo_len = c.qo_len;
  M.L = c.Lr;
  M.kv_hi = c.kv_hi;
  M.scale_log2 = SDv.scale_log2;
  M.X = (SDv.alibi || SDv.cap > 0.f) ? &SDv : nullptr;
  M.kv_head = kv_head;
  M.g = c.g;
  M.set_rows(row0, gd);
  return M;
}
// The item's query tile into shared memory (rotated with RoPE).
template <int D, class QT, bool F>
__device__ __forceinline__ void load_q(const SideDev& SDv, const ItemCtx& c, const FastDiv& gd, int kv_head,
                                       int row_begin, int rows, QT* Qs, int tid) {
  if (F && SDv.rope)
    load_q_tile_rope<D, QT>(SDv, c.q_start, c.packed, gd, kv_head, c.Lr - c.qo_len, row_begin, rows, Qs, tid);
  else
    load_q_tile<D, QT>(SDv.s, c.q_start, c.packed, gd, kv_head, row_begin, rows, Qs, tid);
}

// ---- prefill item: 64 packed rows (16 per warp), KV tiles of kPreKV tokens shared by the CTA, double-buffered --
template <int D, class QT, class KVT, bool F>
__device__ __forceinline__ void prefill_item(const KParams& P, const SideDev& SDv, const WorkItem& it,
                                             unsigned char* smem, int tid) {
  using L = Smem<D, KVT>;
  constexpr int SD = D + 8;
  constexpr int NT_D = D / 8;
  // sm_90a: S = Q K^T and O += P V on wgmma (attend_tile_wg) without the feature paths at head_dim 64 / 128: from
  // swizzled stages for 16-bit KV (WG16), from the converted tile in the same swizzled layout for fp8 KV (WG8,
  // notebook step 16; the raw stages and the converted tile of the mma.sync path, kPreKV tokens, so the shared
  // memory layout is unchanged); everything else (and every other architecture) on mma.sync.
  constexpr bool WG16 = PODCHECK_WGMMA && !F && !L::kConv && (D == 64 || D == 128);
  constexpr bool WG8 = PODCHECK_WGMMA && PODCHECK_FP8_WG && !F && L::kConv && (D == 64 || D == 128);
  constexpr bool WG = WG16 || WG8;
  constexpr int TK = WG16 ? kPreKVWg<D> : kPreKV<D>;
  const int warp = tid >> 5, lane = tid & 31, tq = lane & 3;
  const ItemCtx c = item_ctx(P, SDv, it, kTileQ);
  const int packed = c.packed, kv_lo = c.kv_lo, kv_hi = c.kv_hi;

  QT* Qs = reinterpret_cast<QT*>(smem);
  unsigned char* stage0 = smem + L::pre_q;
  QT* Kc = reinterpret_cast<QT*>(smem + L::pre_q + 2 * L::stage(TK));  // fp8: converted tiles
  QT* Vc = Kc + TK * SD;
  // WG8: the converted K and V as swizzled blocks (TK x D x 2 bytes each) in the converted tiles' room
  unsigned char* kc8 = reinterpret_cast<unsigned char*>(Kc);
  unsigned char* vc8 = kc8 + TK * D * 2;
  static_assert(!WG8 || ((L::pre_q + 2 * L::stage(TK)) % 1024 == 0 && (TK * D * 2) % 1024 == 0 &&
                         2 * TK * D * 2 <= 2 * L::tile16(TK)),
                "WG8: the converted blocks 1024-byte aligned, within the converted tiles' room");
  (void)kc8;
  (void)vc8;
  auto stage_k = [&](int s) { return WG16 ? smem + (s ^ 1) * 2 * L::wg_block : stage0 + s * L::stage(TK); };
  auto stage_v = [&](int s) {
    return WG16 ? smem + (s ^ 1) * 2 * L::wg_block + L::wg_block
              : stage0 + s * L::stage(TK) + (L::kConv ? TK * D : L::tile16(TK));
  };
  std::uint32_t qf[WG ? D / 16 : 1][4];  // sm_90a: the warp's Q fragments (wgmma's A), loaded once per item
  (void)qf;

  load_q<D, QT, F>(SDv, c, P.gdiv, it.kv_head, it.row_begin, kTileQ, Qs, tid);
  const int n_tiles = kv_hi > kv_lo ? (kv_hi - kv_lo + TK - 1) / TK : 0;

  float o[NT_D][4];
#pragma unroll
  for (int n = 0; n < NT_D; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, d[4] = {0.f, 0.f, 0.f, 0.f};
  const int wrow0 = it.row_begin + warp * 16;
  const bool warp_active = wrow0 < packed;
  const RowMask M = row_mask(SDv, c, P.gdiv, it.kv_head, wrow0);

  const KvSrc src = kv_src<KVT>(SDv, c.page_base, it.kv_head);
  if (n_tiles > 0) issue_kv_tile<D, TK, kThreads, KVT, WG16>(SDv, src, kv_lo, kv_hi, stage_k(0), stage_v(0), tid);
  cp_async_commit();
#if PODCHECK_WGMMA
  if constexpr (WG) {  // the warp's Q fragments into registers; then stage 1 may overwrite the Q tile
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) ldsm_x4(qf[kk], Qs + (warp * 16 + (lane & 15)) * SD + kk * 16 + (lane >> 4) * 8);
    __syncthreads();
  }
#endif
  for (int k = 0; k < n_tiles; ++k) {
    const int s = k & 1;
    // Stage s ^ 1 was last read in iteration k - 1, which ended with a barrier.
    if (k + 1 < n_tiles)
      issue_kv_tile<D, TK, kThreads, KVT, WG16>(SDv, src, kv_lo + (k + 1) * TK, kv_hi, stage_k(s ^ 1), stage_v(s ^ 1),
                                               tid);
    cp_async_commit();
    cp_async_wait<1>();  // this thread's copies of tile k are done
    const QT* Kt;
    const QT* Vt;
    if constexpr (WG8) {
      convert_kv_tile_swz<D, TK, QT, KVT, kThreads>(stage_k(s), stage_v(s), kc8, vc8, tid);
      Kt = Kc;
      Vt = Vc;
    } else if constexpr (L::kConv) {
      convert_kv_tile<D, TK, QT, KVT, kThreads>(stage_k(s), stage_v(s), Kc, Vc, tid);
      Kt = Kc;
      Vt = Vc;
    } else {
      Kt = reinterpret_cast<const QT*>(stage_k(s));
      Vt = reinterpret_cast<const QT*>(stage_v(s));
    }
    // this thread's cp.async data (WG16) or converted stores (WG8) visible to wgmma's operand reads
    if constexpr (WG) sm90::fence_async_smem();
    __syncthreads();  // every thread's copies (and the Q tile) visible
    if (F && SDv.rope) {  // pairs (t, t + D/2) were copied by different threads: rotate after the barrier
      rope_k_tile<D, TK, QT>(const_cast<QT*>(Kt), SDv, kv_lo + k * TK, tid, kThreads);
      __syncthreads();
    }
#if PODCHECK_WGMMA
    if constexpr (WG) {  // every warp: wgmma is warpgroup-wide (rows past the request compute on zeros)
      attend_tile_wg<D, TK, QT>(qf, smem_u32(WG8 ? kc8 : stage_k(s)), smem_u32(WG8 ? vc8 : stage_v(s)), kv_lo + k * TK,
                                M, o, m, d, lane);
    } else
#endif
    if (warp_active) attend_tile<D, TK, QT, F>(Qs + warp * 16 * SD, Kt, Vt, kv_lo + k * TK, M, o, m, d, lane);
    __syncthreads();  // tile consumed before its stage (and the converted tile) is overwritten
  }
  cp_async_wait<0>();

  if (warp_active) {
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      if (M.prow[hr] >= packed) continue;
      const RowOut<D, QT> w = row_out<D, QT>(P, SDv, it, c.q_start, c.qo_len, M.prow[hr], m[hr], d[2 * hr]);
#pragma unroll
      for (int n = 0; n < NT_D; ++n) w.put(n * 8 + 2 * tq, o[n][hr * 2], o[n][hr * 2 + 1]);
      if (tq == 0) w.put_lse();
    }
  }
}

// ---- decode item: 16 packed rows shared by the 4 warps; each warp streams its own KV tiles of 16 tokens ----
// (tiles warp, warp + 4, ...) through a kDecStages-deep cp.async ring and keeps its own softmax state; the
// four states are merged through shared memory (fp32, by LSE) at the end of the item.
// The decode item's meeting points: the CTA (bar 0, the fused kernel's 128-thread CTAs) or named barrier `bar` of
// one warpgroup (the warp-specialised fused kernel, whose warpgroups run decode items on their own).
__device__ __forceinline__ void group_sync(int bar) {
  if (bar == 0) __syncthreads();
  else asm volatile("bar.sync %0, 128;\n" ::"r"(bar) : "memory");
}

// tid: 0 .. 127 within the group that runs the item; smem: the group's own decode region (Smem::dec_bytes_of(NS)).
// STAGES: each warp's ring depth (0: kDecStages<D>, the fused kernel's).
template <int D, class QT, class KVT, bool F, int STAGES = 0>
__device__ __forceinline__ void decode_item(const KParams& P, const SideDev& SDv, const WorkItem& it,
                                            unsigned char* smem, int tid, int bar = 0) {
  using L = Smem<D, KVT>;
  constexpr int SD = D + 8;
  constexpr int NT_D = D / 8;
  constexpr int NS = STAGES > 0 ? STAGES : kDecStages<D>;
  constexpr int WB = L::dec_warp_of(NS);  // one warp's region
  constexpr int T = kTileKVDecode;
  const int warp = tid >> 5, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
  const ItemCtx c = item_ctx(P, SDv, it, kTileQDecode);
  const int packed = c.packed, kv_lo = c.kv_lo, kv_hi = c.kv_hi;

  QT* Qs = reinterpret_cast<QT*>(smem);
  unsigned char* wbase = smem + L::dec_q + warp * WB;
  QT* Kc = reinterpret_cast<QT*>(wbase + NS * L::stage(T));  // fp8: converted tiles
  QT* Vc = Kc + T * SD;
  auto stage_k = [&](int s) { return wbase + s * L::stage(T); };
  auto stage_v = [&](int s) { return wbase + s * L::stage(T) + (L::kConv ? T * D : L::tile16(T)); };

  load_q<D, QT, F>(SDv, c, P.gdiv, it.kv_head, it.row_begin, kTileQDecode, Qs, tid);
  const int n_all = kv_hi > kv_lo ? (kv_hi - kv_lo + T - 1) / T : 0;
  const int nt = n_all > warp ? (n_all - warp + kWarps - 1) / kWarps : 0;  // this warp's tiles
  auto tile_start = [&](int k) { return kv_lo + (warp + k * kWarps) * T; };

  float o[NT_D][4];
#pragma unroll
  for (int n = 0; n < NT_D; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, d[4] = {0.f, 0.f, 0.f, 0.f};
  const RowMask M = row_mask(SDv, c, P.gdiv, it.kv_head, it.row_begin);

  const KvSrc src = kv_src<KVT>(SDv, c.page_base, it.kv_head);
  // Tile k's copies (warp-uniform: k < nt); with the page vector, the next tile's pages are looked up after them.
  constexpr bool PV = PODCHECK_DEC_PV != 0 && T == 16;
  // v3.9: 16-bit tiles without features stored unpadded and xor-swizzled (XS), so each token row's copy lands in
  // whole 128-byte segments of shared memory (notebook step 14); fp8 (converted tiles) and RoPE (rewritten in
  // place) keep the padded rows
  constexpr bool XS = PODCHECK_DEC_XS != 0 && !L::kConv && !F;
  static_assert(!XS || (L::dec_q % 128 == 0 && WB % 128 == 0 && L::stage(T) % 128 == 0 && L::tile16(T) % 128 == 0),
                "XS: every warp's stage rows start on 128-byte boundaries (the region itself is 128-byte aligned)");
  std::uint32_t pv = PV && nt > 0 ? decode_pages(SDv, src, tile_start(0), kv_hi, lane) : 0u;
  // fp8 in 16-element chunks where the KV allows (warp-uniform): the copies and the conversion share the mapping
  const bool wide = L::kConv && SDv.kv_wide;
  constexpr int CE = L::kConv ? 16 : 8;  // the wide copies' chunk (16-bit KV: never wide)
  auto issue = [&](int k) {
    if (wide)
      issue_kv_tile<D, T, 32, KVT, false, PV, false, CE>(SDv, src, tile_start(k), kv_hi, stage_k(k % NS),
                                                         stage_v(k % NS), lane, pv);
    else
      issue_kv_tile<D, T, 32, KVT, false, PV, XS>(SDv, src, tile_start(k), kv_hi, stage_k(k % NS), stage_v(k % NS),
                                                  lane, pv);
    if (PV && k + 1 < nt) pv = decode_pages(SDv, src, tile_start(k + 1), kv_hi, lane);
  };
  // Prologue: NS - 1 tiles in flight (one commit group per tile slot, empty groups past the end).
#pragma unroll
  for (int s = 0; s < NS - 1; ++s) {
    if (s < nt) issue(s);
    cp_async_commit();
  }
  group_sync(bar);  // the Q tile is visible to every warp
  for (int k = 0; k < nt; ++k) {
    __syncwarp();  // every lane is done with tile k - 1 (its stage is refilled next, the converted tile too)
    const int kn = k + NS - 1;
    if (kn < nt) issue(kn);
    cp_async_commit();
    cp_async_wait<NS - 1>();  // this lane's copies of tile k are done
    const int s = k % NS;
    const QT* Kt;
    const QT* Vt;
    if constexpr (L::kConv) {
      if (wide) convert_kv_tile<D, T, QT, KVT, 32, 16>(stage_k(s), stage_v(s), Kc, Vc, lane);
      else convert_kv_tile<D, T, QT, KVT, 32>(stage_k(s), stage_v(s), Kc, Vc, lane);
      Kt = Kc;
      Vt = Vc;
    } else {
      Kt = reinterpret_cast<const QT*>(stage_k(s));
      Vt = reinterpret_cast<const QT*>(stage_v(s));
    }
    __syncwarp();  // all lanes' copies (converted stores) of tile k visible to the warp
    if (F && SDv.rope) {
      rope_k_tile<D, T, QT>(const_cast<QT*>(Kt), SDv, tile_start(k), lane, 32);
      __syncwarp();
    }
    attend_tile<D, T, QT, F, XS>(Qs, Kt, Vt, tile_start(k), M, o, m, d, lane);
  }
  cp_async_wait<0>();
  __syncwarp();  // the warp's stages are free: its merge scratch overlays them

  float* so = reinterpret_cast<float*>(wbase);  // [16][SD] fp32, then m[16], d[16]
  float* sm = so + kTileQDecode * SD;
  float* sdd = sm + kTileQDecode;
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    const int row = gq + 8 * hr;
#pragma unroll
    for (int n = 0; n < NT_D; ++n)
      *reinterpret_cast<float2*>(so + row * SD + n * 8 + 2 * tq) = make_float2(o[n][hr * 2], o[n][hr * 2 + 1]);
    if (tq == 0) {
      sm[row] = m[hr];
      sdd[row] = d[2 * hr];
    }
  }
  group_sync(bar);  // all four warps' states in shared memory

  for (int e = tid; e < kTileQDecode * (D / 2); e += kThreads) {
    const int row = e / (D / 2), col = (e % (D / 2)) * 2;
    const int prow = it.row_begin + row;
    if (prow >= packed) continue;
    float mw[kWarps], mxw = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      mw[w] = reinterpret_cast<const float*>(smem + L::dec_q + w * WB)[kTileQDecode * SD + row];
      mxw = fmaxf(mxw, mw[w]);
    }
    float dsum = 0.f, a0 = 0.f, a1 = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float* wo = reinterpret_cast<const float*>(smem + L::dec_q + w * WB);
      const float f = (mw[w] == -INFINITY) ? 0.f : exp2f(mw[w] - mxw);
      dsum += f * wo[kTileQDecode * SD + kTileQDecode + row];
      const float2 v = *reinterpret_cast<const float2*>(wo + row * SD + col);
      a0 += f * v.x;
      a1 += f * v.y;
    }
    const RowOut<D, QT> w = row_out<D, QT>(P, SDv, it, c.q_start, c.qo_len, prow, mxw, dsum);
    w.put(col, a0, a1);
    if (col == 0) w.put_lse();
  }
}

// ---- the fused kernel ----------------------------------------------------------------------------------
// Minimum CTAs per SM for the register budget: what shared memory allows anyway (D 64: 3, D 128: 3 on sm_90 from
// v3.4, 2 on sm_80, whose 164 KB hold two; D 256: 1). At D 128 the third CTA costs ptxas 52-84 bytes of spill
// (168 registers); it pays: mix A fused 0.376 -> 0.346 ms, B 0.657 -> 0.534, C 0.357 -> 0.321 (notebook step 6).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
template <int D> constexpr int kMinCtas = D == 256 ? 1 : D == 128 ? 2 : 3;
#else
template <int D> constexpr int kMinCtas = D == 256 ? 1 : 3;
#endif
template <int D, class QT, class KVT, bool F>
__global__ void __launch_bounds__(kThreads, kMinCtas<D>) pod_fused_kernel(const __grid_constant__ KParams P) {
  extern __shared__ uint4 smem_raw[];
  unsigned char* smem = smem_aligned_1024(smem_raw);  // Smem::bytes has the 1023 bytes of slack
  __shared__ int s_item, s_side, s_role;
  const int tid = threadIdx.x;

  const bool timed = P.timeline != nullptr;  // a timeline launch (uniform)
  std::uint64_t t_entry = 0, t_item = 0;        // thread 0's: the CTA's entry, the current item's start
  zero_next_counters(P);
  if (tid == 0) {
    if (timed) t_entry = globaltimer();
    const int ticket = atomicAdd(&P.counters[2 + (smid() % kMaxSms)], 1);
    s_role = (ticket % P.ctas_per_sm) < P.prefill_ctas_per_sm ? 0 : 1;
  }
  __syncthreads();
  const int role = s_role;
  unsigned exhausted = 0;  // bit s: queue s is empty (a bit mask, not an array: no local memory)

  for (;;) {
    if (timed && tid == 0) t_item = globaltimer();
    if (tid == 0) {
      int side = -1, idx = -1;
      for (int attempt = 0; attempt < 2 && side < 0; ++attempt) {
        const int sd = attempt == 0 ? role : 1 - role;
        if (((exhausted >> sd) & 1u) || P.side[sd].n_items == 0) { exhausted |= 1u << sd; continue; }
        const int k = atomicAdd(&P.counters[sd], 1);
        if (k < P.side[sd].n_items) { side = sd; idx = k; }
        else exhausted |= 1u << sd;
      }
      s_side = side;
      s_item = idx;
    }
    __syncthreads();
    const int side = s_side, item_idx = s_item;
    if (side < 0) {
      if (timed && tid == 0) put_span(P, t_entry, -1, role, role);
      return;
    }
    // each role's side by a compile-time index: its parameters are constant-bank operands, not loads
    if (side == 0) prefill_item<D, QT, KVT, F>(P, P.side[0], P.side[0].items[item_idx], smem, tid);
    else decode_item<D, QT, KVT, F>(P, P.side[1], P.side[1].items[item_idx], smem, tid);
    __syncthreads();  // smem (and s_item) reuse by the next item
    if (timed && tid == 0) put_span(P, t_item, item_idx, side, role);
  }
}

// ---- the warp-specialised sm_90a prefill (notebook step 9) -------------------------------------------------------
// For launches at 16-bit KV without the feature paths, head_dim 64 / 128, in three forms (MODE). One CTA per SM,
// persistent, three warpgroups. A launch whose only work is prefill (the bench's "prefill alone", a chunked
// prefill with no decodes; kWsPrefillOnly, notebook step 9):
//   - warpgroup 0, the producer (setmaxnreg down to kWsProducerRegs): takes the next item from the queue and hands
//     it on through a two-slot item ring, copies the item's 128-row Q tile and then its K / V tiles (TK tokens,
//     page-table lookups per row, cp.async) into an NS-stage ring; each copy's completion is tracked by an mbarrier
//     (cp.async.mbarrier.arrive.noinc: a thread's arrival lands when its copies have), so nobody waits on a copy
//     but the warpgroups that read it;
//   - warpgroups 1 and 2, the consumers (setmaxnreg up to kWsConsumerRegs): 64 rows each of the item's 128, both
//     reading the same K / V stage (half the shared-memory traffic per FLOP of v3.4's 64-row CTAs); per tile: wait
//     for the stage's full barrier, S = Q K^T, softmax, O += P V on wgmma (attend_tile_wg, the same arithmetic as
//     the fused kernel's sm_90a prefill), then an arrival on the stage's empty barrier.
// Each consumer overlaps tile k's softmax with tile k - 1's P V (PODCHECK_WS_PIPE, default); the two consumers run
// unsynchronised (a ping-pong order, PODCHECK_WS_PINGPONG, measured no faster). Items: 128 packed rows x one KV
// head x one KV chunk (the planner's items with kWsRows rows), taken from a queue in the planner's order.
// Launches with both sides (notebook step 10; opt-in, PODCHECK_CUDA_WS=2 / 3: neither measured faster than the
// fused kernel yet):
//   - kWsCoResident (both sides on every SM): the producer and ONE consumer warpgroup run the prefill items (64 rows
//     each, the planner's kTileQ items); warpgroup 2 runs decode items from the decode queue (the fused kernel's
//     decode_item in its own shared region, named barrier 3 + warpgroup) beside the prefill (one side's tensor work
//     over the other's memory traffic); once the prefill queue is empty, the consumer joins it on decode items in
//     the region of the K / V ring and Q tile. Registers 56 + 224 + 224, the launch's 3 x 168.
//   - kWsSplitSms (SMs split by side): CTAs 0 .. ws_prefill_ctas - 1 are the prefill-only form (producer, two
//     consumers, 128-row items), whose consumers run decode items once the prefill queue is empty (two regions of 2
//     stages in the ring and Q tile); the other CTAs' three warpgroups run decode items (168 registers each, the
//     fused kernel's decode layout, one region each). ws_split_sms (pod_plan.hpp) chooses the split.
// KV tokens per tile: 64 (4 stages) with the pipelined consumer loop; 128 (2 stages) leaves the pipelined loop too few
// registers (S, two P and O: 224 of the consumers' 224) and measured no faster without it (notebook step 9)
#ifndef PODCHECK_WS_TK
#define PODCHECK_WS_TK 64
#endif
// the prefill-only form's own tile (the fused forms keep PODCHECK_WS_TK: their shared memory holds decode regions too)
#ifndef PODCHECK_WS_TK_PREFILL
#define PODCHECK_WS_TK_PREFILL PODCHECK_WS_TK
#endif
constexpr int kWsThreads = 384;    // three warpgroups
// The kernel's forms (template MODE): prefill only; fused with both sides on every SM; fused with SMs split by side.
constexpr int kWsPrefillOnly = 0, kWsCoResident = 1, kWsSplitSms = 2;
static_assert(kWsPrefillOnly == kFormWsPrefillOnly && kWsCoResident == kFormWsCoResident &&
                  kWsSplitSms == kFormWsSplitSms,
              "pod_plan's launch_form names the forms by these numbers");
// packed rows per prefill item: 64 per consumer warpgroup (two consumers, one in kWsCoResident)
template <int MODE> constexpr int kWsRows = MODE == kWsCoResident ? 64 : 128;
// (both sides on every SM) the prefill's K / V ring depth (0: as deep as shared memory allows, at most 4) and the
// decode warpgroup's stages per warp. Measured (step 10): 3 and 3 (the default, which shared memory then allows) as
// fast as 4 and 2; 2 and 4 makes the decode items faster and the one-consumer prefill much slower (mix B +40 %)
#ifndef PODCHECK_WSF_PREFILL_STAGES
#define PODCHECK_WSF_PREFILL_STAGES 0
#endif
#ifndef PODCHECK_WSF_DECODE_STAGES
#define PODCHECK_WSF_DECODE_STAGES 3
#endif
// 1: the prefill's producer fills a stage with tensor copies, one per 64-column block of K and of V, each from lane 0
// of one producer warp, where the tile lies whole within one page and the item's KV range (PreparedPod sets the maps
// up when the page size is a multiple of the tile); cp.async elsewhere. In the loop alone at pages of 64 such copies
// ran within 2 % of stages already in shared memory, where the cp.async gather costs 17 % (notebook step 31). In the
// kernel (step 32, H100): the quick tier passes; mix A at pages of 64, prefill alone 0.101-0.105 ms against
// 0.107-0.111, fused unchanged. Opt-in.
#ifndef PODCHECK_WS_TMA
#define PODCHECK_WS_TMA 2
#endif
constexpr bool kWsTma = PODCHECK_WS_TMA != 0;
// 2: as 1, and at pages smaller than the tile (8 tokens or more, dividing it) a tile that begins a page and lies
// within the item's KV range takes K by tensor copies, one per page and 64-column block from lane 0 of the producer
// warps, and V by the gather (the loop bench's tmix, notebook step 35: half the cp.async traffic, half the tensor
// copies' issue). Step 36 (H100, two rounds against v3.17's module, both carried as modules): prefill alone A
// 0.105-0.106 -> 0.099 ms (40.9-41.9 -> 43.7-43.8 % of GEMM; a tile 2,004 -> 1,764 cycles), B 0.294-0.296 -> 0.260-0.261;
// fused B 0.443-0.446 -> 0.428-0.430, A and C unchanged; the quick tier passes, the default tier 3,211 of 4,017 cases
// (the rest not reached in its box) with no failure. The default from v3.18 (0: the gather alone, as v3.17).
constexpr bool kWsTmaMix = PODCHECK_WS_TMA == 2;
// 1: the producer's thread 0 reads each item and its context (WorkItem, then ItemCtx: two rounds of dependent global
// loads) when it takes the index, and leaves them beside it in shared memory (WsItemSlot); the consumers and the other
// producer threads copy them from there, where by default each loads them itself at the item's start, behind the
// producer's cp.async traffic in the same SM. Notebook step 32: an item costs ~5-7 us beyond its tiles, and this is
// one candidate; the timeline's phase c_ready measures it. Measured (H100, step 33, one process): the item's start
// (index, item and context ready) 0.38 -> 0.19 us, prefill alone A 0.113 -> 0.107 ms, fused A 0.400 -> 0.394, B 0.449
// -> 0.439; the quick tier passes. The default from v3.16 (0: v3.15's loads).
#ifndef PODCHECK_WS_CTX
#define PODCHECK_WS_CTX 1
#endif
constexpr bool kWsCtx = PODCHECK_WS_CTX != 0;
// K > 0 (with PODCHECK_WS_CTX): the producer's thread 0 takes the next item's index, item and context when it has
// issued the tile K before the current item's last (its first, for shorter items), not after the last: by default the
// producer's turn from one item to the next (the atomic, then two rounds of dependent loads, then the first tile's
// page lookups) eats the lead of NS tiles it holds over the consumers. A CTA then claims its next item that much
// earlier, which can lengthen the launch's tail by up to K tiles. Measured (H100, step 33, K = 8): no gain, as the
// phases explain: the producer already takes the next item 7-13 us before the consumers start it (fused A 0.410 ms
// against 0.400 without, B 0.444 against 0.449, one process each). Opt-in.
#ifndef PODCHECK_WS_EARLY
#define PODCHECK_WS_EARLY 0
#endif
constexpr int kWsEarly = PODCHECK_WS_EARLY;
static_assert(kWsEarly == 0 || kWsCtx, "PODCHECK_WS_EARLY needs PODCHECK_WS_CTX: the early item waits in its slot");
#ifndef PODCHECK_WS_PRODUCER_REGS
#define PODCHECK_WS_PRODUCER_REGS 56
#endif
// 1: each consumer overlaps tile k's softmax with tile k - 1's P V (two commit groups per iteration)
#ifndef PODCHECK_WS_PIPE
#define PODCHECK_WS_PIPE 1
#endif
constexpr bool kWsPipe = PODCHECK_WS_PIPE != 0;
// 1 (with PODCHECK_WS_PIPE): the two consumers take turns issuing their products (named barriers 1 and 2), so one's
// softmax runs while the other's products do (FlashAttention-3's ping-pong order)
#ifndef PODCHECK_WS_PINGPONG
#define PODCHECK_WS_PINGPONG 0
#endif
constexpr bool kWsPingPong = kWsPipe && PODCHECK_WS_PINGPONG != 0;
// 1 (with PODCHECK_WS_PIPE, not PINGPONG): FlashAttention-3's order of the pipelined loop. Tile k's weights are
// formed in place in S, in fp32, before the wait for tile k - 1's P V, and rounded into P after it; the row sums
// are fp32 adds of the unrounded weights, per thread, the quad's parts added once per item. 0 (default): P is
// rounded before that wait and the sums of the rounded P are an mma (row_sums), as in the fused kernel. In both
// orders ptxas schedules the wait ahead of the exponentials (SASS, notebook step 26), so neither overlaps the
// softmax with the P V; 1 measured 1-5 % slower on the prefill alone (H100), and passes the quick and default tiers
// 2: the same arithmetic, the wait for tile k - 1's P V moved to the top of iteration k + 1 (tile k's weights kept
// in fp32 across the loop's back-edge, rounded into P there): to put that wait ahead of tile k's exponentials ptxas
// would have to move it across the back-edge, and it did not: the SASS has the exponentials ahead of the wait. Yet
// it measured 3-11 % slower than 0 (the fold now sits between the wait and the next products; notebook step 27)
#ifndef PODCHECK_WS_FSUM
#define PODCHECK_WS_FSUM 3
#endif
constexpr bool kWsFsum = kWsPipe && !kWsPingPong && PODCHECK_WS_FSUM == 1;
constexpr bool kWsDefer = kWsPipe && !kWsPingPong && PODCHECK_WS_FSUM == 2;
// 3: the same fp32 sums in the default order: tile k's weights rounded into P before the wait for tile k - 1's P V,
// into the P array that P V does not read (two arrays whose roles swap from tile to tile, the steps in pairs: a copy
// from a second array, as the default makes, let ptxas serialise the products once no mma reads the old P, C7513;
// notebook step 30). The loop bench's fsum2 mode: 21 % fewer cycles per tile than the default in the loop alone;
// in the kernel (H100, step 31) the prefill alone is slower (A 4-5 %, B 1-3 %, C 0-2 %); the quick tier passes.
// Beside K by tensor copies (PODCHECK_WS_TMA=2, which halved the gather that capped it; notebook step 38, H100, four
// rounds against v3.18 in alternating processes): prefill alone B 0.255-0.258 -> 0.233-0.235 ms (64 -> 70 % of GEMM),
// C 0.081-0.082 -> 0.074-0.077, A 45.3-46.0 -> 45.5-46.2 % of GEMM; fused A 0.384-0.385 -> 0.387-0.391, B 0.421 ->
// 0.418-0.420, C unchanged; A's later items 1,736 -> 1,606 cycles a tile; the quick tier passes (531 / 531). The
// default from v3.19 (0: the row-sum mma, as v3.18).
constexpr bool kWsFsumPair = kWsPipe && !kWsPingPong && PODCHECK_WS_FSUM == 3;
// 1 (with FSUM=3): the pair loop also runs an even count's last step, leaving it at the P array that step wrote, so
// the step's code is inlined twice instead of three times (and the last P V once per array, as before). Notebook
// step 39: under FSUM=3 the first wave's items end their loops together, whatever their length, and the even counts
// (one more inlined step) 2-17 us later; a launch that follows itself, its code still in L2, is 6 % faster. The
// prefill-only form's code is 151,040 bytes against FSUM=0's 97,920. Opt-in, not yet run.
#ifndef PODCHECK_WS_FSUM_TAIL
#define PODCHECK_WS_FSUM_TAIL 0
#endif
constexpr bool kWsFsumTail = kWsFsumPair && PODCHECK_WS_FSUM_TAIL != 0;
// 1 (with PODCHECK_WS_PIPE): the item's Q tile stays in shared memory, stored like K ([rows][64] blocks, 128-byte
// swizzle), and S = Q K^T takes its A operand from there (WgmmaSS) instead of 32 registers per thread of fragments:
// the registers that 128-key tiles need (PODCHECK_WS_TK_PREFILL=128). The consumers then hold the tile until the
// item's last S is done, so the producer copies the next item's Q only after that (q_empty). Measured (H100, notebook
// step 27): at 64-key tiles as fast as Q in registers; with 128-key tiles the prefill alone is 4-7 % slower (still
// 52 / 64 bytes of spill), so it stays opt-in. Both pass the quick tier.
#ifndef PODCHECK_WS_QSMEM
#define PODCHECK_WS_QSMEM 0
#endif
constexpr bool kWsQsmem = PODCHECK_WS_QSMEM != 0;
// 1 (with PODCHECK_WS_PIPE, not PINGPONG or FSUM): the products a tile ahead. Tile k - 1's P V and tile k + 1's
// S = Q K^T (a second S accumulator) are issued before tile k's softmax and waited for after it, then the rescale;
// so the softmax runs beside both products and a consumer never waits for an S it has just issued (the default
// waits for tile k's S before its softmax and overlaps only tile k - 1's P V). Every wait is for groups committed
// in the same step (a group waited for across the loop's back-edge made ptxas serialise the wgmma, C7514). The same
// operations on O and d as the default, in the same order. Measured (H100, notebook step 30): 5 % faster than the
// default in the loop bench, 2-9 % slower on the prefill alone in the kernel (and fused B 15-20 % slower); it passes
// the quick tier.
#ifndef PODCHECK_WS_AHEAD
#define PODCHECK_WS_AHEAD 0
#endif
constexpr bool kWsAhead = kWsPipe && PODCHECK_WS_AHEAD != 0 && PODCHECK_WS_FSUM == 0;
static_assert(!kWsQsmem || kWsPipe, "Q from shared memory (PODCHECK_WS_QSMEM) is a form of the pipelined loop");
// registers per thread after setmaxnreg: 128 x 56 + 256 x 224 = 64,512 of the SM's 65,536
constexpr int kWsProducerRegs = PODCHECK_WS_PRODUCER_REGS;
constexpr int kWsConsumerRegs = (65536 - 128 * kWsProducerRegs) / 256 / 8 * 8 > 256 ? 256 : (65536 - 128 * kWsProducerRegs) / 256 / 8 * 8;
// 1: the group decode's tensor copies carry an L2 evict-first policy. Its KV is read once, and streamed at the copy
// rate it evicts from L2 what the prefill's items read again (their KV, 16 or more times each): beside the decode the
// prefill's 32-tile items take 50-56 us against 37.5-40.5 alone (notebook step 32). Measured (H100, step 33, two
// rounds alternating with the tree): fused A 0.399 -> 0.389-0.393 ms, C 0.403-0.405 -> 0.385-0.389, B unchanged; the
// quick tier passes. The default from v3.16 (0: no policy, as v3.15).
#ifndef PODCHECK_GD_EVICT_FIRST
#define PODCHECK_GD_EVICT_FIRST 1
#endif
constexpr bool kGdEvictFirst = PODCHECK_GD_EVICT_FIRST != 0;
// 1: a prefill item's output goes through shared memory: each consumer warp writes its 16 O rows there (the same
// scaled and rounded values as by default), and its lanes hand them to bulk copies (a lane a packed row) that write
// them to global memory while the warp goes on to its next item; by default each thread stores its 4-byte pairs
// itself. Notebook step 34: those stores took 2 us an item alone and 4.7 us beside the decode (11 us in the launch's
// first wave), waiting behind the SM's copies. Final outputs only (a split item's partial rows keep the stores),
// 16-byte-aligned rows, and only where the padded rows (2 x 64 x (2 D + 16) bytes) fit beside a ring of unchanged
// depth: the split form and the prefill-only form, not the co-resident fused kernel. Step 35 (H100, three rounds
// against v3.16's module): an item's epilogue 1.92 -> 1.50 us alone, 4.54 -> 2.43 fused; prefill alone A
// 0.106-0.108 -> 0.102-0.105 ms, fused A 0.388-0.389 -> 0.383-0.386, B and C unchanged; the quick tier passes. Its
// first form (one warp issuing the consumer's 64 copies between two 128-thread barriers, c9ed3b4) was slower: the
// epilogue 2.08 -> 3.14 us alone, fused B 0.444-0.446 -> 0.449. The default from v3.17 (0: each thread's own
// stores, as v3.16; sm_90a: no C7513 / C7514, no spills in the prefill-only form).
#ifndef PODCHECK_WS_OSTAGE
#define PODCHECK_WS_OSTAGE 1
#endif
constexpr bool kWsOStage = PODCHECK_WS_OSTAGE != 0;
// 1 (the pipelined loop's default order, Q in registers, the item hand-over in shared memory): a consumer begins its
// next item in the current one's last step. The next item's tile-0 S = Q K^T is issued with the current item's last
// P V and its softmax runs while that P V does, so the tensor core does not drain at each item boundary; by default
// the S of an item's tile 0, that tile's softmax and the item's last P V each run with nothing beside them. Notebook
// step 36: an item's tiles cost 2.18 us + 1.011 us a tile (the prefill alone of mix A with PODCHECK_WS_TMA=2), ~8 %
// of mix A's prefill in those 2.18 us. The same operations on the same values (the new item's zero O and row sums
// are not rescaled by its tile 0, which leaves them zero), so its outputs should be bit for bit the default's. The
// skips are plain ifs, and ptxas serialises no wgmma for them (no C7513 / C7514, sm_90a). Step 37 (H100, one round
// against v3.18): no faster, prefill alone A 0.100 -> 0.101 ms, B 0.261 -> 0.264, fused equal. Opt-in.
#ifndef PODCHECK_WS_XITEM
#define PODCHECK_WS_XITEM 0
#endif
constexpr bool kWsXitem =
    PODCHECK_WS_XITEM != 0 && kWsPipe && PODCHECK_WS_FSUM == 0 && !kWsAhead && !kWsQsmem && kWsCtx;
// 1: each prefill item of pod_ws_kernel takes its KV tiles from tile r on, wrapping round (tile k of the loop is tile
// (k + r) mod n), r a hash of the item's index; by default every item runs from its first tile. Notebook step 38: in
// mix A's prefill alone the first wave of items (132 CTAs, 16-17 on each of 8 KV heads, all starting together) runs
// 1.1-1.5 us a tile where later items run 0.93-1.0, its items ending together whatever their length; a candidate
// cause is those CTAs reading each head's same tiles at the same moment (the same L2 lines asked by 16 SMs at once).
// The online softmax is exact in any order (a row whose first tiles are all masked keeps its maximum at -inf, as a
// sliding window's rows already do), so only the rounding of the sums changes. Opt-in, not yet run.
// 2: every item takes its last tile first, then the others from tile 0 on (r = n - 1). A causal item's diagonal cuts
// only its last tile (mix A: 128 packed rows are 32 query positions, their diagonal inside one 64-key tile), so the
// masked path then runs in tile 0's code alone, never in the loop's inlined copies of the step, and the end of an
// item runs no code that its start has not (notebook step 40: the masked path is 56 % of the prefill-only kernel's
// code, and the first wave's items wait at their ends on code no SM has run yet in the launch). Opt-in, not yet run.
#ifndef PODCHECK_WS_ROTATE
#define PODCHECK_WS_ROTATE 0
#endif
constexpr bool kWsRotate = PODCHECK_WS_ROTATE != 0;
static_assert(!kWsRotate || !kWsXitem, "PODCHECK_WS_ROTATE: the item overlap begins the next item at its tile 0");
// (kWsRotate) the tile an item of n tiles begins at: the producer and the consumers compute it alike
__device__ __forceinline__ int ws_rotation(int idx, int n) {
  if constexpr (PODCHECK_WS_ROTATE == 2) return n > 1 ? n - 1 : 0;
  return kWsRotate && n > 1 ? int(((unsigned(idx) * 2654435761u) >> 16) % unsigned(n)) : 0;
}
// The tile that the loop's tile k of an item of n tiles runs on, rr = ws_rotation(idx, n): the producer's copies and
// the consumers' masks both take it from here, so they cannot disagree; tile k by default
__device__ __forceinline__ int ws_tile(int k, int rr, int n) {
  if constexpr (kWsRotate) return k + rr < n ? k + rr : k + rr - n;
  else return k;
}
// 1: before its first prefill item, each CTA's producer asks L2 for its share of the prefill side's KV pages (every
// page's K and V extent, pages spread over the CTAs; cp.async.bulk.prefetch.L2, a hint that loads nothing into the
// CTA). Notebook step 39 asked whether the first wave of mix A's prefill (every CTA's first item, reading each
// head's tiles for the first time from HBM: the benchmark rotates input sets past L2) waits on cold KV lines. It
// does not: with all of A's prefill KV (8 MB) asked for at the start, the first items end as before, and one round
// on an H100 timed prefill alone 0.098 -> 0.100 ms, fused 0.389 -> 0.395. Opt-in.
#ifndef PODCHECK_WS_L2PF
#define PODCHECK_WS_L2PF 0
#endif
constexpr bool kWsL2pf = PODCHECK_WS_L2PF != 0;
// (kWsL2pf) the extent of one page of K or V, from its first element to its last (slot, head)'s row, in bytes
// rounded in to 16-byte bounds; thread t of the producer warpgroup (128) in CTA b of nb prefetches pages
// b + nb * t, b + nb * (t + 128), ...
template <int D, class KVT>
__device__ __forceinline__ void ws_l2_prefetch(const KParams& P, const SideDev& SDv, int t, int b, int nb) {
  const pod_kv& kv = SDv.s.kv;
  const int np = kv.indptr[SDv.s.num_requests];
  const std::int64_t hk = P.num_kv_heads - 1, ps = kv.page_size - 1;
  const std::int64_t ek = (ps * kv.k_stride_slot + hk * kv.k_stride_head + D) * std::int64_t(sizeof(KVT));
  const std::int64_t ev = (ps * kv.v_stride_slot + hk * kv.v_stride_head + D) * std::int64_t(sizeof(KVT));
  auto one = [](const void* base, std::int64_t off, std::int64_t bytes) {
    const std::uintptr_t a0 = reinterpret_cast<std::uintptr_t>(base) + std::uintptr_t(off);
    const std::uintptr_t lo = (a0 + 15) & ~std::uintptr_t(15), hi = (a0 + std::uintptr_t(bytes)) & ~std::uintptr_t(15);
    if (hi > lo)
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(lo), "r"(std::uint32_t(hi - lo)) : "memory");
  };
  for (int p = b + nb * t; p < np; p += nb * 128) {
    const std::int64_t pg = kv.indices[p];
    one(kv.k, pg * kv.k_stride_page * std::int64_t(sizeof(KVT)), ek);
    one(kv.v, pg * kv.v_stride_page * std::int64_t(sizeof(KVT)), ev);
  }
}
// (split SMs) the group decode's pipelines (gd_cta below): their constants and shared-memory layout
constexpr int kGdHeads = kGroupDecodeHeads, kGdStages = 3, kGdPipes = 2, kGdTokens = kGroupDecodeTokens;
constexpr int kGdFirst = 1, kGdLast = 2, kGdEmpty = 4, kGdEnd = 8;  // a stage's meta flags
template <int D> struct GdSmem {
  static constexpr int half = kGdHeads * kGdTokens * 128;  // one 64-column block of K (or V) of a stage: [heads][16][64]
  static constexpr int kv = (D / 64) * half;
  static constexpr int stage = 2 * kv;  // K then V
  static constexpr int meta_off = kGdStages * stage;             // int4 per stage: group, first token, flags
  static constexpr int bar_off = meta_off + 16 * kGdStages;      // full[stages], empty[stages]
  static constexpr int pipe = (bar_off + 16 * kGdStages + 1023) / 1024 * 1024;
  static constexpr int bytes = kGdPipes * pipe;
  static_assert(half % 1024 == 0, "each head's 16 x 64 block starts a swizzle period (2 KB per head)");
};
// (PODCHECK_WS_CTX) an item of the ring and its context, as the producer's thread 0 read them with its index
struct WsItemSlot {
  WorkItem it;
  ItemCtx c;
};
// Layout: K / V ring | Q tile | (kWsOStage) the output rows | (kWsCoResident) the decode warpgroup's region | mbarriers
// | item ring and decode slots | (kWsCtx) the ring's two WsItemSlots;
// kWsSplitSms: the mbarriers after the largest of that, a decode CTA's three regions and the group decode's pipelines.
template <int D, int MODE> struct WsSmem {
  static constexpr bool FUSED = MODE == kWsCoResident;
  static constexpr int TK = MODE == kWsPrefillOnly ? PODCHECK_WS_TK_PREFILL : PODCHECK_WS_TK;  // KV tokens per tile
  static constexpr int kv_block = TK * D * 2;        // K or V of one stage: D / 64 swizzled [TK][64] blocks
  static constexpr int stage = 2 * kv_block;
  // the item's Q tile: padded rows (ldmatrix into registers), or (kWsQsmem) D / 64 swizzled [rows][64] blocks
  static constexpr int q_block = kWsRows<MODE> * 128;
  static constexpr int q_bytes = kWsQsmem ? (D / 64) * q_block : kWsRows<MODE> * (D + 8) * 2;
  // (kWsCoResident) the decode warpgroup's region: decode_item's layout with DS stages per warp; the consumer, once
  // the prefill queue is empty, runs decode items with DS1 stages in the region of the ring and the Q tile
  static constexpr int DS = FUSED ? PODCHECK_WSF_DECODE_STAGES : 0;
  static constexpr int dec_bytes = FUSED ? Smem<D, __half>::dec_bytes_of(DS) : 0;
  static constexpr int kMax = 232448 - 1024 - 256;  // 227 KB per CTA (sm_90), the alignment slack, barriers and slots
  static constexpr int ring_max = (kMax - q_bytes - dec_bytes) / stage;
  static constexpr int NS_fit = ring_max < 2 ? 2 : ring_max > 4 ? 4 : ring_max;
  static constexpr int NS = FUSED && PODCHECK_WSF_PREFILL_STAGES > 0 ? PODCHECK_WSF_PREFILL_STAGES : NS_fit;  // ring depth
  // (kWsOStage) the consumers' output rows: 64 a consumer, each D * 2 bytes padded by 16 (a warp's 4-byte writes
  // from its mma fragments, 8 rows x 4 columns, fall in 32 distinct banks); kept only where the ring keeps its depth
  static constexpr int o_row = D * 2 + 16;
  static constexpr int o_want = 2 * 64 * o_row;
  static constexpr int ring_max_o = (kMax - q_bytes - dec_bytes - o_want) / stage;
  static constexpr bool OST = kWsOStage && !FUSED && ring_max_o >= NS;
  static constexpr int o_bytes = OST ? o_want : 0;
  // (split SMs) a decode CTA's three warpgroups: regions of the fused kernel's decode layout, one per warpgroup; a
  // prefill CTA's two consumers, once the prefill queue is empty: two regions of 2 stages in the ring and Q tile
  static constexpr int dec3_bytes = MODE == kWsSplitSms ? 3 * Smem<D, __half>::dec_bytes : 0;
  static constexpr int DS1 = MODE == kWsPrefillOnly ? 0
                             : MODE == kWsSplitSms ? 2
                             : Smem<D, __half>::dec_bytes_of(DS) <= NS * stage + q_bytes ? DS
                             : Smem<D, __half>::dec_bytes_of(3) <= NS * stage + q_bytes  ? 3
                                                                                         : 2;
  static constexpr int q_off = NS * stage;
  static constexpr int o_off = q_off + q_bytes;  // (OST) the output rows
  static constexpr int dec_off = o_off + o_bytes;
  static constexpr int body0 = dec_off + dec_bytes > dec3_bytes ? dec_off + dec_bytes : dec3_bytes;
  // (split SMs) a decode CTA on the group path: its pipelines' regions
  static constexpr int body = MODE == kWsSplitSms && GdSmem<D>::bytes > body0 ? GdSmem<D>::bytes : body0;
  static constexpr int bar_off = body;                 // mbarriers: full[NS], empty[NS], q_full, q_empty,
  static constexpr int n_bars = 2 * NS + 2 + 4;        // item_full[2], item_empty[2]
  static constexpr int item_off = bar_off + 8 * n_bars;  // ints: the item ring's two indices, decode slots [3], done
  static constexpr int ctx_off = item_off + 32;          // (kWsCtx) WsItemSlot[2]
  static constexpr int ctx_bytes = kWsCtx ? int(2 * sizeof(WsItemSlot)) : 0;
  static constexpr int bytes = 1024 + ctx_off + ctx_bytes;  // + 1024: aligned to 1024 bytes (the swizzle)
  static_assert(kv_block % 1024 == 0 && q_bytes % 16 == 0 && o_bytes % 16 == 0 && dec_bytes % 16 == 0 &&
                    q_block % 1024 == 0,
                "aligned blocks");
  static_assert(MODE == kWsPrefillOnly || (MODE == kWsSplitSms ? 2 : 1) * Smem<D, __half>::dec_bytes_of(DS1) <=
                                           NS * stage + q_bytes,
                "the consumers' decode regions fit in the ring and Q tile they leave");
  static_assert(1024 + ctx_off + ctx_bytes <= 232448, "227 KB per CTA");
};

// The producer's copy of an item's Q tile (packed rows row_begin .. row_begin + ROWS - 1; zeros past the request)
// into the padded tile, or (SWZ) into D / 64 swizzled [ROWS][64] blocks: thread idx of 128 keeps one 16-byte column
// and steps over rows.
template <int D, class QT, int ROWS, bool SWZ>
__device__ __forceinline__ void issue_q_ws(const pod_side& S, const ItemCtx& c, const FastDiv& gd, int kv_head,
                                           int row_begin, QT* Qs, int idx) {
  constexpr int CPR = D / 8, RPP = 128 / CPR, SD = D + 8;
  const int col = (idx % CPR) * 8;
  const std::uint32_t dst = smem_u32(Qs) + (SWZ ? (col / 64) * ROWS * 128 : col * 2);
#pragma unroll 4
  for (int row = idx / CPR; row < ROWS; row += RPP) {
    const int pr = row_begin + row;
    const bool ok = pr < c.packed;
    const int prc = ok ? pr : row_begin;  // row_begin < packed: every item has a row, so the address stays in range
    const int i = gd.div(prc), h = kv_head * gd.d + gd.mod(prc, i);
    const QT* src = static_cast<const QT*>(S.q) + (std::int64_t)(c.q_start + i) * S.q_stride_row +
                    (std::int64_t)h * S.q_stride_head + col;
    cp_async16(dst + (SWZ ? sm90::swz128(row, (col % 64) / 8) : row * SD * 2), src, ok);
  }
}

// A warpgroup of the fused warp-specialised kernel running decode items until the decode queue is empty: its thread
// 0 takes the next index into the warpgroup's slot, named barrier `bar` (128 threads) publishes it and, after the
// item, frees the slot and the region. role: the warpgroup's role in a timeline launch (0 prefill consumer, 1 decode).
template <int D, class QT, int STAGES>
__device__ __forceinline__ void ws_decode_items(const KParams& P, unsigned char* region, int wtid, int bar,
                                                volatile int* slot, bool timed, int role) {
  for (;;) {
    const std::uint64_t t_item = (timed && wtid == 0) ? globaltimer() : 0;
    if (wtid == 0) *slot = atomicAdd(&P.counters[1], 1);
    group_sync(bar);
    const int idx = *slot;
    if (idx >= P.side[1].n_items) return;
    decode_item<D, QT, QT, false, STAGES>(P, P.side[1], P.side[1].items[idx], region, wtid, bar);
    group_sync(bar);  // the region and the slot are free for the next item
    if (timed && wtid == 0) put_span(P, t_item, idx, 1, role);
  }
}
// The CTA's life in a timeline launch, recorded by the last of its `workers` item-running warpgroups to finish.
__device__ __forceinline__ void ws_cta_done(const KParams& P, int* s_done, std::uint64_t t_entry, int wtid, bool timed,
                                            int workers, int role) {
  if (!timed || wtid != 0) return;
  if (workers == 1 || atomicAdd(s_done, 1) == workers - 1) put_span(P, t_entry, -1, role, role, workers);
}

// ---- (split SMs) the decode by groups of KV heads, fed by tensor copies (opt-in, notebook steps 20-21) ------------
// A decode CTA of the split form runs kGdPipes pipelines, each one producer warp and kGdHeads consumer warps. The
// producer takes a group (the decode items of kGdHeads consecutive KV heads of one request and chunk, built by the
// host: KParams::gdec_groups) from the decode queue and copies it 16 tokens at a time: a stage is 16 slots of one
// page of those heads' K and V (the whole page at page size 16; a larger page, a multiple of 16, is m stages), four
// tensor copies of kGdHeads x 16 tokens x 64 columns in the 128-byte swizzle (a 4-D tensor map per side: column, slot,
// head, page), completing on the stage's full barrier together with the stage's meta (group, first token, first /
// last stage of the item). Consumer warp w attends head w of every stage on the transposed tile: S^T =
// K Q^T with the stage's 16 tokens as mma.sync's rows and the GQA group (g <= 8 packed rows) as its 8 columns, an
// online softmax per column, O^T += V^T P^T with P^T handed from S^T's accumulators to the B operand by movmatrix;
// at the item's last page it writes its rows (the item's own output or split partial, as decode_item does). A
// tensor copy moves whole stages: tokens outside the item's range get -inf logits, and their V rows are zeroed in
// shared memory first (P is 0 there, but 0 x NaN is not 0). Why groups: a CTA issues about 10 M tensor copies per
// second whatever their size, so copies of one head (2 KB) held a computing decode CTA to ~26 GB/s, copies of four
// (8 KB) let two such pipelines per SM gather at ~85 GB/s (podcheck_gather_bench, decode-t-h4).
// Byte offset of 16-byte chunk c (0 .. D / 8 - 1) of token row r in one head's tile of a stage.
template <int D> __device__ __forceinline__ std::uint32_t gd_chunk(int r, int c) {
  return std::uint32_t(c / 8) * GdSmem<D>::half + sm90::swz128(r, c % 8);
}

template <int D, class QT>
__device__ __forceinline__ void gd_producer(const KParams& P, unsigned char* pipe, int lane) {
  using G = GdSmem<D>;
  using namespace sm90;
  const SideDev& SDv = P.side[1];
  const std::uint32_t base = smem_u32(pipe), full0 = base + G::bar_off, empty0 = full0 + 8 * kGdStages;
  int4* meta = reinterpret_cast<int4*>(pipe + G::meta_off);
  int k = 0;  // stages handed out
  const std::uint64_t pol = kGdEvictFirst ? l2_evict_first() : 0;  // (PODCHECK_GD_EVICT_FIRST) the copies' L2 policy
  auto stage_out = [&](int4 mt, int page, int slot0, int head0, bool copy) {
    const int st = k % kGdStages;
    mbar_wait(empty0 + 8 * st, ((k / kGdStages) & 1) ^ 1);  // every consumer warp is done with its last use
    if (lane == 0) {
      meta[st] = mt;  // published by the arrival below (release), read after the consumers' wait (acquire)
      const std::uint32_t full = full0 + 8 * st, dst = base + st * G::stage;
      if (copy) {
        arrive_expect_tx(full, G::stage);
        auto load = [&](std::uint32_t to, const CUtensorMap* map, int col) {
          if constexpr (kGdEvictFirst) tma_load_4d_hint(to, map, col, slot0, head0, page, full, pol);
          else tma_load_4d(to, map, col, slot0, head0, page, full);
        };
#pragma unroll
        for (int h = 0; h < D / 64; ++h) {
          load(dst + h * G::half, &P.gdec_k, 64 * h);
          load(dst + G::kv + h * G::half, &P.gdec_v, 64 * h);
        }
      } else {
        mbar_arrive(full);
      }
    }
    ++k;
  };
  for (;;) {
    int gi = 0;
    if (lane == 0) gi = atomicAdd(&P.counters[1], 1);
    gi = __shfl_sync(0xffffffffu, gi, 0);
    if (gi >= P.gdec_n) {
      stage_out(make_int4(-1, 0, kGdEnd, 0), 0, 0, 0, false);
      return;
    }
    const WorkItem it = SDv.items[P.gdec_groups[gi].x];
    const ItemCtx c = item_ctx(P, SDv, it, kTileQDecode);
    if (c.kv_hi <= c.kv_lo) {  // no key: the rows are still written (zeros, LSE -inf)
      stage_out(make_int4(gi, 0, kGdFirst | kGdLast | kGdEmpty, 0), 0, 0, 0, false);
      continue;
    }
    // stages of 16 tokens, m to a page: stage q (tokens 16 q ..) is slots 16 (q % m) .. of the item's page q / m
    const int m = SDv.s.kv.page_size / kGdTokens;
    const int q_lo = c.kv_lo / kGdTokens, q_hi = (c.kv_hi - 1) / kGdTokens, p_lo = q_lo / m, p_hi = q_hi / m;
    int ids = 0;  // the item's page ids, 32 at a time, one per lane
    for (int q = q_lo; q <= q_hi; ++q) {
      const int p = q / m;
      if ((p - p_lo) % 32 == 0 && (q == q_lo || q % m == 0))
        ids = p + lane <= p_hi ? SDv.s.kv.indices[c.page_base + p + lane] : 0;
      const int page = __shfl_sync(0xffffffffu, ids, (p - p_lo) % 32);
      stage_out(make_int4(gi, q * kGdTokens, (q == q_lo ? kGdFirst : 0) | (q == q_hi ? kGdLast : 0), 0), page,
                (q % m) * kGdTokens, it.kv_head, true);
    }
  }
}

template <int D, class QT>
__device__ __forceinline__ void gd_consumer(const KParams& P, unsigned char* pipe, int w, int lane, bool timed) {
  using G = GdSmem<D>;
  using namespace sm90;
  constexpr int NK = D / 16;
  const SideDev& SDv = P.side[1];
  const std::uint32_t base = smem_u32(pipe), full0 = base + G::bar_off, empty0 = full0 + 8 * kGdStages;
  const int4* meta = reinterpret_cast<const int4*>(pipe + G::meta_off);
  const int gq = lane >> 2, tq = lane & 3, lr = lane & 7, lm = lane >> 3;
  std::uint32_t qf[NK][2];  // Q^T as the B operand: column gq is packed row gq, dims 16 kk + 2 tq (+ 8)
  float o[NK][4];           // O^T: dims 16 mi + gq (+ 8) x packed rows 2 tq, 2 tq + 1
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  WorkItem it{};
  ItemCtx c{};
  int idx = 0;
  std::uint64_t t_item = 0;
  for (int k = 0;; ++k) {
    const int st = k % kGdStages;
    mbar_wait(full0 + 8 * st, (k / kGdStages) & 1);
    // the stage's meta read by lane 0 alone, the lane that frees the stage (its read ordered before its own arrival
    // on the empty barrier), and passed to the warp by shuffles; v3.12 let every lane read it, and racecheck
    // reported each lane's read against the producer's next write there (notebook step 23)
    int4 mt = lane == 0 ? meta[st] : make_int4(0, 0, 0, 0);
    mt.x = __shfl_sync(0xffffffffu, mt.x, 0);
    mt.y = __shfl_sync(0xffffffffu, mt.y, 0);
    mt.z = __shfl_sync(0xffffffffu, mt.z, 0);
    if (mt.z & kGdEnd) return;
    if (mt.z & kGdFirst) {
      const int4 grp = P.gdec_groups[mt.x];
      idx = w == 0 ? grp.x : w == 1 ? grp.y : w == 2 ? grp.z : grp.w;
      it = SDv.items[idx];
      c = item_ctx(P, SDv, it, kTileQDecode);
      if (timed && lane == 0) t_item = globaltimer();
      const bool qv = gq < c.packed;
      const QT* q = static_cast<const QT*>(SDv.s.q);
      if (qv) {
        const int i = P.gdiv.div(gq), h = it.kv_head * P.group + P.gdiv.mod(gq, i);
        q += (std::int64_t)(c.q_start + i) * SDv.s.q_stride_row + (std::int64_t)h * SDv.s.q_stride_head + 2 * tq;
      }
#pragma unroll
      for (int kk = 0; kk < NK; ++kk) {
        qf[kk][0] = qv ? *reinterpret_cast<const std::uint32_t*>(q + 16 * kk) : 0u;
        qf[kk][1] = qv ? *reinterpret_cast<const std::uint32_t*>(q + 16 * kk + 8) : 0u;
      }
#pragma unroll
      for (int mi = 0; mi < NK; ++mi) o[mi][0] = o[mi][1] = o[mi][2] = o[mi][3] = 0.f;
      m[0] = m[1] = -INFINITY;
      l[0] = l[1] = 0.f;
    }
    if (!(mt.z & kGdEmpty)) {
      unsigned char* kt = pipe + st * G::stage + w * (kGdTokens * 128);
      unsigned char* vt = kt + G::kv;
      const int t0 = mt.y;
      const bool partial = t0 < c.kv_lo || t0 + kGdTokens > c.kv_hi;
      if (partial) {  // V rows of tokens outside [kv_lo, kv_hi) zeroed; then visible to the warp's ldmatrix
        for (int e = lane; e < kGdTokens * (D / 8); e += 32) {
          const int r = e / (D / 8), tok = t0 + r;
          if (tok < c.kv_lo || tok >= c.kv_hi)
            *reinterpret_cast<uint4*>(vt + gd_chunk<D>(r, e % (D / 8))) = make_uint4(0, 0, 0, 0);
        }
        fence_async_smem();  // before the stage goes back to the tensor copies (async proxy)
        __syncwarp();
      }
      float sc[4] = {0.f, 0.f, 0.f, 0.f};  // S^T: tokens gq, gq + 8 x packed rows 2 tq, 2 tq + 1
#pragma unroll
      for (int kk = 0; kk < NK; ++kk) {  // A = K (tokens x dims 16 kk ..): tokens 0-7 / 8-15 of dims lo, then hi
        std::uint32_t a[4];
        ldsm_x4(a, kt + gd_chunk<D>((lm & 1) * 8 + lr, 2 * kk + (lm >> 1)));
        mma16816<QT>(sc, a, qf[kk]);
      }
      float e[4], alpha[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) {  // packed row 2 tq + j: its 16 tokens across the 8 lanes of equal tq
        float x0 = sc[j] * SDv.scale_log2, x1 = sc[2 + j] * SDv.scale_log2;
        if (partial) {
          if (t0 + gq < c.kv_lo || t0 + gq >= c.kv_hi) x0 = -INFINITY;
          if (t0 + gq + 8 < c.kv_lo || t0 + gq + 8 >= c.kv_hi) x1 = -INFINITY;
        }
        float mx = fmaxf(x0, x1);
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 8));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));
        mx = fmaxf(mx, m[j]);  // finite: every stage of the item holds a token in range
        alpha[j] = ex2(m[j] - mx);
        m[j] = mx;
        e[j] = ex2(x0 - mx);
        e[2 + j] = ex2(x1 - mx);
        l[j] = l[j] * alpha[j] + e[j] + e[2 + j];  // this lane's tokens; the 8 lanes' shares summed at the end
      }
      const std::uint32_t pb[2] = {movmatrix_trans(Pack2<QT>::pack(e[0], e[1])),
                                   movmatrix_trans(Pack2<QT>::pack(e[2], e[3]))};
#pragma unroll
      for (int mi = 0; mi < NK; ++mi) {  // A = V^T (dims 16 mi .. x tokens): dims lo / hi of tokens 0-7, then 8-15
        o[mi][0] *= alpha[0];
        o[mi][1] *= alpha[1];
        o[mi][2] *= alpha[0];
        o[mi][3] *= alpha[1];
        std::uint32_t a[4];
        ldsm_x4_trans(a, vt + gd_chunk<D>((lm >> 1) * 8 + lr, 2 * mi + (lm & 1)));
        mma16816<QT>(o[mi], a, pb);
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(empty0 + 8 * st);
    if (mt.z & kGdLast) {  // the item's rows: packed rows 2 tq, 2 tq + 1 of this lane's columns
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        float d = l[j];
        d += __shfl_xor_sync(0xffffffffu, d, 4);
        d += __shfl_xor_sync(0xffffffffu, d, 8);
        d += __shfl_xor_sync(0xffffffffu, d, 16);
        const int prow = 2 * tq + j;
        if (prow >= c.packed) continue;
        const RowOut<D, QT> r = row_out<D, QT>(P, SDv, it, c.q_start, c.qo_len, prow, m[j], d);
#pragma unroll
        for (int mi = 0; mi < NK; ++mi) {
          r.put1(16 * mi + gq, o[mi][j]);
          r.put1(16 * mi + gq + 8, o[mi][2 + j]);
        }
        if (gq == 0) r.put_lse();
      }
      if (timed && lane == 0) put_span(P, t_item, idx, 1, 1);
    }
  }
}

// A decode CTA of the split form on the group path: warps 5 p .. 5 p + 4 are pipeline p (consumers, then producer).
template <int D, class QT>
__device__ __forceinline__ void gd_cta(const KParams& P, unsigned char* smem, int* s_done, bool timed) {
  using G = GdSmem<D>;
  using namespace sm90;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, p = warp / (kGdHeads + 1), role = warp % (kGdHeads + 1);
  const std::uint64_t t_entry = timed ? globaltimer() : 0;
  if (threadIdx.x == 0) {
    for (int q = 0; q < kGdPipes; ++q) {
      const std::uint32_t bars = smem_u32(smem + q * G::pipe) + G::bar_off;
      for (int st = 0; st < kGdStages; ++st) {
        mbar_init(bars + 8 * st, 1);                          // the producer's arrival (+ the copies' bytes)
        mbar_init(bars + 8 * (kGdStages + st), kGdHeads);      // one per consumer warp
      }
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (p >= kGdPipes) return;
  unsigned char* pipe = smem + p * G::pipe;
  if (role == kGdHeads) {
    gd_producer<D, QT>(P, pipe, lane);
  } else {
    gd_consumer<D, QT>(P, pipe, role, lane, timed);
    ws_cta_done(P, s_done, t_entry, lane, timed, kGdPipes * kGdHeads, 1);  // each consumer warp runs items
  }
}

template <int D, class QT, int MODE>
__global__ void __launch_bounds__(kWsThreads, 1) pod_ws_kernel(const __grid_constant__ KParams P) {
#if PODCHECK_WGMMA
  using namespace sm90;
  using L = WsSmem<D, MODE>;
  constexpr bool FUSED = MODE == kWsCoResident;
  constexpr int NC = FUSED ? 1 : 2, ROWS = kWsRows<MODE>;  // consumer warpgroups, packed rows per prefill item
  constexpr bool PP = kWsPingPong && !FUSED;  // the ping-pong order needs two consumers
  // the products a tile ahead hold three stages (tiles k - 1 .. k + 1) while the step waits for the third: a ring
  // of two would deadlock with the producer
  constexpr bool AHEAD = kWsAhead && !PP && WsSmem<D, MODE>::NS >= 3;
  constexpr bool XI = kWsXitem && !PP;  // each item begun in the previous one's last step (default order)
  constexpr int TK = L::TK, NS = L::NS, SD = D + 8, NT_D = D / 8;
  extern __shared__ uint4 smem_raw[];
  unsigned char* smem = smem_aligned_1024(smem_raw);
  const std::uint32_t sbase = smem_u32(smem);
  const std::uint32_t bars = sbase + L::bar_off;
  const std::uint32_t q_full = bars + 8 * (2 * NS), q_empty = q_full + 8;
  auto full_bar = [&](int st) { return bars + 8 * st; };
  auto empty_bar = [&](int st) { return bars + 8 * (NS + st); };
  auto item_full = [&](int j) { return bars + 8 * (2 * NS + 2 + j); };
  auto item_empty = [&](int j) { return bars + 8 * (2 * NS + 4 + j); };
  // the item ring [2], then the decode slots of warpgroups 0-2 (s_item + 2 + wg), then the warpgroups done
  volatile int* s_item = reinterpret_cast<volatile int*>(smem + L::item_off);
  WsItemSlot* slots = reinterpret_cast<WsItemSlot*>(smem + L::ctx_off);  // (kWsCtx)
  int* s_done = reinterpret_cast<int*>(smem + L::item_off) + 5;  // (fused forms) the last one records the CTA's life
  QT* Qs = reinterpret_cast<QT*>(smem + L::q_off);
  const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127;
  const SideDev& SDv = P.side[0];
  const bool timed = P.timeline != nullptr;
  std::uint64_t t_entry = 0;
  // ring slot j's item (index idx) and its context, and the slot released (item_empty): (kWsCtx) copied from what the
  // producer's thread 0 left in the slot, before the release; else read from global memory after it
  auto take_item = [&](int j, int idx, WorkItem& it, ItemCtx& c) {
    if constexpr (kWsCtx) {
      it = slots[j].it;
      c = slots[j].c;
      mbar_arrive(item_empty(j));
    } else {
      mbar_arrive(item_empty(j));
      it = SDv.items[idx];
      c = item_ctx(P, SDv, it, ROWS);
    }
  };
  // (split SMs) the CTA's side: the first ws_prefill_ctas CTAs (one per SM) run the prefill, or (ws_role_by_sm) those
  // on the SMs ws_prefill_sm spreads over the SM ids; an id past the grid (ids need not be contiguous) keeps the
  // index rule, and CTA 0 always runs the prefill and the last CTA the decode, so neither side is ever left unrun
  const bool decode_cta = [&] {
    if (MODE != kWsSplitSms) return false;
    const int b = int(blockIdx.x), n = int(gridDim.x), s = int(smid());
    if (!P.ws_role_by_sm || b == 0 || b == n - 1 || s >= n) return b >= P.ws_prefill_ctas;
    return !ws_prefill_sm(s, n, P.ws_prefill_ctas);
  }();
  if (timed && (wtid == 0 && (tid > 0 || decode_cta) || (FUSED && tid == 256))) t_entry = globaltimer();
  if (tid == 0) {
    for (int st = 0; st < NS; ++st) {
      mbar_init(full_bar(st), 128);   // the producer's 128 threads, each when its copies have landed
      mbar_init(empty_bar(st), 128 * NC);  // every consumer thread, once its warpgroup's products have read it
    }
    mbar_init(q_full, 128);
    mbar_init(q_empty, 128 * NC);
    for (int j = 0; j < 2; ++j) {
      mbar_init(item_full(j), 1);                 // the producer's thread 0, once the index is written
      mbar_init(item_empty(j), 128 * (1 + NC));   // every producer and consumer thread, once it has read it
    }
    *s_done = 0;
    if constexpr (kWsTma) asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // seen by the copies
  }
  zero_next_counters(P);
  __syncthreads();

  if (MODE == kWsSplitSms && decode_cta) {  // ---- (split SMs) a decode CTA: three warpgroups of decode items ----
    if (P.gdec) {  // or the group path's pipelines
      gd_cta<D, QT>(P, smem, s_done, timed);
    } else {
      ws_decode_items<D, QT, 0>(P, smem + wg * Smem<D, __half>::dec_bytes, wtid, 3 + wg, s_item + 2 + wg, timed, 1);
      ws_cta_done(P, s_done, t_entry, wtid, timed, 3, 1);
    }
  } else if (wg == 0) {  // ---- producer ----
    setmaxnreg_dec<kWsProducerRegs>();
    if constexpr (kWsL2pf && MODE != kWsSplitSms) ws_l2_prefetch<D, QT>(P, SDv, wtid, int(blockIdx.x), int(gridDim.x));
    int st = 0;
    std::uint32_t ph = 0;
    // (thread 0) ring slot jm filled with the next item's index and (kWsCtx) the item and its context; jmph: the
    // parity of the slot's use (item m: slot m & 1, parity (m >> 1) & 1)
    auto fetch = [&](int jm, std::uint32_t jmph) {
      mbar_wait(item_empty(jm), jmph ^ 1);
      const int got = atomicAdd(&P.counters[0], 1);
      s_item[jm] = got;
      if (timed && got < SDv.n_items) put_phase(P, got, 3);  // the index taken (kWsEarly: an item ahead)
      if constexpr (kWsCtx)
        if (got < SDv.n_items) {
          const WorkItem w = SDv.items[got];
          slots[jm].it = w;
          slots[jm].c = item_ctx(P, SDv, w, ROWS);
        }
      mbar_arrive(item_full(jm));  // (kWsCtx) releases the slot's item and context with the index
    };
    [[maybe_unused]] int fetched = 0;  // (kWsEarly, thread 0) the items whose index it has taken
    for (int n = 0;; ++n) {
      const int j = n & 1;
      const std::uint32_t jph = (n >> 1) & 1;
      if (wtid == 0) {
        if constexpr (kWsEarly > 0) {
          if (fetched == n) {  // not taken early (the first item; an item after one without tiles)
            fetch(j, jph);
            fetched = n + 1;
          }
        } else {
          fetch(j, jph);
        }
      }
      mbar_wait(item_full(j), jph);
      const int idx = s_item[j];
      if (idx >= SDv.n_items) break;
      WorkItem it;
      ItemCtx c;
      take_item(j, idx, it, c);
      mbar_wait(q_empty, (n & 1) ^ 1);  // the consumers are done with the previous item's Q
      issue_q_ws<D, QT, ROWS, kWsQsmem>(SDv.s, c, P.gdiv, it.kv_head, it.row_begin, Qs, wtid);
      mbar_arrive_cp_async(q_full);
      if (timed && wtid == 0) put_phase(P, idx, 4);
      const KvSrc src = kv_src<QT>(SDv, c.page_base, it.kv_head);
      const int n_tiles = c.kv_hi > c.kv_lo ? (c.kv_hi - c.kv_lo + TK - 1) / TK : 0;
      const int rr = ws_rotation(idx, n_tiles);  // (kWsRotate) the first tile; 0 by default
      for (int k = 0; k < n_tiles; ++k) {
        mbar_wait(empty_bar(st), ph ^ 1);
        unsigned char* kdst = smem + st * L::stage;
        const int t0 = c.kv_lo + ws_tile(k, rr, n_tiles) * TK;
        bool copied = false;
        if constexpr (kWsTma) {  // (PODCHECK_WS_TMA) a whole tile within one page: tensor copies
          if (P.pre_tma && t0 + TK <= c.kv_hi) {
            const int q = SDv.ps.div(t0), slot = SDv.ps.mod(t0, q);
            if (P.pre_tma >= TK && slot + TK <= SDv.s.kv.page_size) {
              issue_kv_tile_tma<D, TK>(&P.pre_k, &P.pre_v, src, q, slot, it.kv_head, sbase + st * L::stage,
                                       sbase + st * L::stage + L::kv_block, full_bar(st), wtid);
              copied = true;
            } else if (kWsTmaMix && P.pre_tma < TK && slot == 0) {
              // (=2) pages smaller than the tile, the tile beginning one: K by a tensor copy per page and block,
              // V by the gather
              issue_k_pages_tma<D, TK>(&P.pre_k, src, q, P.pre_tma, it.kv_head, sbase + st * L::stage, full_bar(st),
                                       wtid);
              issue_kv_tile<D, TK, 128, QT, true, false, false, 8, 2>(SDv, src, t0, c.kv_hi, kdst, kdst + L::kv_block,
                                                                    wtid);
              mbar_arrive_cp_async(full_bar(st));
              copied = true;
            }
          }
        }
        if (!copied) {
          issue_kv_tile<D, TK, 128, QT, true>(SDv, src, t0, c.kv_hi, kdst, kdst + L::kv_block, wtid);
          mbar_arrive_cp_async(full_bar(st));
        }
        if (timed && wtid == 0 && k == 0) put_phase(P, idx, 5);
        if constexpr (kWsEarly > 0)
          if (wtid == 0 && fetched == n + 1 && k == max(0, n_tiles - 1 - kWsEarly)) {
            fetch(j ^ 1, ((n + 1) >> 1) & 1);  // after this tile's copies are issued: their arrival is not held up
            fetched = n + 2;
          }
        if (++st == NS) { st = 0; ph ^= 1; }
      }
      if (timed && wtid == 0) put_phase(P, idx, 6);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  } else if (FUSED && wg == 2) {  // ---- (fused) decode warpgroup ----
    setmaxnreg_inc<kWsConsumerRegs>();
    ws_decode_items<D, QT, L::DS>(P, smem + L::dec_off, wtid, 3 + wg, s_item + 2 + wg, timed, 1);
    ws_cta_done(P, s_done, t_entry, wtid, timed, 2, 0);
  } else {  // ---- consumers: warpgroup 1 rows 0..63 of the item, warpgroup 2 (prefill-only) rows 64..127 ----
  setmaxnreg_inc<kWsConsumerRegs>();
  const int cw = wg - 1, warp = wtid >> 5, lane = tid & 31, tq = lane & 3;
  // ping-pong: barrier 1 + cw opens consumer cw's turn; consumer 0 goes first (consumer 1 opens it once here, and
  // consumer 0 takes that last opening after its loop, so every barrier ends balanced)
  if (PP && cw == 1) named_arrive(1, 256);
  int st = 0;
  std::uint32_t ph = 0;
  std::uint32_t qf[kWsQsmem ? 1 : D / 16][4];  // (not kWsQsmem) the warp's Q fragments, wgmma's A
  // item nq's Q fragments, the warp's rows (not kWsQsmem): once the producer has loaded the tile, then released
  auto load_q = [&](int nq) {
    mbar_wait(q_full, nq & 1);
    if constexpr (!kWsQsmem) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        ldsm_x4(qf[kk], Qs + (cw * 64 + warp * 16 + (lane & 15)) * SD + kk * 16 + (lane >> 4) * 8);
      mbar_arrive(q_empty);
    }
  };
  // (XI) the next item already begun: its Q in qf, its tile 0's P, that tile's stage and its rows' maxima
  bool pre = false;
  int st0 = 0;
  float m0[2] = {-INFINITY, -INFINITY};
  std::uint32_t p0[TK / 16][4];
  for (int n = 0;; ++n) {
    const std::uint64_t t_item = (timed && tid == 128) ? globaltimer() : 0;
    const bool begun = XI && pre;
    pre = false;
    const int j = n & 1;
    mbar_wait(item_full(j), (n >> 1) & 1);
    const int idx = s_item[j];
    if (idx >= SDv.n_items) break;
    WorkItem it;
    ItemCtx c;
    take_item(j, idx, it, c);
    const int wrow0 = it.row_begin + cw * 64 + warp * 16;
    const RowMask M = row_mask(SDv, c, P.gdiv, it.kv_head, wrow0);
    if (timed && tid == 128) put_phase(P, idx, 0);
    if (!begun) load_q(n);
    if (timed && tid == 128) put_phase(P, idx, 1);
    // (kWsQsmem) the Q tile is free for the next item's once the item's last S is done: right after it in the
    // default order, after the item in the others
    auto release_q = [&] {
      if constexpr (kWsQsmem) mbar_arrive(q_empty);
    };
    float o[NT_D][4];
#pragma unroll
    for (int nn = 0; nn < NT_D; ++nn) o[nn][0] = o[nn][1] = o[nn][2] = o[nn][3] = 0.f;
    float m[2] = {begun ? m0[0] : -INFINITY, begun ? m0[1] : -INFINITY}, d[4] = {0.f, 0.f, 0.f, 0.f};
    const int n_tiles = c.kv_hi > c.kv_lo ? (c.kv_hi - c.kv_lo + TK - 1) / TK : 0;
    // the first KV token of the loop's tile k (ws_tile: the producer's order)
    const int rr = ws_rotation(idx, n_tiles);
    auto tt0 = [&](int k) { return c.kv_lo + ws_tile(k, rr, n_tiles) * TK; };
    if constexpr (!kWsPipe) {
      for (int k = 0; k < n_tiles; ++k) {
        mbar_wait(full_bar(st), ph);
        fence_async_smem();  // the landed cp.async data, made visible to wgmma's operand reads
        const std::uint32_t ka = sbase + st * L::stage;
        attend_tile_wg<D, TK, QT>(qf, ka, ka + L::kv_block, tt0(k), M, o, m, d, lane);
        mbar_arrive(empty_bar(st));  // attend_tile_wg waited for its products: the stage is read
        if (++st == NS) { st = 0; ph ^= 1; }
      }
    } else {
      std::uint32_t pp[TK / 16][4];  // P of tile k - 1: the A operand of its P V
      if (begun) {
#pragma unroll
        for (int kk = 0; kk < TK / 16; ++kk)
#pragma unroll
          for (int e = 0; e < 4; ++e) pp[kk][e] = p0[kk][e];
      }
      // Iteration k issues S = Q K^T of tile k and O += P V of tile k - 1 as two commit groups, waits for the
      // first only, and runs tile k's softmax while the tensor core does the P V; then waits for it, releases
      // tile k - 1's stage and rescales. The operations on O and d, and their order, are those of the loop above.
      // S = Q K^T of the tile in stage `stg` into sc (one commit group), after the turn barrier in ping-pong order
      auto issue_qk = [&](float (&sc)[TK / 8][4], int stg) {
        // (kWsQsmem) Q: this consumer's 64 rows of the tile
        sm90::issue_qk<QT, TK, D, kWsQsmem>(&sc[0][0], qf, sbase + L::q_off + cw * 64 * 128, L::q_block,
                                            sbase + stg * L::stage);
      };
      // O += P V of the previous tile (its P in pl: pp, or FSUM=3's other array) in stage stg, one commit group
      auto issue_pv = [&](int stg, const std::uint32_t (&pl)[TK / 16][4]) {
        sm90::issue_pv<QT, TK, D>(&o[0][0], pl, sbase + stg * L::stage + L::kv_block);
      };
      // the next tile's stage: its copies landed and visible to wgmma, S zeroed for its Q K^T
      auto begin_tile = [&](float (&sc)[TK / 8][4]) {
        mbar_wait(full_bar(st), ph);
        fence_async_smem();
#pragma unroll
        for (int nn = 0; nn < TK / 8; ++nn) sc[nn][0] = sc[nn][1] = sc[nn][2] = sc[nn][3] = 0.f;
        wg_pin<TK / 2>(&sc[0][0]);
      };
      // (FSUM) a tile's softmax folded into the state: O and d rescaled, its fp32 sums added, its weights rounded
      // into P; tile 0's S alone; after the last tile, its P V waited for and its stage released
      auto fold = [&](bool moved, const float (&al)[2], const float (&r)[2], const float (&w)[TK / 8][4]) {
        if (moved) rescale<D>(o, d, al);
        d[0] += r[0];
        d[2] += r[1];
        pack_p<TK, QT>(w, pp);
      };
      // (FSUM orders) tile k's S into sc (stage st) and tile k - 1's P V (its P in pl, stage stg) issued, then the wait
      // for S alone: the P V may still run
      auto qk_and_pv = [&](float (&sc)[TK / 8][4], int stg, const std::uint32_t (&pl)[TK / 16][4]) {
        begin_tile(sc);
        wg_pin<D / 2>(&o[0][0]);
        wg_fence();  // O was rescaled, S zeroed, P written, by ordinary instructions
        issue_qk(sc, st);
        issue_pv(stg, pl);
        wg_wait<1>();
        wg_pin<TK / 2>(&sc[0][0]);
      };
      auto qk_alone = [&](float (&sc)[TK / 8][4]) {  // an S alone (tile 0; AHEAD: tiles 0 and 1), nothing else in flight
        begin_tile(sc);
        wg_fence();
        issue_qk(sc, st);
        wg_wait<0>();
        wg_pin<TK / 2>(&sc[0][0]);
      };
      // the last tile's P V (its P in pl) and its stage released; sums: the default orders' row sums of that P
      auto last_pv = [&](int stg, bool sums, const std::uint32_t (&pl)[TK / 16][4]) {
        wg_pin<D / 2>(&o[0][0]);
        wg_fence();
        issue_pv(stg, pl);
        if (sums) row_sums<TK, QT>(d, pl);
        wg_wait<0>();
        wg_pin<D / 2>(&o[0][0]);
        wg_keep<TK / 4>(&pl[0][0]);
        mbar_arrive(empty_bar(stg));
      };
      // (default and AHEAD orders) tile k's softmax on its S (sc, complete), tile k - 1's row sums (pp), the wait for
      // the products in flight, tile k - 1's stage (stg) released, the rescale, tile k's P into pp
      auto softmax_fold = [&](float (&sc)[TK / 8][4], int k, int stg) {
        float alpha[2];
        std::uint32_t pa[TK / 16][4];
        const bool moved = softmax_tile<TK, QT, false>(sc, tt0(k), M, m, alpha, pa, lane);
        row_sums<TK, QT>(d, pp);  // tile k - 1's sums, in the scale of its maximum (as O after its P V)
        wg_wait<0>();
        wg_pin<D / 2>(&o[0][0]);
        wg_keep<TK / 4>(&pp[0][0]);
        mbar_arrive(empty_bar(stg));  // tile k - 1's stage is read (K by its S, V by its P V)
        if (moved) rescale<D>(o, d, alpha);
#pragma unroll
        for (int kk = 0; kk < TK / 16; ++kk)
#pragma unroll
          for (int e = 0; e < 4; ++e) pp[kk][e] = pa[kk][e];
      };
      if (kWsFsum && n_tiles > 0) {
        // FlashAttention-3's order: d holds this thread's part of its rows' sums until the item ends. Tile 0 is
        // peeled: a wgmma or a wait under a condition makes ptxas serialise every wgmma of the kernel (C7514)
        int st_prev = st;
        float alpha[2];
        {
          float sc[TK / 8][4], rs[2] = {0.f, 0.f};
          qk_alone(sc);
          fold(softmax_exp<TK, false>(sc, tt0(0), M, m, alpha, rs, lane), alpha, rs, sc);
          if (++st == NS) { st = 0; ph ^= 1; }
        }
        for (int k = 1; k < n_tiles; ++k) {
          float sc[TK / 8][4], rs[2] = {0.f, 0.f};
          qk_and_pv(sc, st_prev, pp);
          const bool moved = softmax_exp<TK, false>(sc, tt0(k), M, m, alpha, rs, lane);
          wg_wait<0>();
          wg_pin<D / 2>(&o[0][0]);
          wg_keep<TK / 4>(&pp[0][0]);
          mbar_arrive(empty_bar(st_prev));  // tile k - 1's stage is read (K by its S, V by its P V)
          fold(moved, alpha, rs, sc);
          st_prev = st;
          if (++st == NS) { st = 0; ph ^= 1; }
        }
        last_pv(st_prev, false, pp);
        quad_row_sums(d);
      } else if (kWsDefer && n_tiles > 0) {
        // tile k's weights stay in fp32 in sw until the top of iteration k + 1: there the wait for tile k - 1's
        // P V comes first, then tile k's rescale, row sums and P, then the products of tile k + 1's S and tile k's
        // P V. The back-edge keeps each wait behind the exponentials before it. d: this thread's parts, as above.
        float sw[TK / 8][4], alpha[2], rs[2] = {0.f, 0.f};
        int st_prev = st, st_prev2 = st;  // the stages of tiles k - 1 and k - 2
        qk_alone(sw);
        bool moved = softmax_exp<TK, false>(sw, tt0(0), M, m, alpha, rs, lane);
        if (++st == NS) { st = 0; ph ^= 1; }
        for (int k = 1; k < n_tiles; ++k) {
          wg_wait<0>();  // tile k - 2's P V (none at k = 1)
          wg_pin<D / 2>(&o[0][0]);
          wg_keep<TK / 4>(&pp[0][0]);
          if (k >= 2) mbar_arrive(empty_bar(st_prev2));  // tile k - 2's stage is read
          fold(moved, alpha, rs, sw);  // tile k - 1's P
          float sc[TK / 8][4];
          qk_and_pv(sc, st_prev, pp);  // tile k - 1's P V runs on beside what follows
          rs[0] = rs[1] = 0.f;
          moved = softmax_exp<TK, false>(sc, tt0(k), M, m, alpha, rs, lane);
#pragma unroll
          for (int nn = 0; nn < TK / 8; ++nn)
#pragma unroll
            for (int e = 0; e < 4; ++e) sw[nn][e] = sc[nn][e];
          st_prev2 = st_prev;
          st_prev = st;
          if (++st == NS) { st = 0; ph ^= 1; }
        }
        // tile n - 2's P V, then the last tile's rescale, sums, P and P V
        wg_wait<0>();
        wg_pin<D / 2>(&o[0][0]);
        wg_keep<TK / 4>(&pp[0][0]);
        if (n_tiles >= 2) mbar_arrive(empty_bar(st_prev2));
        fold(moved, alpha, rs, sw);
        last_pv(st_prev, false, pp);
        quad_row_sums(d);
      } else if (kWsFsumPair && n_tiles > 0) {
        std::uint32_t pb[TK / 16][4];  // P of every other tile (pp the rest)
        int st_prev = st;
        {  // tile 0: its S alone, its weights folded in as FSUM=1 does, P into pp
          float sc[TK / 8][4], alpha[2], rs[2] = {0.f, 0.f};
          qk_alone(sc);
          if (n_tiles == 1) release_q();
          fold(softmax_exp<TK, false>(sc, tt0(0), M, m, alpha, rs, lane), alpha, rs, sc);
          if (++st == NS) { st = 0; ph ^= 1; }
        }
        // tile k: its S and tile k - 1's P V (P in pin), its weights rounded into pout beside that P V, then the wait,
        // tile k - 1's stage released, the rescale and tile k's sums
        auto step = [&](const std::uint32_t (&pin)[TK / 16][4], std::uint32_t (&pout)[TK / 16][4], int k) {
          float sc[TK / 8][4], alpha[2], rs[2] = {0.f, 0.f};
          qk_and_pv(sc, st_prev, pin);
          if (k == n_tiles - 1) release_q();
          const bool moved = softmax_exp<TK, false>(sc, tt0(k), M, m, alpha, rs, lane);
          pack_p<TK, QT>(sc, pout);
          wg_wait<0>();
          wg_pin<D / 2>(&o[0][0]);
          wg_keep<TK / 4>(&pin[0][0]);
          mbar_arrive(empty_bar(st_prev));  // tile k - 1's stage is read (K by its S, V by its P V)
          if (moved) rescale<D>(o, d, alpha);
          d[0] += rs[0];
          d[2] += rs[1];
          st_prev = st;
          if (++st == NS) { st = 0; ph ^= 1; }
        };
        int k = 1;
        if constexpr (kWsFsumTail) {
          // (FSUM_TAIL) each pass runs tile k's step, then tile k + 1's where there is one; a pass that ends after
          // its first step leaves the last P in pb
          bool in_pb = false;
          for (; k < n_tiles; k += 2) {
            step(pp, pb, k);
            in_pb = k + 1 == n_tiles;
            if (in_pb) break;
            step(pb, pp, k + 1);
          }
          for (int z = in_pb ? 1 : 0; z < 1; ++z) last_pv(st_prev, false, pp);
          for (int z = in_pb ? 0 : 1; z < 1; ++z) last_pv(st_prev, false, pb);
        } else {
          for (; k + 1 < n_tiles; k += 2) {
            step(pp, pb, k);
            step(pb, pp, k + 1);
          }
          // the last P is in pp, or in pb after an odd step left over. Both ends are loops of at most one pass: a
          // wgmma under an if serialised every wgmma of the kernel (C7514, step 26), and copying pb into pp let ptxas
          // serialise them too (C7513)
          const int odd = n_tiles - k;  // 0 or 1
          for (int z = odd; z < 1; ++z) last_pv(st_prev, false, pp);
          for (; k < n_tiles; ++k) {
            step(pp, pb, k);
            last_pv(st_prev, false, pb);
          }
        }
        quad_row_sums(d);
      } else if (AHEAD && n_tiles > 0) {
        float sa[TK / 8][4], sb[TK / 8][4];
        int st_prev = st, st_cur = st;  // the stages of tiles k - 1 and k
        // step k (1 <= k <= n - 2): tile k - 1's P V and tile k + 1's S issued, tile k's softmax beside them
        auto step = [&](float (&cur)[TK / 8][4], float (&nxt)[TK / 8][4], int k) {
          begin_tile(nxt);  // tile k + 1's stage
          wg_pin<D / 2>(&o[0][0]);
          wg_fence();
          issue_pv(st_prev, pp);
          issue_qk(nxt, st);
          const int st_next = st;
          if (++st == NS) { st = 0; ph ^= 1; }
          softmax_fold(cur, k, st_prev);
          wg_pin<TK / 2>(&nxt[0][0]);
          st_prev = st_cur;
          st_cur = st_next;
        };
        // tile 0: its S, softmax and P (O and d are still 0: nothing to rescale)
        qk_alone(sa);
        st_cur = st;
        if (++st == NS) { st = 0; ph ^= 1; }
        {
          float alpha[2];
          softmax_tile<TK, QT, false>(sa, tt0(0), M, m, alpha, pp, lane);
        }
        st_prev = st_cur;
        if (n_tiles >= 2) {
          qk_alone(sb);  // tile 1's S
          st_cur = st;
          if (++st == NS) { st = 0; ph ^= 1; }
          // steps 1 .. n - 2 in pairs (cur, nxt alternate), an odd one left over copied back: the last tile's S
          // ends in sb
          int k = 1;
          for (; k + 1 < n_tiles - 1; k += 2) {
            step(sb, sa, k);
            step(sa, sb, k + 1);
          }
          for (; k < n_tiles - 1; ++k) {
            step(sb, sa, k);
#pragma unroll
            for (int nn = 0; nn < TK / 8; ++nn)
#pragma unroll
              for (int e = 0; e < 4; ++e) sb[nn][e] = sa[nn][e];
          }
          release_q();
          // the last tile: tile n - 2's P V beside its softmax
          wg_pin<D / 2>(&o[0][0]);
          wg_fence();
          issue_pv(st_prev, pp);
          softmax_fold(sb, n_tiles - 1, st_prev);
          st_prev = st_cur;
        } else {
          release_q();
        }
        last_pv(st_prev, true, pp);  // the last tile's P V and row sums
      } else if (n_tiles > 0) {
        // tile 0: its S alone (XI: begun in the previous item's last step, unless that item had no tiles)
        int st_prev = begun ? st0 : st;
        if (!begun) {
          float sc[TK / 8][4];
          begin_tile(sc);
          if constexpr (PP) named_sync(1 + cw, 256);  // my turn to issue products
          wg_fence();
          issue_qk(sc, st);
          if constexpr (PP) named_arrive(2 - cw, 256);  // the other consumer's turn
          wg_wait<0>();
          wg_pin<TK / 2>(&sc[0][0]);
          if (n_tiles == 1) release_q();
          float alpha[2];
          if (softmax_tile<TK, QT, false>(sc, tt0(0), M, m, alpha, pp, lane)) rescale<D>(o, d, alpha);
          if (++st == NS) { st = 0; ph ^= 1; }
        }
        for (int k = 1; k < n_tiles; ++k) {
          float sc[TK / 8][4];
          begin_tile(sc);
          wg_pin<D / 2>(&o[0][0]);
          if constexpr (PP) named_sync(1 + cw, 256);
          wg_fence();  // O was rescaled, S zeroed, by ordinary instructions
          issue_qk(sc, st);
          issue_pv(st_prev, pp);
          if constexpr (PP) named_arrive(2 - cw, 256);
          wg_wait<1>();  // S of tile k is done; tile k - 1's P V may still run
          wg_pin<TK / 2>(&sc[0][0]);
          if (k == n_tiles - 1) release_q();
          softmax_fold(sc, k, st_prev);
          st_prev = st;
          if (++st == NS) { st = 0; ph ^= 1; }
        }
        if constexpr (XI) {
          // the next item begun where it has tiles: its tile 0's S issued with this item's last P V, and its
          // softmax run while that P V does. Its index and context are read from its ring slot here, and taken
          // (the slot released) at the top of the next pass as for any item; its Q replaces this item's in qf.
          const int j2 = (n + 1) & 1;
          mbar_wait(item_full(j2), ((n + 1) >> 1) & 1);
          const bool go = s_item[j2] < SDv.n_items && slots[j2].c.kv_hi > slots[j2].c.kv_lo;
          // loops of at most one pass, not ifs, around the products: as at the odd step's end above (C7514)
          for (int z = go ? 0 : 1; z < 1; ++z) {
            float sc[TK / 8][4];
            begin_tile(sc);
            load_q(n + 1);
            wg_pin<D / 2>(&o[0][0]);
            wg_fence();  // S zeroed, the Q fragments loaded, by ordinary instructions
            issue_qk(sc, st);
            issue_pv(st_prev, pp);
            // the next item's context and row mask, while both products run
            const ItemCtx c2 = slots[j2].c;
            const WorkItem i2 = slots[j2].it;
            const RowMask M2 = row_mask(SDv, c2, P.gdiv, i2.kv_head, i2.row_begin + cw * 64 + warp * 16);
            wg_wait<1>();  // the next item's S is done; this item's last P V may still run
            wg_pin<TK / 2>(&sc[0][0]);
            float alpha[2];
            m0[0] = m0[1] = -INFINITY;
            softmax_tile<TK, QT, false>(sc, c2.kv_lo, M2, m0, alpha, p0, lane);  // no rescale: O is still this item's
            row_sums<TK, QT>(d, pp);  // this item's last tile's sums
            wg_wait<0>();
            wg_pin<D / 2>(&o[0][0]);
            wg_keep<TK / 4>(&pp[0][0]);
            mbar_arrive(empty_bar(st_prev));  // this item's last stage is read
            st0 = st;
            if (++st == NS) { st = 0; ph ^= 1; }
          }
          for (int z = go ? 1 : 0; z < 1; ++z) last_pv(st_prev, true, pp);  // or its last P V and row sums alone
          pre = go;
        } else {
          last_pv(st_prev, true, pp);  // the last tile's P V and row sums
        }
      }
    }
    if (timed && tid == 128) put_phase(P, idx, 2);
    if (n_tiles == 0 || kWsFsum || kWsDefer) release_q();  // no S at all, or an order that releases after the item
    // the warp's rows stored by its threads: the final output, or a split item's partial rows
    auto store_rows = [&] {
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        if (M.prow[hr] >= c.packed) continue;
        const RowOut<D, QT> w = row_out<D, QT>(P, SDv, it, c.q_start, c.qo_len, M.prow[hr], m[hr], d[2 * hr]);
#pragma unroll
        for (int nn = 0; nn < NT_D; ++nn) w.put(nn * 8 + 2 * tq, o[nn][hr * 2], o[nn][hr * 2 + 1]);
        if (tq == 0) w.put_lse();
      }
    };
    int pslot = -1;  // (PODCHECK_WS_PAIR_MERGE builds, split form) a cut item's pair slot
    if constexpr (kWsPairMerge && MODE == kWsSplitSms)
      if (P.pair_slot != nullptr && it.nchunks == 2) pslot = P.pair_slot[idx];
    if (pslot >= 0) {
      // (PODCHECK_CUDA_TAIL_SPLIT=2) a cut item's piece: per warp, the first of the two pieces to get here writes its
      // partial rows and then flags them; the second waits for the flag (the first is past its tiles and waits on
      // nothing), merges and writes the output. Both pieces' warp w covers the same 16 packed rows.
      if (wrow0 < c.packed) {
        int* fl = P.pair_flags + ((std::int64_t)pslot * 8 + cw * 4 + warp) * 2;
        int first = 0;
        if (lane == 0) first = atomicAdd(fl, 1) == 0;
        first = __shfl_sync(0xffffffffu, first, 0);
        if (first) {
          store_rows();
          __threadfence();  // this lane's partial rows, before the flag
          __syncwarp();
          if (lane == 0) atomicExch(fl + 1, 1);
        } else {
          if (lane == 0)
            while (atomicAdd(fl + 1, 0) == 0) {
            }
          __syncwarp();
          __threadfence();
#pragma unroll
          for (int hr = 0; hr < 2; ++hr)
            if (M.prow[hr] < c.packed)
              pair_merge_row<D, QT>(P, SDv, it, c.q_start, c.qo_len, M.prow[hr], m[hr], d[2 * hr], o, hr, tq);
        }
      }
    } else if (L::OST && it.nchunks == 1 &&
               ((reinterpret_cast<std::uintptr_t>(SDv.s.o) |
                 std::uintptr_t(SDv.s.o_stride_row | SDv.s.o_stride_head) * sizeof(QT)) & 15) == 0) {
      // (kWsOStage) a final output with 16-byte-aligned rows (base and strides, read from the parameters here, not
      // kept in registers across the item): each warp's 16 rows through shared memory, then a bulk copy per packed
      // row from the warp's lanes; no barrier across the consumer's warps
      bulk_wait_read();  // this lane's copies of the previous item have read its warp's rows
      __syncwarp();
      if (wrow0 < c.packed) {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          if (M.prow[hr] >= c.packed) continue;
          const RowOut<D, QT> w = row_out<D, QT>(P, SDv, it, c.q_start, c.qo_len, M.prow[hr], m[hr], d[2 * hr]);
          std::uint32_t* orow =
              reinterpret_cast<std::uint32_t*>(smem + L::o_off + (M.prow[hr] - it.row_begin) * L::o_row);
#pragma unroll
          for (int nn = 0; nn < NT_D; ++nn)
            orow[nn * 4 + tq] = Pack2<QT>::pack(o[nn][hr * 2] * w.f, o[nn][hr * 2 + 1] * w.f);
          if (tq == 0) w.put_lse();
        }
      }
      fence_async_smem();  // the rows, written by ordinary stores, visible to the bulk copies' reads
      __syncwarp();
      const int prow = wrow0 + lane;
      if (lane < 16 && prow < c.packed) {
        const RowHead rh = row_head(P, it.kv_head, prow);
        bulk_store(out_row<QT>(SDv.s, c.q_start + rh.i, rh.h), sbase + L::o_off + (prow - it.row_begin) * L::o_row, D * 2);
        bulk_commit();
      }
    } else if (wrow0 < c.packed) {
      store_rows();
    }
    if (timed && tid == 128) put_span(P, t_item, idx, 0, 0, NC);
  }
  if (L::OST) bulk_wait_read();  // (kWsOStage) this lane's last copies have read their rows: the CTA may end
  if (PP && cw == 0) named_sync(1, 256);
  if constexpr (MODE != kWsPrefillOnly) {  // the prefill queue is empty and the ring read: decode items there
    // (split SMs) the two consumers read the same stages and Q tile, unsynchronised: the first one done must not
    // copy decode tiles over what the other has still to read (consumer 1's region covers the Q tile, consumer
    // 0's the first stages). compute-sanitizer racecheck reported exactly that before this barrier (ldmatrix of the
    // Q fragments against the decode's cp.async, notebook step 12); named barrier 6, the two consumers' 256 threads.
    if constexpr (MODE == kWsSplitSms) named_sync(6, 256);
    if (!P.gdec)  // (the group path's groups are the decode CTAs' alone)
      ws_decode_items<D, QT, L::DS1>(P, smem + cw * Smem<D, __half>::dec_bytes_of(L::DS1), wtid, 3 + wg,
                                     s_item + 2 + wg, timed, 0);
    ws_cta_done(P, s_done, t_entry, wtid, timed, 2, 0);
  } else if (timed && tid == 128) {
    put_span(P, t_entry, -1, 0, 0, NC);
  }
  }
#else
  (void)P;  // built for sm_90a only; the host launches it only when the loaded image has it
#endif
}

// ---- merge of split-KV partial states (one warp per merged query row and head) -------------------------------
// Partial entry (chunk c, local row i, head h) of request r is part_base[r] + (c * qo_len + i) * H + h.
// O = sum_c w_c O_c / sum_c w_c with w_c = 2^(lse_c - max lse); LSE = max + log2(sum w); all empty: 0, -inf.
// Grid (merged rows, ceil(H / 4)): warp w of CTA (x, y) merges row x's head 4 y + w, each lane pairs of columns
// 2 lane + 64 j. Every lane folds the chunks' LSEs itself, in chunk order (broadcast loads), and each column sums
// over the chunks in chunk order: the same operations in the same order as v3.6's kernel, whose one CTA per row
// walked the heads one after another, three dependent global round trips per head (G8's prefill alone: 64 heads,
// about 80 us of merge after a 20 us launch; Sp's decode alone about 60 us after 51).
template <int D, class OT>
__global__ void __launch_bounds__(kThreads) pod_merge_kernel(const __grid_constant__ KParams P, const MergeRow* rows) {
  using Pk = Pack2<OT>;
  const int h = blockIdx.y * kWarps + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  const int H = P.num_qo_heads;
  if (h >= H) return;  // warp-uniform; the kernel has no CTA barrier
  const MergeRow mr = rows[blockIdx.x];
  const SideDev& SDv = P.side[mr.side];
  const pod_side& S = SDv.s;
  const int r = mr.request, i = mr.row;
  const int q_start = S.qo_indptr[r];
  const int qo_len = S.qo_indptr[r + 1] - q_start;
  const int nch = SDv.nchunks[r];
  const std::int64_t e0 = SDv.part_base[r] + (std::int64_t)i * H + h;
  const std::int64_t cstride = (std::int64_t)qo_len * H;
  const float* lse = SDv.part_lse + e0;
  float mxl = -INFINITY;
  for (int c = 0; c < nch; ++c) mxl = fmaxf(mxl, lse[c * cstride]);
  float wsum = 0.f;
  for (int c = 0; c < nch; ++c) wsum += (mxl == -INFINITY) ? 0.f : exp2f(lse[c * cstride] - mxl);
  const bool empty = !(wsum > 0.f);
  OT* dst = out_row<OT>(S, q_start + i, h);
  const float f = empty ? 0.f : S.v_scale / wsum;
#pragma unroll
  for (int dd = 2 * lane; dd < D; dd += 64) {
    float a0 = 0.f, a1 = 0.f;
    if (!empty)
      for (int c = 0; c < nch; ++c) {
        const float w = exp2f(lse[c * cstride] - mxl);
        const float2 v = *reinterpret_cast<const float2*>(SDv.part_o + (e0 + c * cstride) * D + dd);
        a0 += w * v.x;
        a1 += w * v.y;
      }
    *reinterpret_cast<std::uint32_t*>(dst + dd) = Pk::pack(a0 * f, a1 * f);
  }
  if (lane == 0 && S.lse) put_merged_lse(P, S, q_start + i, h, mxl, wsum, empty);
}

template <int D, class QT, class KVT>
std::size_t fused_smem_bytes() {
  return std::size_t(Smem<D, KVT>::bytes);
}

struct Kernels {
  const void* fused = nullptr;
  const void* merge = nullptr;
  std::size_t smem = 0;
  // pod_ws_kernel's forms, indexed by MODE (kWsPrefillOnly, kWsCoResident, kWsSplitSms): 16-bit KV, head_dim 64 /
  // 128; else null
  const void* ws[3] = {};
  std::size_t ws_smem[3] = {};
};
constexpr int kWsRowsOf[3] = {kWsRows<kWsPrefillOnly>, kWsRows<kWsCoResident>, kWsRows<kWsSplitSms>};

template <int D, class QT, int MODE>
void set_ws_form(Kernels& k) {
  k.ws[MODE] = reinterpret_cast<const void*>(&pod_ws_kernel<D, QT, MODE>);
  k.ws_smem[MODE] = std::size_t(WsSmem<D, MODE>::bytes);
}

// feat: the instantiation with the RoPE / ALiBi / soft-cap paths (its own registers; the plain one keeps v2's).
template <int D, class QT, class KVT>
Kernels kernels_for(bool feat) {
  Kernels k;
  k.fused = feat ? reinterpret_cast<const void*>(&pod_fused_kernel<D, QT, KVT, true>)
                 : reinterpret_cast<const void*>(&pod_fused_kernel<D, QT, KVT, false>);
  k.merge = reinterpret_cast<const void*>(&pod_merge_kernel<D, QT>);
  k.smem = fused_smem_bytes<D, QT, KVT>();
  if constexpr (std::is_same_v<QT, KVT> && D <= 128) {
    set_ws_form<D, QT, kWsPrefillOnly>(k);
    set_ws_form<D, QT, kWsCoResident>(k);
    set_ws_form<D, QT, kWsSplitSms>(k);
  }
  return k;
}

// The kernel set of one head_dim and query dtype, every KV dtype: instantiated in its own translation unit
// (the extern declarations below keep every other unit, pod_attention.cu included, from instantiating it).
template <int D, class QT>
Kernels kernel_set(int dtype_kv, bool feat) {
  if (dtype_kv == POD_DTYPE_E4M3) return kernels_for<D, QT, __nv_fp8_e4m3>(feat);
  if (dtype_kv == POD_DTYPE_E5M2) return kernels_for<D, QT, __nv_fp8_e5m2>(feat);
  return kernels_for<D, QT, QT>(feat);
}

extern template Kernels kernel_set<64, __half>(int, bool);
extern template Kernels kernel_set<64, __nv_bfloat16>(int, bool);
extern template Kernels kernel_set<128, __half>(int, bool);
extern template Kernels kernel_set<128, __nv_bfloat16>(int, bool);
extern template Kernels kernel_set<256, __half>(int, bool);
extern template Kernels kernel_set<256, __nv_bfloat16>(int, bool);

}  // namespace podcheck::kernels::pod_detail
