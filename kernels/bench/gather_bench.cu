// podcheck_gather_bench: how fast k SMs can gather a paged KV cache into shared memory, and by which copy
// mechanism. A fused POD launch gives some SMs (or CTA slots) to the decode and the rest to the prefill; the
// fewer SMs the decode needs to move its KV at the copy rate, the more the prefill keeps (docs/KERNEL.md,
// step 19). This measures that rate alone, with nothing computed on the data: the ceiling of any decode
// built on the mechanism, per SM, as a function of the SMs used and of the bytes each SM keeps in flight.
//
// The cache is mix B's decode (64 requests x 4096 tokens, 8 KV heads, head_dim 128, bf16, NHD pages of 16
// tokens: 1.07 GB of K and V), its pages shuffled by a fixed permutation. A work item is 32 pages of one
// request and KV head (256 KB of K and V); item i goes to participant i mod (k x per_sm): per_sm CTAs on each of
// SMs 0 .. k - 1 (their shared memory sized so that no more fit; the CTAs on other SMs leave at once). A stage is
// one page of K and V of one head (8 KB); each CTA's ring holds `stages` of them. Mechanisms:
//   cp.async  128 threads, each copies 4 of the stage's 16-byte chunks (podcheck-cuda's decode today)
//   tma       one producer thread, two 3-D tensor copies per stage (a 16 x 128 box of K and of V, the head
//             picked by a coordinate), completing on the stage's mbarrier; 4 consumer warps (sm_90)
//   bulk      one producer warp, 32 one-row bulk copies per stage (256 bytes each: 16 rows of K and V),
//             completing on the stage's mbarrier; 4 consumer warps (sm_90)
//   decode    (only with --methods) tensor copies in the 128-byte swizzle (four 16 x 64 boxes per stage), each
//             stage a 16-token tile of attention on one consumer warp (Q K^T, online softmax, P V on mma.sync with
//             synthetic queries; gather_decode below): the per-CTA rate once the consumers compute
//   decode-t  (only with --methods) the same work on the transposed tile: S^T = K Q^T with tokens as the MMA's rows
//             and the GQA group (up to 8 queries) as its columns, O^T = V^T P^T (8 + 8 mma.sync per tile instead of
//             16 + 16, O^T in 32 registers); decode-t8: 8 consumer warps per CTA instead of 4
//   *-pre     (tma-pre, decode-pre, decode-t-pre, decode-t8-pre) the producer warp loads an item's 32 page ids at
//             once (one per lane) and shuffles each stage's out, instead of a table load per stage
//   tma-pre-h2, tma-pre-h4: tma-pre with 2 or 4 KV heads per box (16 x H x 128), stages of H x 8 KB, the same two
//             copies per stage: whether a CTA's rate is bounded per copy issued or per byte
//   decode-t-h4  decode-t-pre with a stage of 4 KV heads (boxes 64 x 16 tokens x 4 heads: four copies of 8 KB), one
//             consumer warp per head attending its head of every stage, as a decode CTA for a group of heads would
// The consumers read every 16-byte chunk of a stage once and fold it into an XOR; the CTAs' XORs together must
// equal the XOR of both buffers read linearly by a separate kernel (every page is in the table exactly once),
// or the run exits 1: a mechanism that copies the wrong bytes is not timed (decode: 16-bit elements, folded alike).
//
// Ratios: the device-to-device copy of the same run (read + write bytes over time, as
// `podcheck bench kernel` counts it) is the ceiling; gathered bytes over time against it.
//   podcheck_gather_bench [--sms 8,16,...] [--stages 2,4,...] [--per-sm 1,2,...] [--methods cp.async,tma,...]
//                         [--reps N] [--contiguous]   (the page table in order instead of shuffled)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "pod/mma_sm80.cuh"    // ldmatrix, mma.sync
#include "pod/tensor_map.hpp"  // cuTensorMapEncodeTiled
#include "pod/wgmma_sm90.cuh"  // mbarriers

namespace {

using podcheck::kernels::sm80::ldsm_x4;
using podcheck::kernels::sm80::ldsm_x4_trans;
using podcheck::kernels::sm80::mma16816;
using podcheck::kernels::sm80::movmatrix_trans;
using podcheck::kernels::sm80::smem_u32;
using podcheck::kernels::sm90::arrive_expect_tx;
using podcheck::kernels::sm90::mbar_arrive;
using podcheck::kernels::sm90::mbar_init;
using podcheck::kernels::sm90::mbar_wait;
using podcheck::kernels::sm90::tma_load_3d;

constexpr int kPage = 16, kDim = 128, kRowBytes = kDim * 2;
constexpr int kHalfStage = kPage * kRowBytes;  // one page of K (or V) of one head
constexpr int kStage = 2 * kHalfStage;         // 8 KB
constexpr int kPagesPerItem = 32;
constexpr int kConsumers = 128;                // 4 warps read each stage

#define CHECK_CUDA(x)                                                                                         \
  do {                                                                                                        \
    cudaError_t e_ = (x);                                                                                     \
    if (e_ != cudaSuccess) {                                                                                  \
      std::fprintf(stderr, "podcheck_gather_bench: %s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                                                                 \
      std::exit(2);                                                                                           \
    }                                                                                                         \
  } while (0)

struct Shape {
  int reqs, pages_per_req, heads;
  __host__ __device__ int items() const { return reqs * heads * (pages_per_req / kPagesPerItem); }
};

// Tile t of a CTA: the page it copies (physical, from the table) and its KV head.
struct Tile {
  int page, head;
};
// A CTA's place among the launch's participants: `id` of `n` (see take_place).
struct Place {
  int id, n;
};
__device__ __forceinline__ Tile tile_of(int t, const int* table, Shape s, Place p) {
  const int item = p.id + (t / kPagesPerItem) * p.n;
  const int chunks = s.pages_per_req / kPagesPerItem;
  const int chunk = item % chunks, head = (item / chunks) % s.heads, req = item / (chunks * s.heads);
  return {table[req * s.pages_per_req + chunk * kPagesPerItem + t % kPagesPerItem], head};
}
// The producer warp's tile t (every lane calls it, t warp-uniform). Without kPre, looked up at t itself: the item's
// divisions and one dependent load of the table on every stage, between the freed stage and its copies. With kPre,
// lane j loads page j of the item at the item's first tile (one load for 32 stages) and each stage takes its page
// from that lane by a shuffle.
template <bool kPre> struct Feed {
  Tile mine{0, 0};
  __device__ __forceinline__ Tile at(int t, const int* table, Shape s, Place p, int lane) {
    if constexpr (!kPre) {
      return tile_of(t, table, s, p);
    } else {
      static_assert(kPagesPerItem == 32, "one page id per lane of the producer warp");
      if (t % kPagesPerItem == 0) mine = tile_of(t + lane, table, s, p);
      return {__shfl_sync(0xffffffffu, mine.page, t % kPagesPerItem), mine.head};
    }
  }
};
__device__ __forceinline__ int tiles_of_cta(Shape s, Place p) {
  const int n = s.items();
  return p.id < n ? (n - p.id + p.n - 1) / p.n * kPagesPerItem : 0;
}
// The launch has per_sm CTAs on every SM (its grid and shared memory make it so); those on SMs 0 .. sms - 1 take
// part, the others leave at once. A participant's id: its SM's index times per_sm plus its arrival order on the SM
// (slots: one counter per SM, zeroed before the launch). Should an SM hold fewer than per_sm CTAs, some ids are
// never taken and their items never copied: the checksum then fails the configuration.
__device__ __forceinline__ Place take_place(int sms, int per_sm, int* slots) {
  __shared__ int id;
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    id = -1;
    if (int(sm) < sms)
      if (const int r = atomicAdd(slots + sm, 1); r < per_sm) id = int(sm) * per_sm + r;
  }
  __syncthreads();
  return {id, sms * per_sm};
}
__device__ __forceinline__ std::uint64_t fold(uint4 x) {
  return (std::uint64_t(x.x) << 32 | x.y) ^ (std::uint64_t(x.z) << 32 | x.w);
}
// Consumer thread c (0..127) reads 4 chunks of the stage, chunks other threads copied (cp.async) or none did.
__device__ __forceinline__ std::uint64_t consume(const uint4* stage, int c) {
  std::uint64_t acc = 0;
#pragma unroll
  for (int i = 0; i < kStage / 16 / kConsumers; ++i) acc ^= fold(stage[(c + 32) % kConsumers + kConsumers * i]);
  return acc;
}
__device__ __forceinline__ void publish(std::uint64_t acc, unsigned long long* sum) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicXor(sum, acc);
}

// ---- cp.async: every thread copies 4 chunks of each stage, S stages in flight ----------------------------------
template <int S>
__global__ void __launch_bounds__(kConsumers) gather_cp_async(const char* k, const char* v, const int* table, Shape s,
                                                              int sms, int per_sm, int* slots, unsigned long long* sum) {
  extern __shared__ __align__(128) uint4 ring[];
  const Place p = take_place(sms, per_sm, slots);
  if (p.id < 0) return;
  const int n = tiles_of_cta(s, p), c = threadIdx.x;
  auto issue = [&](int t) {
    if (t < n) {
      const Tile tl = tile_of(t, table, s, p);
      uint4* st = ring + (t % S) * (kStage / 16);
#pragma unroll
      for (int i = 0; i < kStage / 16 / kConsumers; ++i) {
        const int chunk = c + kConsumers * i, kv = chunk / (kHalfStage / 16), row = (chunk / 16) % kPage, col = chunk % 16;
        const char* src = (kv ? v : k) + ((std::int64_t(tl.page) * kPage + row) * s.heads + tl.head) * kRowBytes + col * 16;
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(smem_u32(st + chunk)), "l"(src)
                     : "memory");
      }
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");  // an empty group past the end keeps the count
  };
  for (int t = 0; t < S - 1; ++t) issue(t);
  std::uint64_t acc = 0;
  for (int t = 0; t < n; ++t) {
    issue(t + S - 1);
    // groups complete in order: with S - 1 newer ones allowed pending, group t has landed
    asm volatile("cp.async.wait_group %0;\n" ::"n"(S - 1) : "memory");
    __syncthreads();
    acc ^= consume(ring + (t % S) * (kStage / 16), c);
    __syncthreads();
  }
  publish(acc, sum);
}
// The cp.async form for a depth (its wait needs the depth at compile time); nullptr for a depth not built.
void* cp_async_kernel(int stages) {
  switch (stages) {
    case 2: return reinterpret_cast<void*>(gather_cp_async<2>);
    case 4: return reinterpret_cast<void*>(gather_cp_async<4>);
    case 8: return reinterpret_cast<void*>(gather_cp_async<8>);
    case 16: return reinterpret_cast<void*>(gather_cp_async<16>);
    case 24: return reinterpret_cast<void*>(gather_cp_async<24>);
    default: return nullptr;
  }
}

// ---- producer + 4 consumer warps on mbarriers (tma, bulk) ------------------------------------------------------
__device__ __forceinline__ void bulk_1d(std::uint32_t dst, const void* src, std::uint32_t bytes, std::uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// kH: KV heads per stage (tma only): one box of 16 tokens x kH heads x 128 per copy, so kH x 8 KB per stage for the
// same two copies (an item is then 32 pages of kH heads)
template <bool kTma, bool kPre, int kH = 1>
__global__ void __launch_bounds__(kConsumers + 32) gather_async(const __grid_constant__ CUtensorMap map_k,
                                                                const __grid_constant__ CUtensorMap map_v,
                                                                const char* k, const char* v, const int* table,
                                                                Shape s, int stages, int sms, int per_sm, int* slots,
                                                                unsigned long long* sum) {
  static_assert(kTma || kH == 1, "bulk copies move one head per stage");
  constexpr int kSt = kH * kStage;
  extern __shared__ __align__(128) uint4 ring[];
  const Place p = take_place(sms, per_sm, slots);
  if (p.id < 0) return;
  const std::uint32_t base = smem_u32(ring), bars = base + stages * kSt;  // full[stages], then empty[stages]
  const Shape sg{s.reqs, s.pages_per_req, s.heads / kH};                   // items over head groups
  const int n = tiles_of_cta(sg, p), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int i = 0; i < stages; ++i) {
      mbar_init(bars + 8 * i, 1);                          // the producer's arrival (+ the bytes)
      mbar_init(bars + 8 * (stages + i), kConsumers / 32);  // one per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (warp == kConsumers / 32) {  // the producer warp
    Feed<kPre> feed;
    for (int t = 0; t < n; ++t) {
      const int st = t % stages;
      const std::uint32_t full = bars + 8 * st, dst = base + st * kSt;
      const Tile tl = feed.at(t, table, sg, p, lane);
      mbar_wait(bars + 8 * (stages + st), ((t / stages) & 1) ^ 1);  // the consumers freed this stage
      if constexpr (kTma) {
        if (lane == 0) {
          arrive_expect_tx(full, kSt);
          tma_load_3d(dst, &map_k, 0, tl.head * kH, tl.page * kPage, full);
          tma_load_3d(dst + kH * kHalfStage, &map_v, 0, tl.head * kH, tl.page * kPage, full);
        }
      } else {
        if (lane == 0) arrive_expect_tx(full, kStage);
        __syncwarp();
        const int kv = lane / kPage, row = lane % kPage;
        const char* src = (kv ? v : k) + ((std::int64_t(tl.page) * kPage + row) * s.heads + tl.head) * kRowBytes;
        bulk_1d(dst + kv * kHalfStage + row * kRowBytes, src, kRowBytes, full);
      }
    }
    return;
  }
  std::uint64_t acc = 0;
  for (int t = 0; t < n; ++t) {
    const int st = t % stages;
    mbar_wait(bars + 8 * st, (t / stages) & 1);
#pragma unroll
    for (int h = 0; h < kH; ++h) acc ^= consume(ring + (st * kH + h) * (kStage / 16), threadIdx.x);
    __syncwarp();
    if (lane == 0) mbar_arrive(bars + 8 * (stages + st));
  }
  publish(acc, sum);
}

// ---- decode: tensor copies in the 128-byte swizzle, each stage a 16-token tile of attention on one warp ---------
// What a decode CTA fed by tensor copies would do per stage, on synthetic queries: S = Q K^T (16 rows, the GQA group
// padded as podcheck-cuda's decode pads it, x 16 tokens x 128: 16 mma.sync), an online softmax over the tile, O += P V
// (16 mma.sync, O 16 x 128 in registers), K and V read by ldmatrix from the swizzled stage. Consumer warp w takes
// tiles w, w + 4, ... (four tiles in flight on the four warps), and starts its state afresh at each item (no merge
// of the warps' partial states: that is once per 256 KB). Every register ldmatrix returns is folded into an XOR of
// 16-bit elements (the transposed loads pair elements of two rows in one register, so only the elements, not the
// 32-bit words, are each seen once), so the gather is still checked, against the linear read folded to 16 bits;
// O is kept from being optimised away by a store that never happens.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ std::uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}
// 16-byte chunk c (0..15) of token row r of a [16][128] tile stored as two [16][64] blocks in the 128-byte swizzle.
// kBlock: the bytes from the first 64 columns' block to the second's (one head: 16 x 128; decode-t-h4: H heads' worth).
template <int kBlock = kPage * 128>
__device__ __forceinline__ const unsigned char* swz_chunk(const unsigned char* tile, int r, int c) {
  return tile + (c / 8) * kBlock + r * 128 + (((c % 8) ^ (r % 8)) << 4);
}

// kT: the transposed tile (decode-t): S^T = K Q^T with the 16 tokens as the MMA's rows and up to 8 queries (the GQA
// group) as its columns, O^T = V^T P^T with 16 head dims per MMA, P^T passed from S^T's accumulators to the next
// MMA's B operand by movmatrix. Half the mma.sync of the padded form (8 + 8 per tile instead of 16 + 16: no rows
// padded from g to 16), half the accumulators (O^T: 32 registers), so more consumer warps fit; kW: consumer warps.
// kH > 1 (decode-t-h4): a stage is one page of kH KV heads (boxes of 64 columns x 16 tokens x kH heads, laid out head
// by head, each head's 16 x 64 block in the same swizzle as one head's), four copies of kH x 2 KB; consumer warp w
// attends head w of every stage, as a decode CTA would for a group of KV heads.
template <bool kT, int kW, bool kPre, int kH = 1>
__global__ void __launch_bounds__(32 * kW + 32) gather_decode(const __grid_constant__ CUtensorMap map_k,
                                                              const __grid_constant__ CUtensorMap map_v,
                                                              const int* table, Shape s, int stages, int sms,
                                                              int per_sm, int* slots, unsigned long long* sum) {
  extern __shared__ __align__(128) uint4 ring[];
  const Place p = take_place(sms, per_sm, slots);
  if (p.id < 0) return;
  static_assert(kH == 1 || (kT && kW == kH), "a warp per head of the stage");
  constexpr int kSt = kH * kStage, kBlock = kH * kPage * 128;
  const std::uint32_t base = (smem_u32(ring) + 1023u) & ~1023u, bars = base + stages * kSt;
  const unsigned char* const tiles = reinterpret_cast<const unsigned char*>(ring) + (base - smem_u32(ring));
  const Shape sg{s.reqs, s.pages_per_req, s.heads / kH};  // items over head groups
  const int n = tiles_of_cta(sg, p), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  constexpr int kWarps = kW;
  if (threadIdx.x == 0) {
    for (int i = 0; i < stages; ++i) {
      mbar_init(bars + 8 * i, 1);
      mbar_init(bars + 8 * (stages + i), kH > 1 ? kW : 1);  // the warps that consume the stage
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (warp == kWarps) {
    Feed<kPre> feed;
    for (int t = 0; t < n; ++t) {
      const int st = t % stages;
      const std::uint32_t full = bars + 8 * st, dst = base + st * kSt;
      const Tile tl = feed.at(t, table, sg, p, lane);
      mbar_wait(bars + 8 * (stages + st), ((t / stages) & 1) ^ 1);
      if (lane == 0) {
        arrive_expect_tx(full, kSt);
        // the maps' coordinates: (column, head, token) for one head; (column, token, head) for kH heads
        const int c1 = kH > 1 ? tl.page * kPage : tl.head, c2 = kH > 1 ? tl.head * kH : tl.page * kPage;
        for (int h = 0; h < 2; ++h) {  // 64 columns per copy (the swizzle's limit: 128-byte rows)
          tma_load_3d(dst + h * kBlock, &map_k, 64 * h, c1, c2, full);
          tma_load_3d(dst + kH * kHalfStage + h * kBlock, &map_v, 64 * h, c1, c2, full);
        }
      }
    }
    return;
  }
  const int lr = lane % 8, lm = lane / 8;  // ldmatrix: the row this lane addresses, of matrix lm
  if constexpr (kT) {
    std::uint32_t qt[kDim / 16][2];  // Q^T as the B operand (dims x 8 queries): every element 1.0
#pragma unroll
    for (int kk = 0; kk < kDim / 16; ++kk) qt[kk][0] = qt[kk][1] = 0x3F803F80u;
    float ot[kDim / 16][4], m[2], l[2];  // O^T: dims 16 mi + g (+ 8) x queries 2t, 2t + 1; m, l of those queries
    std::uint32_t acc = 0;
    constexpr int kStep = kH > 1 ? 1 : kWarps;  // kH > 1: every warp takes every tile (its head of it)
    for (int t = kH > 1 ? 0 : warp; t < n; t += kStep) {
      if (t % kPagesPerItem < kStep) {
#pragma unroll
        for (int j = 0; j < kDim / 16; ++j) ot[j][0] = ot[j][1] = ot[j][2] = ot[j][3] = 0.f;
        m[0] = m[1] = -1e30f;
        l[0] = l[1] = 0.f;
      }
      const int st = t % stages;
      mbar_wait(bars + 8 * st, (t / stages) & 1);
      const int head_off = kH > 1 ? warp * (kPage * 128) : 0;
      const unsigned char *kt = tiles + st * kSt + head_off, *vt = tiles + st * kSt + kH * kHalfStage + head_off;
      float sc[4] = {};  // S^T: tokens g, g + 8 x queries 2t, 2t + 1
#pragma unroll
      for (int kk = 0; kk < kDim / 16; ++kk) {  // A = K (tokens x dims 16 kk ..): tokens 0-7 / 8-15, dims lo / hi
        std::uint32_t a[4];
        ldsm_x4(a, swz_chunk<kBlock>(kt, (lm & 1) * 8 + lr, 2 * kk + (lm >> 1)));
        acc ^= a[0] ^ a[1] ^ a[2] ^ a[3];
        mma16816<__nv_bfloat16>(sc, a, qt[kk]);
      }
      float alpha[2];
      std::uint32_t pb[2];  // P^T as the B operand: tokens 2t, 2t + 1 (and + 8) of query g
      float e[4];
#pragma unroll
      for (int i = 0; i < 2; ++i) {  // query 2t + i: its 16 tokens lie across the 8 lanes of equal t
        float mx = fmaxf(sc[i], sc[2 + i]) * 0.1275f;
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 8));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));
        mx = fmaxf(mx, m[i]);
        alpha[i] = ex2(m[i] - mx);
        m[i] = mx;
        e[i] = ex2(sc[i] * 0.1275f - mx);
        e[2 + i] = ex2(sc[2 + i] * 0.1275f - mx);
        l[i] = l[i] * alpha[i] + e[i] + e[2 + i];  // this lane's share; the 8 lanes' shares summed once per item
      }
      pb[0] = movmatrix_trans(pack_bf16(e[0], e[1]));
      pb[1] = movmatrix_trans(pack_bf16(e[2], e[3]));
#pragma unroll
      for (int mi = 0; mi < kDim / 16; ++mi) {
        ot[mi][0] *= alpha[0];
        ot[mi][1] *= alpha[1];
        ot[mi][2] *= alpha[0];
        ot[mi][3] *= alpha[1];
        std::uint32_t a[4];  // A = V^T (dims 16 mi .. x tokens): dims lo / hi of tokens 0-7, then of tokens 8-15
        ldsm_x4_trans(a, swz_chunk<kBlock>(vt, (lm >> 1) * 8 + lr, 2 * mi + (lm & 1)));
        acc ^= a[0] ^ a[1] ^ a[2] ^ a[3];
        mma16816<__nv_bfloat16>(ot[mi], a, pb);
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(bars + 8 * (stages + st));
    }
    float keep = l[0] + l[1];
#pragma unroll
    for (int j = 0; j < kDim / 16; ++j) keep += ot[j][0] + ot[j][1] + ot[j][2] + ot[j][3];
    if (keep == 1234.5f) sum[1] = 1;
    publish((acc >> 16) ^ (acc & 0xFFFFu), sum);
  } else {
    std::uint32_t q[kDim / 16][4];  // the synthetic queries: every element 1.0
#pragma unroll
    for (int kk = 0; kk < kDim / 16; ++kk) q[kk][0] = q[kk][1] = q[kk][2] = q[kk][3] = 0x3F803F80u;
    float o[kDim / 8][4], m[2], l[2];
    std::uint32_t acc = 0;
    for (int t = warp; t < n; t += kWarps) {
      if (t % kPagesPerItem < kWarps) {  // this warp's first tile of an item
#pragma unroll
        for (int j = 0; j < kDim / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
        m[0] = m[1] = -1e30f;
        l[0] = l[1] = 0.f;
      }
      const int st = t % stages;
      mbar_wait(bars + 8 * st, (t / stages) & 1);
      const unsigned char *kt = tiles + st * kStage, *vt = kt + kHalfStage;
      float sc[2][4] = {};
#pragma unroll
      for (int kk = 0; kk < kDim / 16; ++kk) {  // S = Q K^T: tokens 0-7 and 8-15, dims 16 kk .. 16 kk + 15
        std::uint32_t b[4];
        ldsm_x4(b, swz_chunk(kt, (lm >> 1) * 8 + lr, 2 * kk + (lm & 1)));
        acc ^= b[0] ^ b[1] ^ b[2] ^ b[3];
        mma16816<__nv_bfloat16>(sc[0], q[kk], b);
        mma16816<__nv_bfloat16>(sc[1], q[kk], b + 2);
      }
      float mx[2];  // online softmax, rows g and g + 8 of the thread's quad
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        mx[r] = fmaxf(fmaxf(sc[0][2 * r], sc[0][2 * r + 1]), fmaxf(sc[1][2 * r], sc[1][2 * r + 1])) * 0.1275f;
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        mx[r] = fmaxf(mx[r], m[r]);
      }
      float alpha[2], rs[2] = {0.f, 0.f};
      std::uint32_t pa[4];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        alpha[r] = ex2(m[r] - mx[r]);
        m[r] = mx[r];
        float e[4];
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int i = 0; i < 2; ++i) rs[r] += e[2 * j + i] = ex2(sc[j][2 * r + i] * 0.1275f - mx[r]);
        pa[r] = pack_bf16(e[0], e[1]);      // A fragment: row g (r 0) or g + 8 (r 1), tokens 2t, 2t + 1
        pa[2 + r] = pack_bf16(e[2], e[3]);  // tokens 2t + 8, 2t + 9
        l[r] = l[r] * alpha[r] + rs[r];
      }
#pragma unroll
      for (int j = 0; j < kDim / 8; ++j)
        for (int i = 0; i < 4; ++i) o[j][i] *= alpha[i / 2];  // rows g (i 0, 1) and g + 8 (i 2, 3)
#pragma unroll
      for (int jj = 0; jj < kDim / 16; ++jj) {  // O += P V: dims 16 jj .. 16 jj + 15
        std::uint32_t b[4];
        ldsm_x4_trans(b, swz_chunk(vt, (lm & 1) * 8 + lr, 2 * jj + (lm >> 1)));
        acc ^= b[0] ^ b[1] ^ b[2] ^ b[3];
        mma16816<__nv_bfloat16>(o[2 * jj], pa, b);
        mma16816<__nv_bfloat16>(o[2 * jj + 1], pa, b + 2);
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(bars + 8 * (stages + st));
    }
    float keep = l[0] + l[1];
#pragma unroll
    for (int j = 0; j < kDim / 8; ++j) keep += o[j][0] + o[j][1] + o[j][2] + o[j][3];
    if (keep == 1234.5f) sum[1] = 1;  // never true in practice; keeps O and l computed
    publish((acc >> 16) ^ (acc & 0xFFFFu), sum);
  }
}

// ---- the independent answer: both buffers read linearly ------------------------------------------------------
__global__ void xor_linear(const uint4* p, std::size_t n, unsigned long long* sum) {
  std::uint64_t acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    acc ^= fold(p[i]);
  publish(acc, sum);
}
__global__ void fill(std::uint32_t* p, std::size_t n, std::uint32_t salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint32_t x = std::uint32_t(i) * 0x9E3779B1u ^ std::uint32_t(i >> 32) ^ salt;
    x ^= x >> 16; x *= 0x85EBCA6Bu; x ^= x >> 13; x *= 0xC2B2AE35u; x ^= x >> 16;
    p[i] = x;
  }
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    char* end = nullptr;
    const long x = std::strtol(p, &end, 10);
    if (end == p || x <= 0) {
      std::fprintf(stderr, "podcheck_gather_bench: '%s' is not a list of positive integers\n", s);
      std::exit(2);
    }
    v.push_back(int(x));
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The methods by name: the kernel (cp.async: per depth, from cp_async_kernel), its consumer warps, and whether the
// decode's 16-bit checksum applies. "-pre": the producer feeds its copies from the item's page ids loaded at once.
struct Method {
  const char* name;
  void* kernel;
  int consumer_warps;
  bool decode;
  int heads = 1;  // KV heads per stage
};
const Method kMethods[] = {
    {"cp.async", nullptr, kConsumers / 32, false},
    {"tma", reinterpret_cast<void*>(gather_async<true, false>), kConsumers / 32, false},
    {"tma-pre", reinterpret_cast<void*>(gather_async<true, true>), kConsumers / 32, false},
    {"tma-pre-h2", reinterpret_cast<void*>(gather_async<true, true, 2>), kConsumers / 32, false, 2},
    {"tma-pre-h4", reinterpret_cast<void*>(gather_async<true, true, 4>), kConsumers / 32, false, 4},
    {"bulk", reinterpret_cast<void*>(gather_async<false, false>), kConsumers / 32, false},
    {"decode", reinterpret_cast<void*>(gather_decode<false, 4, false>), 4, true},
    {"decode-pre", reinterpret_cast<void*>(gather_decode<false, 4, true>), 4, true},
    {"decode-t", reinterpret_cast<void*>(gather_decode<true, 4, false>), 4, true},
    {"decode-t-pre", reinterpret_cast<void*>(gather_decode<true, 4, true>), 4, true},
    {"decode-t8", reinterpret_cast<void*>(gather_decode<true, 8, false>), 8, true},
    {"decode-t8-pre", reinterpret_cast<void*>(gather_decode<true, 8, true>), 8, true},
    {"decode-t-h4", reinterpret_cast<void*>(gather_decode<true, 4, true, 4>), 4, true, 4},
};
const Method* find_method(const std::string& name) {
  for (const Method& m : kMethods)
    if (name == m.name) return &m;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sms_list, stage_list = {2, 4, 8, 16, 24}, per_sm_list = {1};
  std::vector<std::string> methods = {"cp.async", "tma", "bulk"};  // and "decode", on request
  int reps = 10;
  bool contiguous = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* val = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--sms" && val) sms_list = parse_list(argv[++i]);
    else if (a == "--stages" && val) stage_list = parse_list(argv[++i]);
    else if (a == "--per-sm" && val) per_sm_list = parse_list(argv[++i]);
    else if (a == "--reps" && val) reps = parse_list(argv[++i]).front();
    else if (a == "--contiguous") contiguous = true;
    else if (a == "--methods" && val) {
      methods.clear();
      for (std::string m = argv[++i], part; !m.empty();) {
        const auto comma = m.find(',');
        part = m.substr(0, comma);
        m = comma == std::string::npos ? "" : m.substr(comma + 1);
        if (!find_method(part)) {
          std::string known;
          for (const Method& k : kMethods) known += std::string(known.empty() ? "" : ", ") + k.name;
          std::fprintf(stderr, "podcheck_gather_bench: unknown method '%s' (%s)\n", part.c_str(), known.c_str());
          return 2;
        }
        methods.push_back(part);
      }
    } else {
      std::fprintf(stderr, "usage: podcheck_gather_bench [--sms 8,16,...] [--stages 2,4,...] [--per-sm 1,2,...] "
                           "[--methods cp.async,tma,bulk,...] [--reps N] [--contiguous]\n");
      return 2;
    }
  }
  int dev_count = 0;
  if (cudaGetDeviceCount(&dev_count) != cudaSuccess || dev_count == 0) {
    std::fprintf(stderr, "podcheck_gather_bench: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) {
    std::fprintf(stderr, "podcheck_gather_bench: needs sm_90 (tensor and bulk copies); this is sm_%d%d\n", prop.major,
                 prop.minor);
    return 2;
  }
  const int n_sm = prop.multiProcessorCount;
  if (sms_list.empty()) sms_list = {8, 16, 24, 33, 44, 66, 99, n_sm};
  for (int k : sms_list)
    if (k > n_sm) {
      std::fprintf(stderr, "podcheck_gather_bench: --sms %d: the device has %d SMs\n", k, n_sm);
      return 2;
    }
  for (int st : stage_list)
    if (std::int64_t(st) * kStage + 16 * st > prop.sharedMemPerBlockOptin) {
      std::fprintf(stderr, "podcheck_gather_bench: --stages %d: %d bytes of ring, the device allows %zu\n", st, st * kStage,
                   prop.sharedMemPerBlockOptin);
      return 2;
    }

  const Shape s{64, 256, 8};
  const std::size_t pages = std::size_t(s.reqs) * s.pages_per_req;
  const std::size_t half = pages * kPage * s.heads * kRowBytes;  // bytes of K (and of V)
  char *k = nullptr, *v = nullptr;
  int* table = nullptr;
  unsigned long long* sum = nullptr;
  CHECK_CUDA(cudaMalloc(&k, half));
  CHECK_CUDA(cudaMalloc(&v, half));
  CHECK_CUDA(cudaMalloc(&table, pages * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&sum, 2 * sizeof(unsigned long long)));  // [1]: the decode's sink, never written
  fill<<<4 * n_sm, 256>>>(reinterpret_cast<std::uint32_t*>(k), half / 4, 0x1234u);
  CHECK_CUDA(cudaGetLastError());
  fill<<<4 * n_sm, 256>>>(reinterpret_cast<std::uint32_t*>(v), half / 4, 0xABCDu);
  CHECK_CUDA(cudaGetLastError());
  std::vector<int> host_table(pages);
  std::iota(host_table.begin(), host_table.end(), 0);
  if (!contiguous) std::shuffle(host_table.begin(), host_table.end(), std::mt19937(1));
  CHECK_CUDA(cudaMemcpy(table, host_table.data(), pages * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(sum, 0, sizeof(unsigned long long)));
  xor_linear<<<4 * n_sm, 256>>>(reinterpret_cast<const uint4*>(k), half / 16, sum);
  CHECK_CUDA(cudaGetLastError());
  xor_linear<<<4 * n_sm, 256>>>(reinterpret_cast<const uint4*>(v), half / 16, sum);
  CHECK_CUDA(cudaGetLastError());
  unsigned long long want = 0;
  CHECK_CUDA(cudaMemcpy(&want, sum, sizeof want, cudaMemcpyDeviceToHost));
  const unsigned long long want32 = (want >> 32) ^ (want & 0xFFFFFFFFull);
  const unsigned long long want16 = (want32 >> 16) ^ (want32 & 0xFFFFull);  // the decode folds 16-bit elements

  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  auto time_ms = [&](auto&& launch) {
    launch();  // warm-up
    CHECK_CUDA(cudaGetLastError());
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) {
      CHECK_CUDA(cudaEventRecord(e0));
      launch();
      CHECK_CUDA(cudaEventRecord(e1));
      CHECK_CUDA(cudaEventSynchronize(e1));
      CHECK_CUDA(cudaGetLastError());
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms);
    }
    return median(t);
  };
  // the ceiling: K copied onto V's buffer would destroy the data, so the copy goes to a buffer of its own
  char* dst = nullptr;
  CHECK_CUDA(cudaMalloc(&dst, half));
  const float copy_ms = time_ms([&] { CHECK_CUDA(cudaMemcpyAsync(dst, k, half, cudaMemcpyDeviceToDevice)); });
  CHECK_CUDA(cudaFree(dst));
  const double copy_tbs = 2.0 * half / (copy_ms * 1e-3) / 1e12;

  // tensor maps: K (and V) as [pages * 16 tokens][heads][128] bf16, a box of 16 tokens x 1 head x 128
  const PFN_cuTensorMapEncodeTiled_v12000 encode = podcheck::kernels::tensor_map_encoder();
  if (!encode) {
    std::fprintf(stderr, "podcheck_gather_bench: the driver has no cuTensorMapEncodeTiled\n");
    return 2;
  }
  // K (and V) as [pages * 16 tokens][heads][128] bf16; boxes of 16 tokens x h heads x 128 (tma, h = 1, 2, 4), and
  // for decode boxes of 16 x 1 x 64 columns in the 128-byte swizzle (ldmatrix reads them without bank conflicts)
  // heads_outer: dimensions (column, token, head) instead of (column, head, token), so that a box of several heads
  // lands head by head (16 token rows each) rather than token by token
  auto make_map = [&](char* buf, int inner, int heads, bool swz, bool heads_outer = false) {
    CUtensorMap map{};
    const cuuint64_t tokens = pages * kPage, head_stride = kRowBytes, token_stride = cuuint64_t(s.heads) * kRowBytes;
    const cuuint64_t dims[3] = {cuuint64_t(kDim), heads_outer ? tokens : cuuint64_t(s.heads),
                                heads_outer ? cuuint64_t(s.heads) : tokens};
    const cuuint64_t strides[2] = {heads_outer ? token_stride : head_stride, heads_outer ? head_stride : token_stride};
    const cuuint32_t box[3] = {cuuint32_t(inner), cuuint32_t(heads_outer ? kPage : heads),
                               cuuint32_t(heads_outer ? heads : kPage)},
                     elem[3] = {1, 1, 1};
    const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, buf, dims, strides, box, elem,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, swz ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "podcheck_gather_bench: cuTensorMapEncodeTiled failed (%d)\n", int(r));
      std::exit(2);
    }
    return map;
  };
  CUtensorMap map_k[5], map_v[5];  // by heads per box: 1, 2, 4
  for (int h : {1, 2, 4}) {
    map_k[h] = make_map(k, kDim, h, false);
    map_v[h] = make_map(v, kDim, h, false);
  }
  CUtensorMap swz_k = make_map(k, 64, 1, true), swz_v = make_map(v, 64, 1, true);
  CUtensorMap swz4_k = make_map(k, 64, 4, true, true), swz4_v = make_map(v, 64, 4, true, true);

  std::printf("podcheck_gather_bench on %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, n_sm);
  std::printf("cache: mix B's decode, %d requests x %d pages of %d tokens, %d KV heads, head_dim %d, bf16, NHD, pages %s:"
              " %.3f GB of K and V; items of %d pages of one head (%d items)\n",
              s.reqs, s.pages_per_req, kPage, s.heads, kDim, contiguous ? "in order" : "shuffled", 2.0 * half / 1e9,
              kPagesPerItem, s.items());
  std::printf("ceiling in this run: D2D copy %.2f TB/s (read + write), %.3f ms for %.3f GB; medians of %d launches\n",
              copy_tbs, copy_ms, half / 1e9, reps);
  std::printf("%-13s %6s %7s %6s %5s %8s %7s %6s %11s\n", "method", "stages", "KB/CTA", "CTA/SM", "SMs", "ms", "TB/s",
              "%copy", "GB/s per SM");
  int bad = 0;
  const int max_smem = int(prop.sharedMemPerMultiprocessor);
  int* slots = nullptr;
  CHECK_CUDA(cudaMalloc(&slots, n_sm * sizeof(int)));
  for (const std::string& m : methods)
    for (int per_sm : per_sm_list)
    for (int stages : stage_list) {
      const Method& me = *find_method(m);
      const bool async = m != "cp.async", decode = me.decode;
      const int stage_kb = me.heads * kStage / 1024;
      const int ring = stages * me.heads * kStage + (async ? 16 * stages : 0) + (decode ? 1024 : 0);  // + alignment
      // per_sm CTAs fit on an SM (1 KB of each CTA's shared memory is the system's), per_sm + 1 do not
      const int cap = std::min(int(prop.sharedMemPerBlockOptin), max_smem / per_sm - 1024 - 64);
      const int smem = std::max(ring, max_smem / (per_sm + 1) - 1024 + 64);
      if (smem > cap) {
        std::printf("%-13s %6d %7d %6d   does not fit\n", m.c_str(), stages, stages * stage_kb, per_sm);
        continue;
      }
      // a decode stage belongs to one consumer warp at a time only if the warps divide the ring (warp w takes tiles
      // w, w + W, ...; otherwise a warp could wait on a stage's parity a whole ring early)
      if (decode && me.heads == 1 && stages % me.consumer_warps != 0) {
        std::printf("%-13s %6d   not run: the depth is no multiple of the %d consumer warps\n", m.c_str(), stages,
                    me.consumer_warps);
        continue;
      }
      void* const f = async ? me.kernel : cp_async_kernel(stages);
      if (!f) {
        std::printf("%-13s %6d   not built for this depth (cp.async: 2, 4, 8, 16, 24)\n", m.c_str(), stages);
        continue;
      }
      CHECK_CUDA(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
      const int threads = async ? 32 * me.consumer_warps + 32 : kConsumers;
      int resident = 0;
      CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, f, threads, smem));
      if (resident != per_sm) {
        std::printf("%-13s %6d %7d %6d   %d CTAs per SM, not %d\n", m.c_str(), stages, stages * stage_kb, per_sm, resident,
                    per_sm);
        continue;
      }
      for (int sms : sms_list) {
        auto launch = [&] {  // the slots' zeroing (a 528-byte memset) is part of every timed launch
          CHECK_CUDA(cudaMemsetAsync(slots, 0, n_sm * sizeof(int)));
          Shape sh = s;
          int st = stages, sm_n = sms, per = per_sm;
          if (m == "cp.async") {
            void* args[] = {&k, &v, &table, &sh, &sm_n, &per, &slots, &sum};
            CHECK_CUDA(cudaLaunchKernel(f, dim3(n_sm * per_sm), dim3(threads), args, smem, nullptr));
          } else if (decode) {
            void* args[] = {me.heads > 1 ? &swz4_k : &swz_k, me.heads > 1 ? &swz4_v : &swz_v, &table, &sh, &st, &sm_n,
                            &per, &slots, &sum};
            CHECK_CUDA(cudaLaunchKernel(f, dim3(n_sm * per_sm), dim3(threads), args, smem, nullptr));
          } else {
            void* args[] = {&map_k[me.heads], &map_v[me.heads], &k, &v, &table, &sh, &st, &sm_n, &per, &slots, &sum};
            CHECK_CUDA(cudaLaunchKernel(f, dim3(n_sm * per_sm), dim3(threads), args, smem, nullptr));
          }
        };
        CHECK_CUDA(cudaMemset(sum, 0, 2 * sizeof(unsigned long long)));
        launch();
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaDeviceSynchronize());
        unsigned long long got = 0;
        CHECK_CUDA(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
        if (const unsigned long long w = decode ? want16 : want; got != w) {
          std::printf("%-13s %6d %7d %6d %5d   WRONG BYTES: checksum %016llx, the linear read's %016llx\n", m.c_str(),
                      stages, stages * stage_kb, per_sm, sms, got, w);
          ++bad;
          continue;
        }
        const float ms = time_ms(launch);
        const double tbs = 2.0 * half / (ms * 1e-3) / 1e12;
        std::printf("%-13s %6d %7d %6d %5d %8.3f %7.2f %5.1f%% %11.1f\n", m.c_str(), stages, stages * stage_kb, per_sm,
                    sms, ms, tbs, 100.0 * tbs / copy_tbs, tbs * 1e3 / sms);
        std::fflush(stdout);
      }
    }
  CHECK_CUDA(cudaFree(k));
  CHECK_CUDA(cudaFree(v));
  CHECK_CUDA(cudaFree(table));
  CHECK_CUDA(cudaFree(sum));
  CHECK_CUDA(cudaFree(slots));
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  if (bad) std::printf("%d configurations gathered the wrong bytes\n", bad);
  return bad ? 1 : 0;
}
