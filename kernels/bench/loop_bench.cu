// podcheck_loop_bench: the warp-specialised prefill's inner loop (pod_ws_kernel's consumer warpgroups,
// kernels/pod/pod_kernels.cuh) alone, on K / V stages that are already in shared memory (but in the copy and tma
// modes, which add the producer back): no items, no masks, no epilogue. Mix A's prefill alone runs that loop at
// about 38 % of the tensor core's peak (docs/KERNEL.md, steps 26-27); this measures what the loop itself can reach,
// and which of its parts cost what, by taking parts away (notebook steps 28 and 30).
//
// One CTA of 384 threads per SM (its shared memory allows no second); all fill the stages, then warpgroup 0 (and
// warpgroup 2 when NC = 1) leaves with its registers given back as the kernel's producer does, and NC consumer
// warpgroups of 64 query rows each (NC = 2 in the kernel) run T tiles of TK keys over a ring of stages that hold
// 256 distinct keys (4 stages of 64, or 2 of 128), each tile as in the kernel's default order: S = Q K^T of tile
// k and O += P V of tile k - 1 issued as two commit groups, the wait for S, the tile's work on S, the wait for the
// P V. The tile's work on S, by mode:
//   tensor   none, and P fixed: the products alone with no dependency between them (two iterations in flight),
//            the rate the instruction shapes reach on their own
//   mma      P = S rounded to bf16 (the dependency S -> P -> P V, no exponentials)
//   exp      P = 2^(S c - 8) rounded, row sums as fp32 adds (the exponentials, no row maximum, no rescale)
//   softmax  the kernel's own tile: softmax_tile (row maxima, shuffles, exponentials, P), the row sums of the
//            rounded P on mma.sync, O rescaled when a maximum moved (kernels/pod/tile_softmax.cuh, shared code);
//            here the keys repeat, so after the first stages no maximum moves and O is never rescaled
//   rescale  softmax with O and d rescaled on every tile, as if a maximum had moved (in mix A's prefill alone 76 %
//            of tiles rescale: short causal items, notebook step 26); alpha is 1 here, so the result is the same
//   sync     rescale plus the kernel's per-tile handshakes with its producer, on barriers nobody else uses: the wait
//            on the stage's full barrier (already complete) with its proxy fence, and the arrival on its empty one
//   ahead    softmax with the products a tile ahead: tile k - 1's P V and tile k + 1's S = Q K^T (a second S
//            accumulator) issued before tile k's softmax and waited for after it, then the rescale; so the softmax
//            runs beside both products and a consumer never waits for an S it has just issued (the kernel's order
//            waits for tile k's S before its softmax and overlaps only the P V)
//   fsum     softmax with the row sums as fp32 adds of the unrounded weights (softmax_exp, the kernel's
//            PODCHECK_WS_FSUM=1 arithmetic and order: P rounded after the wait for the previous P V) instead of an
//            mma.sync of the rounded P, which waits for the tensor pipe the wgmma hold (notebook step 30); fsum2:
//            the same sums in the default order, P rounded before the wait into a second P array (steps in pairs)
//   copy     sync, with warpgroup 0 as the kernel's producer: tile k's K and V copied into its stage by the
//            kernel's own gather (issue_kv_tile: 16-byte cp.async through a page table, kernels/pod/kv_copy.cuh)
//            from a paged cache in global memory (--tokens, default 2,048, of 8 KV heads, NHD pages of --page
//            tokens, the table shuffled; CTA b reads head b mod 8, from tile 0, or with --stagger from a tile that
//            spreads the CTAs of one head evenly over its tokens, so they do not read the same tiles together as
//            the prefill's items of one KV head need not), on the stages' full and empty barriers as in the kernel;
//            copyr / copyr4: the same bytes gathered row-major, 2 or 4 lanes per token row (issue_kv_tile_rowmajor
//            below: a page and an address per row and lane, not per row and copy pair; 16 or 8 global
//            lines per copy, against 4); copyl: copy's mapping with the page lookups per pass of all threads
//            (issue_kv_tile_lean, about half the instructions, the same LDGSTS); copyf: fsum2's consumers fed by
//            copy's producer
//   tma      copy, with the stages filled by tensor copies instead: one thread, one copy per page (or per 64 slots
//            of a larger page) and 64-column block of K and of V (16 per tile at pages of 16); tma4: the same copies
//            issued by four threads (lane 0 of each producer warp), in case the issue rate is a thread's; tmak: the
//            kernel's own tensor copies (issue_kv_tile_tma, the PODCHECK_WS_TMA build's producer, kv_copy.cuh), at
//            pages of 64 tokens or more only; tmix: K by the kernel's tensor copies of a page each (issue_k_pages_tma,
//            the PODCHECK_WS_TMA=2 build's), V by copy's gather (half of each), pages of 8 to 64 tokens dividing the
//            tile; tmixf: fsum2's consumers fed by tmix's producer
// and by the S = Q K^T form: Q fragments in registers (rs, the kernel's default) or Q read from shared memory by
// the instruction (ss, PODCHECK_WS_QSMEM); by TK (64: the kernel's default; 128) and NC (1 or 2 consumers); -pp:
// the two consumers take turns issuing their products (FlashAttention-3's ping-pong, PODCHECK_WS_PINGPONG).
//
// Checked: every mode but tensor and mma ends with O / d for every row (in copy and tma, of the keys the producer
// brought), which must equal attention over the 256 distinct keys
// (each appears T / stages times, which leaves the normalised output unchanged), computed on the host in double
// from the same bf16 inputs; a variant over 4e-3 (P's rounding to bf16 is worth about 1e-3 here) is reported and
// the run exits 1. tensor and mma compute no attention and are timed only.
//
// Ratios, printed per variant: TFLOP/s (QK^T and PV, 4 x 64 x TK x D per tile and consumer) against a cuBLAS bf16
// GEMM (8192^3) of the same run, and the cycles per tile (clock64 around each consumer's loop, median over the
// CTAs) against the tensor core's 2,048 bf16 multiply-adds per cycle and SM; the clock those cycles ran at.
//   podcheck_loop_bench [--tiles T] [--reps N] [--page P] [--tokens N] [--stagger 0|1] [--variants softmax-rs-64-2,...]
#include <cublas_v2.h>
#include <cuda.h>  // CUtensorMap
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/host/cuda_check.hpp"
#include "kernels/pod/kv_copy.cuh"
#include "kernels/pod/mma_sm80.cuh"
#include "kernels/pod/tensor_map.hpp"
#include "kernels/pod/tile_softmax.cuh"
#include "kernels/pod/wgmma_sm90.cuh"

namespace {

using namespace podcheck::kernels;
using namespace podcheck::kernels::sm90;
using sm80::ldsm_x4;
using sm80::smem_u32;
using QT = __nv_bfloat16;

constexpr int kD = 128;        // head_dim
constexpr int kKeys = 256;     // distinct keys in the stages
constexpr int kMaxRows = 128;  // two consumers' rows
enum Mode {
  kTensor = 0, kMma = 1, kExp = 2, kSoftmax = 3, kRescale = 4, kSync = 5, kAhead = 6, kFsum = 7, kCopy = 8, kTma = 9,
  kTma4 = 10, kFsumPair = 11, kCopyR = 12, kCopyR4 = 13, kCopyF = 14, kCopyL = 15, kTmaK = 16, kTmix = 17,
  kTmixF = 18
};
const char* const kModeName[] = {"tensor", "mma",  "exp", "softmax", "rescale", "sync",
                                 "ahead",  "fsum", "copy", "tma",    "tma4",    "fsum2",
                                 "copyr",  "copyr4", "copyf",  "copyl",  "tmak",   "tmix",
                                 "tmixf"};
constexpr int kCacheTokens = 2048;  // (copy, tma) default tokens per KV head in the paged cache (--tokens)
constexpr int kCacheHeads = 8;      // (copy, tma) KV heads in the cache; CTA b reads head b mod 8

// Shared memory: the stages ([TK][64] swizzled blocks of K, then of V, as the kernel's), Q padded for ldmatrix
// (rs) and Q in swizzled [128][64] blocks (ss).
template <int TK> struct Layout {
  static constexpr int NS = kKeys / TK;
  static constexpr int kv_block = (kD / 64) * TK * 128;
  static constexpr int stage = 2 * kv_block;
  static constexpr int q_pad = NS * stage;
  static constexpr int q_swz = (q_pad + kMaxRows * (kD + 8) * 2 + 1023) / 1024 * 1024;
  static constexpr int q_block = kMaxRows * 128;
  // mbarriers: (sync) full, empty; (copy, tma) full[NS], empty[NS] of the stages
  static constexpr int bars = q_swz + (kD / 64) * q_block;
  static constexpr int bytes = bars + 8 * 2 * NS + 1024;  // + the alignment slack
};

struct Params {
  const QT* q;  // [128][D]
  const QT* k;  // [256][D]
  const QT* v;  // [256][D]
  float* o;     // [128][D]: O / d of CTA 0
  long long* cycles;  // [grid][NC]
  int tiles;
  float c;  // sm_scale * log2(e)
  pod_side side;
  FastDiv gd;
  // (copy, tma) the paged KV cache the producer reads: NHD pages of `page` tokens, kCacheHeads heads, one request
  // of `tokens` tokens (token t holds key t mod 256) whose page table is shuffled; the side as the kernel's copy
  // code takes it, and the tensor maps of its K and V (boxes of 64 columns x min(page, TK) slots of one head and
  // page, 128-byte swizzle)
  SideDev kv;
  CUtensorMap tmk, tmv;
  int page;
  int tokens;   // per KV head, a multiple of 256 (so a tile's keys are those of its token's position mod 256)
  int stagger;  // 1: the CTAs of one head start at tiles spread evenly over its tokens; 0: all at tile 0
};
// (copy, tma; their tiles are of 64 keys, the static_assert in loop_kernel) The first token of tile k of this CTA's
// producer: tiles run on through the cache and wrap, from tile 0 or (stagger) from the CTA's share of the head's
// tiles (CTA b is the (b / 8)-th of its head's ceil(grid / 8) CTAs). Any start keeps the check: T, a multiple of 4,
// wraps over each 256 keys' four tiles equally often.
__device__ __forceinline__ int tile_token(const Params& P, int k) {
  const int n_tiles = P.tokens / 64, per_head = (int(gridDim.x) + kCacheHeads - 1) / kCacheHeads;
  const int first = P.stagger ? int(blockIdx.x) / kCacheHeads * n_tiles / per_head : 0;
  return (first + k) % n_tiles * 64;
}

// (copyr, copyr4) A K / V stage of the kernel's layout (16-bit KV, [TK][64]-element blocks, 128-byte
// swizzle: what issue_kv_tile<..., SWZ> writes) gathered row-major: LPR lanes share a token row and each copies
// D / (8 LPR) of its 16-byte chunks, so a lane resolves its row's page and address once per tile (issue_kv_tile: a
// thread keeps one column and steps over rows, a page and a 64-bit address per row and copy pair). A warp's copy
// covers 32 / LPR rows, so 32 / LPR global lines of 128 bytes where issue_kv_tile's covers 4 (two rows of 256
// bytes). Same bytes, same destinations, tokens >= kv_hi zero-filled. Measured slower (notebook step 31): ncu counts
// a shared-memory wavefront per global line a warp's copy touches, 16 per copy at LPR 2 against 4.
template <int D, int NTOK, int NTHR, class KVT, int LPR>
__device__ __forceinline__ void issue_kv_tile_rowmajor(const SideDev& SDv, const KvSrc& src, int t0, int kv_hi,
                                                       unsigned char* kdst, unsigned char* vdst, int idx) {
  static_assert(sizeof(KVT) == 2 && D % 64 == 0, "16-bit KV, 64-column blocks");
  static_assert(LPR == 2 || LPR == 4, "2 or 4 lanes per row");
  constexpr int RPW = 32 / LPR;            // rows per warp and pass
  constexpr int RPP = (NTHR / 32) * RPW;   // rows per pass of all NTHR threads
  constexpr int CPL = D / 8 / LPR;         // 16-byte chunks per lane and row
  constexpr int CPB = 8 / LPR;             // of them in one 64-column block
  static_assert(NTHR % 32 == 0 && NTOK % RPP == 0, "whole warps, whole passes");
  const int lane = idx & 31, h = lane % LPR;
  const int row0 = (idx >> 5) * RPW + lane / LPR;
  const std::uint32_t kd = smem_u32(kdst), vd = smem_u32(vdst);
#pragma unroll
  for (int p = 0; p < NTOK / RPP; ++p) {
    const int r = row0 + p * RPP, t = t0 + r;
    const bool ok = t < kv_hi;
    const int tc = ok ? t : t0;  // t0 < kv_hi: its page exists
    const int q = SDv.ps.div(tc);
    const std::uint32_t page = static_cast<std::uint32_t>(__ldg(src.pages + q));
    const std::uint32_t slot = static_cast<std::uint32_t>(SDv.ps.mod(tc, q));
    const std::uint64_t ko = std::uint64_t(page) * SDv.k_sp + slot * SDv.k_ss;  // elements
    const std::uint64_t vo = SDv.kv_same ? ko : std::uint64_t(page) * SDv.v_sp + slot * SDv.v_ss;
    const unsigned char* ks = src.k + ko * 2;
    const unsigned char* vs = src.v + vo * 2;
#pragma unroll
    for (int c = 0; c < CPL; ++c) {
      const int b = c / CPB, cc = c % CPB;  // block, step within it
      const int s = (LPR * cc + h) ^ (r & 7);  // swizzled slot of chunk LPR cc + h of the block
      const int j = b * 8 + LPR * cc + h;
      const std::uint32_t off = std::uint32_t(b * NTOK * 128 + r * 128 + s * 16);
      cp_async16(kd + off, ks + j * 16, ok);
      cp_async16(vd + off, vs + j * 16, ok);
    }
  }
}

// (copyl) issue_kv_tile's mapping and copies (a thread keeps one 16-byte column, a warp's copy covers two rows: 4
// global lines), with the page lookups made per pass of all threads instead of per thread and row: thread (row0,
// chunk) copies token t0 + row0 + RPP i, and when the page size and t0 are multiples of RPP that token's page and slot
// are those of t0 + RPP i (the same for every thread, so the division is one per pass) plus row0 slots (a per-thread
// constant folded into the base pointers). A full tile only (t0 + NTOK <= kv_hi, no zero fill): the kernel's last
// tile of an item would take issue_kv_tile. About half of issue_kv_tile's instructions per tile; the same LDGSTS.
template <int D, int NTOK, int NTHR, class KVT, bool SAME>
__device__ __forceinline__ void issue_kv_tile_lean(const SideDev& SDv, const KvSrc& src, int t0, unsigned char* kdst,
                                                   unsigned char* vdst, int idx) {
  static_assert(sizeof(KVT) == 2, "16-bit KV");
  constexpr int CPR = D / 8;           // 16-byte chunks per token row
  constexpr int RPP = NTHR / CPR;      // rows per pass (8 at head_dim 128)
  static_assert(NTHR % CPR == 0 && RPP % 8 == 0 && NTOK % RPP == 0, "whole passes of whole swizzle periods");
  const int row0 = idx / CPR, chunk = idx % CPR;
  const std::uint32_t off = std::uint32_t((chunk / 8) * NTOK * 128) + swz128(row0, chunk % 8);
  const std::uint32_t kd = smem_u32(kdst) + off, vd = smem_u32(vdst) + off;
  const unsigned char* kb = src.k + (std::uint64_t(row0) * SDv.k_ss + chunk * 8) * 2;
  const unsigned char* vb = src.v + (std::uint64_t(row0) * (SAME ? SDv.k_ss : SDv.v_ss) + chunk * 8) * 2;
#pragma unroll
  for (int i = 0; i < NTOK / RPP; ++i) {
    const int u = t0 + i * RPP;  // the pass's first token: its page and slot are every thread's, less row0 slots
    const int q = SDv.ps.div(u);
    const std::uint32_t page = static_cast<std::uint32_t>(__ldg(src.pages + q));
    const std::uint32_t slot = static_cast<std::uint32_t>(SDv.ps.mod(u, q));
    const std::uint64_t ko = std::uint64_t(page) * SDv.k_sp + slot * SDv.k_ss;  // elements
    const std::uint64_t vo = SAME ? ko : std::uint64_t(page) * SDv.v_sp + slot * SDv.v_ss;
    cp_async16(kd + i * RPP * 128, kb + ko * 2, true);
    cp_async16(vd + i * RPP * 128, vb + vo * 2, true);
  }
}

__device__ __forceinline__ unsigned char* aligned_smem(uint4* raw) {
  const std::uint32_t a = smem_u32(raw);
  return reinterpret_cast<unsigned char*>(raw) + ((1024u - (a & 1023u)) & 1023u);
}

template <int TK, int MODE, bool SS, int NC, bool PP = false>
__global__ void __launch_bounds__(384, 1) loop_kernel(const __grid_constant__ Params P) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using L = Layout<TK>;
  extern __shared__ uint4 smem_raw[];
  unsigned char* smem = aligned_smem(smem_raw);
  const std::uint32_t sbase = smem_u32(smem);
  const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127;
  constexpr bool kCopies =
      MODE == kCopy || MODE == kCopyR || MODE == kCopyR4 || MODE == kCopyF || MODE == kCopyL;  // cp.async producers
  constexpr bool kMix = MODE == kTmix || MODE == kTmixF;  // K by tensor copies, V by cp.async
  constexpr bool kProducer = kCopies || kMix || MODE == kTma || MODE == kTma4 || MODE == kTmaK;  // a producer fills
  constexpr int kIssuers = kCopies || kMix || MODE == kTmaK ? 128 : MODE == kTma ? 1 : 4;  // arrivals on a full barrier
  static_assert(!kProducer || (TK == 64 && NC == 2), "the producer's modes: the kernel's 64-key tiles, two consumers");
  const std::uint32_t bars = sbase + L::bars;
  auto full_bar = [&](int st) { return bars + 8 * st; };
  auto empty_bar = [&](int st) { return bars + 8 * (L::NS + st); };
  // every thread fills: K and V into the stages (but for a producer's modes), Q both ways
  for (int i = tid; i < (kProducer ? 0 : kKeys * (kD / 8)); i += blockDim.x) {
    const int key = i / (kD / 8), ch = i % (kD / 8);  // 16-byte chunk ch of row key
    const int st = key / TK, row = key % TK;
    const std::uint32_t off = (ch / 8) * TK * 128 + swz128(row, ch % 8);
    *reinterpret_cast<uint4*>(smem + st * L::stage + off) = reinterpret_cast<const uint4*>(P.k)[i];
    *reinterpret_cast<uint4*>(smem + st * L::stage + L::kv_block + off) = reinterpret_cast<const uint4*>(P.v)[i];
  }
  for (int i = tid; i < kMaxRows * (kD / 8); i += blockDim.x) {
    const int row = i / (kD / 8), ch = i % (kD / 8);
    const uint4 x = reinterpret_cast<const uint4*>(P.q)[i];
    *reinterpret_cast<uint4*>(smem + L::q_pad + row * (kD + 8) * 2 + ch * 16) = x;
    *reinterpret_cast<uint4*>(smem + L::q_swz + (ch / 8) * L::q_block + swz128(row, ch % 8)) = x;
  }
  if (tid == 0) {
    if constexpr (kProducer) {
      for (int st = 0; st < L::NS; ++st) {
        mbar_init(full_bar(st), kIssuers);  // the producer's threads' cp.async, or the threads issuing tensor copies
        mbar_init(empty_bar(st), 128 * NC);                 // every consumer thread, once its products read it
      }
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // (tma) seen by the tensor copies
    } else {
      mbar_init(full_bar(0), 1);
      mbar_init(full_bar(1), 128 * NC);
      mbar_arrive(full_bar(0));  // (sync) the full barrier's phase 0 completes
    }
  }
  fence_async_smem();
  __syncthreads();
  if (wg == 0 || wg > NC) {  // as the kernel's producer, which gives its registers to the consumers
    setmaxnreg_dec<56>();
    if (!kProducer || wg != 0) return;
    // (copy, tma) the producer: tile k's K and V, tile_token(P, k) onward of KV head b mod kCacheHeads,
    // into stage k mod NS once its consumers released it, as pod_ws_kernel's producer does for the prefill
    const int kv_head = blockIdx.x % kCacheHeads;
    if constexpr (kCopies) {  // the kernel's own gather: every thread, 16-byte cp.async through the page table
      const KvSrc src = kv_src<QT>(P.kv, 0, kv_head);
      for (int k = 0; k < P.tiles; ++k) {
        const int st = k % L::NS;
        mbar_wait(empty_bar(st), ((k / L::NS) & 1) ^ 1);
        unsigned char* kdst = smem + st * L::stage;
        if constexpr (MODE == kCopy || MODE == kCopyF)
          issue_kv_tile<kD, TK, 128, QT, true>(P.kv, src, tile_token(P, k), P.tokens, kdst,
                                               kdst + L::kv_block, wtid);
        else if constexpr (MODE == kCopyL)  // the cache's K and V strides are equal (one NHD layout)
          issue_kv_tile_lean<kD, TK, 128, QT, true>(P.kv, src, tile_token(P, k), kdst, kdst + L::kv_block, wtid);
        else  // copyr, copyr4: row-major, 2 or 4 lanes per token row
          issue_kv_tile_rowmajor<kD, TK, 128, QT, MODE == kCopyR ? 2 : 4>(P.kv, src, tile_token(P, k), P.tokens,
                                                                           kdst, kdst + L::kv_block, wtid);
        mbar_arrive_cp_async(full_bar(st));
      }
      asm volatile("cp.async.wait_all;\n" ::: "memory");
    } else if constexpr (kMix) {
      // tmix: tile k's K by the kernel's own tensor copies of K alone (issue_k_pages_tma, the PODCHECK_WS_TMA=2
      // build's producer: one per page and 64-column block, from lane 0 of each producer warp, their bytes expected on
      // the full barrier without an arrival; pages of 8 to 64 tokens dividing the tile, so each tile begins a page),
      // its V by the kernel's gather (every thread's cp.async, arriving as in copy): the LDGSTS traffic halved, the
      // tensor copies' issue (tma4: 16 a tile at pages of 16) halved too
      const KvSrc src = kv_src<QT>(P.kv, 0, kv_head);
      for (int k = 0; k < P.tiles; ++k) {
        const int st = k % L::NS, t0 = tile_token(P, k);
        mbar_wait(empty_bar(st), ((k / L::NS) & 1) ^ 1);
        unsigned char* kdst = smem + st * L::stage;
        issue_k_pages_tma<kD, TK>(&P.tmk, src, P.kv.ps.div(t0), P.page, kv_head, sbase + st * L::stage, full_bar(st),
                                  wtid);
        issue_kv_tile<kD, TK, 128, QT, true, false, false, 8, 2>(P.kv, src, t0, P.tokens, kdst, kdst + L::kv_block,
                                                                 wtid);
        mbar_arrive_cp_async(full_bar(st));
      }
      asm volatile("cp.async.wait_all;\n" ::: "memory");
    } else if constexpr (MODE == kTmaK) {
      // tmak: the kernel's own tensor copies (issue_kv_tile_tma, the PODCHECK_WS_TMA build's producer) with its
      // arrivals: four copies per tile from lane 0 of each warp, the other 124 threads arriving plainly; pages of at
      // least TK tokens (the run refuses smaller), so every tile lies whole within one page
      const KvSrc src = kv_src<QT>(P.kv, 0, kv_head);
      for (int k = 0; k < P.tiles; ++k) {
        const int st = k % L::NS;
        mbar_wait(empty_bar(st), ((k / L::NS) & 1) ^ 1);
        const int t0 = tile_token(P, k), q = P.kv.ps.div(t0);
        issue_kv_tile_tma<kD, TK>(&P.tmk, &P.tmv, src, q, P.kv.ps.mod(t0, q), kv_head, sbase + st * L::stage,
                                  sbase + st * L::stage + L::kv_block, full_bar(st), wtid);
      }
    } else if (wtid % 32 == 0 && wtid / 32 < kIssuers) {
      // tma: tensor copies, one per page (or per TK slots of a larger page), 64-column block and side (K or V), of
      // which lane 0 of warp w issues every kIssuers-th from w (tma: one thread; tma4: four), each arriving on the
      // full barrier with the bytes of its own
      const int w = wtid / 32, rows = P.page < TK ? P.page : TK, n = (TK / rows) * (kD / 64) * 2;
      const std::uint32_t bytes = std::uint32_t((n - w + kIssuers - 1) / kIssuers) * rows * 128;
      for (int k = 0; k < P.tiles; ++k) {
        const int st = k % L::NS;
        mbar_wait(empty_bar(st), ((k / L::NS) & 1) ^ 1);
        arrive_expect_tx(full_bar(st), bytes);
        const int t0 = tile_token(P, k);
        for (int j = w; j < n; j += kIssuers) {
          const int side = j & 1, cb = (j >> 1) % (kD / 64), r = (j >> 1) / (kD / 64) * rows;
          const int t = t0 + r, page = __ldg(P.kv.s.kv.indices + P.kv.ps.div(t)), slot = t % P.page;
          tma_load_4d(sbase + st * L::stage + side * L::kv_block + cb * TK * 128 + r * 128, side ? &P.tmv : &P.tmk,
                      64 * cb, slot, kv_head, page, full_bar(st));
        }
      }
    }
    return;
  }
  setmaxnreg_inc<224>();  // the kernel's consumers' budget (128 x 56 + 256 x 224 registers)
  const int cw = wg - 1, warp = wtid >> 5, lane = tid & 31, tq = lane & 3;
  const QT* Qs = reinterpret_cast<const QT*>(smem + L::q_pad);
  std::uint32_t qf[SS ? 1 : kD / 16][4];
  if constexpr (!SS) {
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      ldsm_x4(qf[kk], Qs + (cw * 64 + warp * 16 + (lane & 15)) * (kD + 8) + kk * 16 + (lane >> 4) * 8);
  }
  RowMask M;  // no mask: every tile takes softmax_exp's raw path, as the kernel's unmasked tiles do
  M.S = &P.side;
  M.r = 0;
  M.packed = kMaxRows;
  M.qo_len = kMaxRows;
  M.L = 1 << 30;
  M.kv_hi = 1 << 30;
  M.scale_log2 = P.c;
  M.X = nullptr;
  M.kv_head = 0;
  M.g = 1;
  M.set_rows(cw * 64 + warp * 16, P.gd);

  float o[kD / 8][4];
#pragma unroll
  for (int n = 0; n < kD / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, d[4] = {0.f, 0.f, 0.f, 0.f};
  std::uint32_t pp[TK / 16][4];  // P of tile k - 1
#pragma unroll
  for (int kk = 0; kk < TK / 16; ++kk) pp[kk][0] = pp[kk][1] = pp[kk][2] = pp[kk][3] = 0x3C003C00u;  // bf16 0.0078
  // the kernel's own issue code (wgmma_sm90.cuh); Q from registers (qf) or (SS) the swizzled blocks
  auto issue_qk = [&](float (&sc)[TK / 8][4], int st) {
    sm90::issue_qk<QT, TK, kD, SS>(&sc[0][0], qf, sbase + L::q_swz + cw * 64 * 128, L::q_block, sbase + st * L::stage);
  };
  auto issue_pv = [&](int st) {
    sm90::issue_pv<QT, TK, kD>(&o[0][0], pp, sbase + st * L::stage + L::kv_block);
  };

  // PP: the two consumers take turns issuing their products (named barriers 1 and 2, the kernel's
  // PODCHECK_WS_PINGPONG): consumer 0 first; consumer 1 opens its first turn, consumer 0 takes the last opening
  if (PP && cw == 1) named_arrive(1, 256);
  auto turn_begin = [&] {
    if constexpr (PP) named_sync(1 + cw, 256);
  };
  auto turn_end = [&] {
    if constexpr (PP) named_arrive(2 - cw, 256);
  };
  // tile 0's S = Q K^T (sc zeroed), with nothing else in flight: tile 0 is peeled, as in the kernel (a wgmma or a
  // wait under a condition serialises every wgmma, ptxas C7514)
  auto qk_alone = [&](float (&sc)[TK / 8][4]) {
    turn_begin();
    wg_fence();
    issue_qk(sc, 0);
    turn_end();
    wg_wait<0>();
    wg_pin<TK / 2>(&sc[0][0]);
  };
  const long long t0 = clock64();
  if constexpr (MODE == kTensor) {
    float sc[TK / 8][4];
#pragma unroll
    for (int n = 0; n < TK / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.f;
    wg_pin<TK / 2>(&sc[0][0]);
    wg_pin<kD / 2>(&o[0][0]);
    wg_fence();
    for (int k = 0; k < P.tiles; ++k) {
      const int st = k % L::NS;
      issue_qk(sc, st);
      issue_pv(st);
      wg_wait<2>();  // the previous iteration's two groups: two iterations in flight
    }
    wg_wait<0>();
    wg_pin<TK / 2>(&sc[0][0]);
    wg_pin<kD / 2>(&o[0][0]);
    wg_keep<TK / 4>(&pp[0][0]);
    if (sc[0][0] == 12345.f) o[0][0] += 1.f;  // keeps S live
  } else if constexpr (MODE == kAhead) {
    float sa[TK / 8][4], sb[TK / 8][4];
    auto zero = [&](float (&sc)[TK / 8][4]) {
#pragma unroll
      for (int n = 0; n < TK / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.f;
      wg_pin<TK / 2>(&sc[0][0]);
    };
    // tile k's softmax (cur: its S, complete) beside tile k - 1's P V and tile k + 1's S = Q K^T (into nxt), both
    // issued first and waited for after it: every wait in the step is for groups the step committed (a group
    // waited for across the loop's back-edge makes ptxas serialise the wgmma, C7514)
    auto softmax_fold = [&](float (&cur)[TK / 8][4], int k) {
      float alpha[2];
      std::uint32_t pa[TK / 16][4];
      const bool moved = softmax_tile<TK, QT, false>(cur, k * TK, M, m, alpha, pa, lane);
      row_sums<TK, QT>(d, pp);  // tile k - 1's sums, in its maximum's scale like O after its P V
      wg_wait<0>();
      wg_pin<kD / 2>(&o[0][0]);
      wg_keep<TK / 4>(&pp[0][0]);
      if (moved) rescale<kD>(o, d, alpha);
#pragma unroll
      for (int kk = 0; kk < TK / 16; ++kk)
#pragma unroll
        for (int e = 0; e < 4; ++e) pp[kk][e] = pa[kk][e];
    };
    auto step = [&](float (&cur)[TK / 8][4], float (&nxt)[TK / 8][4], int k) {
      zero(nxt);
      wg_pin<kD / 2>(&o[0][0]);
      turn_begin();
      wg_fence();
      issue_pv((k - 1) % L::NS);
      issue_qk(nxt, (k + 1) % L::NS);
      turn_end();
      softmax_fold(cur, k);
      wg_pin<TK / 2>(&nxt[0][0]);
    };
    {  // tile 0: its S, softmax and P; tile 1's S
      zero(sa);
      wg_fence();
      issue_qk(sa, 0);
      wg_wait<0>();
      wg_pin<TK / 2>(&sa[0][0]);
      float alpha[2];
      softmax_tile<TK, QT, false>(sa, 0, M, m, alpha, pp, lane);  // O and d are 0: no rescale
      zero(sb);
      wg_fence();
      issue_qk(sb, 1 % L::NS);
      wg_wait<0>();
      wg_pin<TK / 2>(&sb[0][0]);
    }
    // steps 1 .. tiles - 2 (an even count: tiles is a multiple of 4), in pairs; the last tile's S ends in sb
    for (int k = 1; k < P.tiles - 1; k += 2) {
      step(sb, sa, k);
      step(sa, sb, k + 1);
    }
    {  // the last tile: tile n - 2's P V beside its softmax, then its own P V
      wg_pin<kD / 2>(&o[0][0]);
      wg_fence();
      issue_pv((P.tiles - 2) % L::NS);
      softmax_fold(sb, P.tiles - 1);
      wg_pin<kD / 2>(&o[0][0]);
      wg_fence();
      issue_pv((P.tiles - 1) % L::NS);
      row_sums<TK, QT>(d, pp);
      wg_wait<0>();
      wg_pin<kD / 2>(&o[0][0]);
      wg_keep<TK / 4>(&pp[0][0]);
    }
  } else if constexpr (MODE == kFsumPair || MODE == kCopyF || MODE == kTmixF) {
    // fsum's arithmetic in the default order: tile k's weights rounded into P before the wait for tile k - 1's
    // P V, into the P array that P V does not read (two arrays, their roles swapped from tile to tile, steps in
    // pairs so that no copy joins them: copying P from a second array let ptxas serialise the products, C7513)
    // copyf: the same, fed by the copy mode's producer (the stages' full and empty barriers, as sync and copy);
    // tmixf: fed by tmix's
    std::uint32_t pb[TK / 16][4];
    constexpr bool kFed = MODE == kCopyF || MODE == kTmixF;
    auto fed_in = [&](int k) {  // (copyf, tmixf) tile k's stage landed, made visible to the products
      if constexpr (kFed) {
        mbar_wait(full_bar(k % L::NS), (k / L::NS) & 1);
        fence_async_smem();
      }
    };
    auto fed_out = [&](int k) {  // (copyf, tmixf) tile k's stage read by its S and its P V
      if constexpr (kFed) mbar_arrive(empty_bar(k % L::NS));
    };
    auto step = [&](const std::uint32_t (&pin)[TK / 16][4], std::uint32_t (&pout)[TK / 16][4], int k) {
      float sc[TK / 8][4], alpha[2], rs[2] = {0.f, 0.f};
      fed_in(k);
#pragma unroll
      for (int n = 0; n < TK / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.f;
      wg_pin<TK / 2>(&sc[0][0]);
      wg_pin<kD / 2>(&o[0][0]);
      turn_begin();
      wg_fence();
      issue_qk(sc, k % L::NS);
      sm90::issue_pv<QT, TK, kD>(&o[0][0], pin, sbase + ((k - 1) % L::NS) * L::stage + L::kv_block);
      turn_end();
      wg_wait<1>();
      wg_pin<TK / 2>(&sc[0][0]);
      const bool moved = softmax_exp<TK, false>(sc, k * TK, M, m, alpha, rs, lane);
      pack_p<TK, QT>(sc, pout);
      wg_wait<0>();
      wg_pin<kD / 2>(&o[0][0]);
      wg_keep<TK / 4>(&pin[0][0]);
      fed_out(k - 1);
      if (moved) rescale<kD>(o, d, alpha);
      d[0] += rs[0];
      d[2] += rs[1];
    };
    {  // tile 0 (P into pp), as in the other modes
      float sc[TK / 8][4], alpha[2], rs[2] = {0.f, 0.f};
      fed_in(0);
#pragma unroll
      for (int n = 0; n < TK / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.f;
      wg_pin<TK / 2>(&sc[0][0]);
      qk_alone(sc);
      softmax_exp<TK, false>(sc, 0, M, m, alpha, rs, lane);  // O and d are 0: nothing to rescale
      pack_p<TK, QT>(sc, pp);
      d[0] += rs[0];
      d[2] += rs[1];
    }
    for (int k = 1; k < P.tiles - 1; k += 2) {  // tiles is a multiple of 4: tiles - 2 steps in pairs, then one
      step(pp, pb, k);
      step(pb, pp, k + 1);
    }
    step(pp, pb, P.tiles - 1);
    wg_pin<kD / 2>(&o[0][0]);
    wg_fence();
    sm90::issue_pv<QT, TK, kD>(&o[0][0], pb, sbase + ((P.tiles - 1) % L::NS) * L::stage + L::kv_block);
    wg_wait<0>();
    wg_pin<kD / 2>(&o[0][0]);
    wg_keep<TK / 4>(&pb[0][0]);
    fed_out(P.tiles - 1);
    quad_row_sums(d);
  } else {
    // the modes on the kernel's softmax_tile: row sums of P on mma.sync, O rescaled on every tile but in softmax
    constexpr bool kSoftmaxLike = MODE == kSoftmax || MODE == kRescale || MODE == kSync || kProducer;
    // the tile's work on its S (sc, tile k) into P (pa); the row sums of tile k - 1's P (pp) where the mode has them
    // (fsum) rs: this thread's parts of its rows' sums of the fp32 weights, added to d after the rescale
    auto work = [&](float (&sc)[TK / 8][4], int k, std::uint32_t (&pa)[TK / 16][4], float (&alpha)[2],
                    float (&rs)[2]) -> bool {
      if constexpr (kSoftmaxLike) {
        const bool moved = softmax_tile<TK, QT, false>(sc, k * TK, M, m, alpha, pa, lane);
        if (k > 0) row_sums<TK, QT>(d, pp);
        return moved || MODE != kSoftmax;
      } else if constexpr (MODE == kFsum) {
        rs[0] = rs[1] = 0.f;
        return softmax_exp<TK, false>(sc, k * TK, M, m, alpha, rs, lane);  // rounded into P after the wait
      } else if constexpr (MODE == kExp) {
#pragma unroll
        for (int n = 0; n < TK / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            sc[n][e] = ex2(fmaf(sc[n][e], P.c, -8.f));
            d[(e >> 1) * 2] += sc[n][e];
          }
      }
      pack_p<TK, QT>(sc, pa);
      return false;
    };
    // (sync) a full barrier completed once, so every wait on its phase 0 passes at once, and an empty barrier
    // that completes on each tile's 256 arrivals; (copy, tma) the stages' own, shared with the producer
    auto handshake_in = [&](int k) {  // before tile k's S
      if constexpr (MODE == kSync || kProducer) {
        mbar_wait(kProducer ? full_bar(k % L::NS) : full_bar(0), kProducer ? (k / L::NS) & 1 : 0);
        fence_async_smem();
      }
    };
    auto handshake_out = [&](int k) {  // tile k's stage read (its S and P V done)
      if constexpr (MODE == kSync) mbar_arrive(full_bar(1));
      if constexpr (kProducer) mbar_arrive(empty_bar(k % L::NS));
    };
    // after the rescale, tile k's P for the next P V: pa, or (fsum) the fp32 weights in sc rounded into pp once that
    // P V read the last one, and their sums added to d, as the kernel's FSUM=1 fold (rounding P earlier, into a
    // second array as the other modes do, made ptxas serialise the products: C7513)
    auto take_p = [&](const float (&sc)[TK / 8][4], const std::uint32_t (&pa)[TK / 16][4], const float (&rs)[2]) {
      if constexpr (MODE == kFsum) {
        d[0] += rs[0];
        d[2] += rs[1];
        pack_p<TK, QT>(sc, pp);
      } else {
#pragma unroll
        for (int kk = 0; kk < TK / 16; ++kk)
#pragma unroll
          for (int e = 0; e < 4; ++e) pp[kk][e] = pa[kk][e];
      }
    };
    auto zero_s = [&](float (&sc)[TK / 8][4], int k) {
      handshake_in(k);
#pragma unroll
      for (int n = 0; n < TK / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.f;
      wg_pin<TK / 2>(&sc[0][0]);
    };
    {  // tile 0
      float sc[TK / 8][4], alpha[2], rs[2];
      zero_s(sc, 0);
      qk_alone(sc);
      std::uint32_t pa[TK / 16][4];
      if (work(sc, 0, pa, alpha, rs)) rescale<kD>(o, d, alpha);
      take_p(sc, pa, rs);
    }
    int st_prev = 0;
    for (int k = 1; k < P.tiles; ++k) {
      const int st = k % L::NS;
      float sc[TK / 8][4], alpha[2], rs[2];
      zero_s(sc, k);
      wg_pin<kD / 2>(&o[0][0]);
      turn_begin();
      wg_fence();
      issue_qk(sc, st);
      issue_pv(st_prev);
      turn_end();
      wg_wait<1>();
      wg_pin<TK / 2>(&sc[0][0]);
      std::uint32_t pa[TK / 16][4];
      const bool moved = work(sc, k, pa, alpha, rs);
      wg_wait<0>();
      wg_pin<kD / 2>(&o[0][0]);
      wg_keep<TK / 4>(&pp[0][0]);
      handshake_out(k - 1);
      if (moved) rescale<kD>(o, d, alpha);
      take_p(sc, pa, rs);
      st_prev = st;
    }
    wg_pin<kD / 2>(&o[0][0]);
    wg_fence();
    issue_pv(st_prev);
    if constexpr (kSoftmaxLike) row_sums<TK, QT>(d, pp);
    wg_wait<0>();
    wg_pin<kD / 2>(&o[0][0]);
    wg_keep<TK / 4>(&pp[0][0]);
    if constexpr (MODE == kExp || MODE == kFsum) quad_row_sums(d);
  }
  if (PP && cw == 0) named_sync(1, 256);
  const long long t1 = clock64();
  if (wtid == 0) P.cycles[blockIdx.x * NC + cw] = t1 - t0;
  if (blockIdx.x == 0) {  // O / d of this thread's rows (gq, gq + 8)
    const int r0 = cw * 64 + warp * 16 + (lane >> 2);
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const float inv = 1.f / d[2 * hr];
#pragma unroll
      for (int n = 0; n < kD / 8; ++n) {
        P.o[(r0 + 8 * hr) * kD + n * 8 + 2 * tq] = o[n][2 * hr] * inv;
        P.o[(r0 + 8 * hr) * kD + n * 8 + 2 * tq + 1] = o[n][2 * hr + 1] * inv;
      }
    }
  }
#endif
}

struct Variant {
  std::string name;
  int mode, tk, nc;
  bool ss;
  const void* fn;
  int smem;
};

template <int TK, int MODE, bool SS, int NC, bool PP = false> Variant make() {
  std::string n = std::string(kModeName[MODE]) + (SS ? "-ss-" : "-rs-") + std::to_string(TK) + "-" + std::to_string(NC) +
                  (PP ? "-pp" : "");
  return Variant{n, MODE, TK, NC, SS, reinterpret_cast<const void*>(&loop_kernel<TK, MODE, SS, NC, PP>),
                 Layout<TK>::bytes};
}

std::vector<Variant> all_variants() {
  return {
      make<64, kTensor, false, 2>(),  make<64, kMma, false, 2>(),     make<64, kExp, false, 2>(),
      make<64, kSoftmax, false, 2>(), make<64, kSoftmax, false, 1>(), make<64, kSoftmax, true, 2>(),
      make<64, kTensor, true, 2>(),   make<128, kTensor, false, 2>(), make<128, kTensor, true, 2>(),
      make<128, kMma, true, 2>(),     make<128, kSoftmax, true, 2>(), make<64, kSoftmax, false, 2, true>(),
      make<128, kSoftmax, true, 2, true>(), make<64, kRescale, false, 2>(), make<64, kSync, false, 2>(),
      make<64, kAhead, false, 2>(),   make<64, kAhead, false, 2, true>(), make<64, kAhead, true, 2>(),
      make<64, kFsum, false, 2>(),    make<64, kCopy, false, 2>(),        make<64, kTma, false, 2>(),
      make<64, kTma4, false, 2>(),    make<64, kFsumPair, false, 2>(),    make<64, kFsumPair, false, 2, true>(),
      make<64, kCopyR, false, 2>(),   make<64, kCopyR4, false, 2>(),     make<64, kCopyF, false, 2>(),
      make<64, kCopyL, false, 2>(),   make<64, kTmaK, false, 2>(),        make<64, kTmix, false, 2>(),
      make<64, kTmixF, false, 2>(),
  };  // (ahead at 128-key tiles: two S of 64 registers each spill 640 bytes)
}

float bf16_round(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }

double gemm_tflops() {  // cuBLAS bf16 GEMM 8192^3, fp32 accumulate: the same run's ceiling
  const int n = 8192;
  QT *a, *b, *c;
  CUDA_CHECK(cudaMalloc(&a, sizeof(QT) * n * n));
  CUDA_CHECK(cudaMalloc(&b, sizeof(QT) * n * n));
  CUDA_CHECK(cudaMalloc(&c, sizeof(QT) * n * n));
  CUDA_CHECK(cudaMemset(a, 0x3c, sizeof(QT) * n * n));  // bf16 0.0115: finite products
  CUDA_CHECK(cudaMemset(b, 0x3c, sizeof(QT) * n * n));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "podcheck_loop_bench: cublasCreate failed\n");
    std::exit(2);
  }
  const float alpha = 1.f, beta = 0.f;
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int rep = 0; rep < 6; ++rep) {
    CUDA_CHECK(cudaEventRecord(e0));
    const cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b,
                                           CUDA_R_16BF, n, &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                           CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "podcheck_loop_bench: cublasGemmEx: %s\n", cublasGetStatusString(st));
      std::exit(2);
    }
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep > 0) best = std::min(best, ms);
  }
  cublasDestroy(h);
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  return 2.0 * n * double(n) * n / (best * 1e-3) / 1e12;
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "podcheck_loop_bench: %s\nusage: podcheck_loop_bench [--tiles T] [--reps N] [--page P] [--tokens N] "
               "[--stagger 0|1] [--variants a,b,...]\n",
               msg);
  return 2;
}

}  // namespace

int run(int argc, char** argv) {
  int tiles = 2048, reps = 10, page = 16, tokens = kCacheTokens, stagger = 0;
  std::vector<std::string> want;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(("missing value after " + a).c_str());
    const std::string v = argv[++i];
    if (a == "--tiles") {
      tiles = std::atoi(v.c_str());
      if (tiles < 4 || tiles % 4 != 0) return usage("--tiles: a multiple of 4, at least 4");
    } else if (a == "--page") {
      page = std::atoi(v.c_str());
      if (page < 8 || page > 128 || (page & (page - 1)) != 0) return usage("--page: a power of 2 from 8 to 128");
    } else if (a == "--tokens") {
      tokens = std::atoi(v.c_str());
      if (tokens < 256 || tokens > 65536 || tokens % 256 != 0)
        return usage("--tokens: a multiple of 256 from 256 to 65536 (tokens per KV head in the paged cache)");
    } else if (a == "--stagger") {
      if (v != "0" && v != "1") return usage("--stagger: 0 or 1");
      stagger = v == "1";
    } else if (a == "--reps") {
      reps = std::atoi(v.c_str());
      if (reps < 1) return usage("--reps: at least 1");
    } else if (a == "--variants") {
      for (std::size_t p = 0; p <= v.size();) {
        const std::size_t q = std::min(v.find(',', p), v.size());
        want.push_back(v.substr(p, q - p));
        p = q + 1;
      }
    } else {
      return usage(("unknown option " + a).c_str());
    }
  }
  std::vector<Variant> vars;
  for (const Variant& x : all_variants())
    if (want.empty() || std::find(want.begin(), want.end(), x.name) != want.end()) vars.push_back(x);
  for (const std::string& w : want) {
    bool known = false;
    for (const Variant& x : all_variants()) known |= x.name == w;
    if (!known) return usage(("unknown variant " + w).c_str());
  }
  // tmak copies a tile as one box per block and side, so a tile must lie within one page: asked for by name at a
  // smaller page it is a usage error, and the run of every variant leaves it out (saying so)
  // tmix copies K a page a box from the page's first slot: pages of 8 to 64 tokens dividing the tile
  if (page < 8 || 64 % page != 0) {
    for (const char* m : {"tmix-rs-64-2", "tmixf-rs-64-2"})
      if (std::find(want.begin(), want.end(), m) != want.end())
        return usage((std::string(m) + ": needs --page 8, 16, 32 or 64 (a tile of whole pages)").c_str());
    const auto n = vars.size();
    const auto mix = [](const Variant& x) { return x.mode == kTmix || x.mode == kTmixF; };
    vars.erase(std::remove_if(vars.begin(), vars.end(), mix), vars.end());
    if (vars.size() != n) std::printf("tmix-rs-64-2, tmixf-rs-64-2 left out: they need --page 8, 16, 32 or 64\n");
  }
  if (page < 64) {
    if (std::find(want.begin(), want.end(), "tmak-rs-64-2") != want.end())
      return usage("tmak-rs-64-2: needs --page 64 or more (a tile of 64 tokens within one page)");
    const auto n = vars.size();
    vars.erase(std::remove_if(vars.begin(), vars.end(), [](const Variant& x) { return x.mode == kTmaK; }), vars.end());
    if (vars.size() != n) std::printf("tmak-rs-64-2 left out: it needs --page 64 or more\n");
  }

  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::fprintf(stderr, "podcheck_loop_bench: needs an sm_90 device (wgmma); this is %s (sm_%d%d)\n", prop.name,
                 prop.major, prop.minor);
    return 2;
  }
  const int sms = prop.multiProcessorCount;

  // inputs: Q in [-3, 3] (a peaked softmax), K and V in [-1, 1], bf16, fixed seed
  std::mt19937 rng(20261206);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<QT> hq(kMaxRows * kD), hk(kKeys * kD), hv(kKeys * kD);
  std::vector<float> fq(hq.size()), fk(hk.size()), fv(hv.size());
  for (std::size_t i = 0; i < hq.size(); ++i) fq[i] = bf16_round(3.f * u(rng)), hq[i] = __float2bfloat16_rn(fq[i]);
  for (std::size_t i = 0; i < hk.size(); ++i) fk[i] = bf16_round(u(rng)), hk[i] = __float2bfloat16_rn(fk[i]);
  for (std::size_t i = 0; i < hv.size(); ++i) fv[i] = bf16_round(u(rng)), hv[i] = __float2bfloat16_rn(fv[i]);
  const double sm_scale = 1.0 / std::sqrt(double(kD));
  std::vector<double> ref(kMaxRows * kD);  // attention over the 256 keys, double
  for (int r = 0; r < kMaxRows; ++r) {
    std::vector<double> s(kKeys);
    double mx = -1e300, den = 0;
    for (int j = 0; j < kKeys; ++j) {
      double x = 0;
      for (int c = 0; c < kD; ++c) x += double(fq[r * kD + c]) * fk[j * kD + c];
      s[j] = x * sm_scale;
      mx = std::max(mx, s[j]);
    }
    for (int j = 0; j < kKeys; ++j) den += (s[j] = std::exp(s[j] - mx));
    for (int c = 0; c < kD; ++c) {
      double acc = 0;
      for (int j = 0; j < kKeys; ++j) acc += s[j] * fv[j * kD + c];
      ref[r * kD + c] = acc / den;
    }
  }

  Params P{};
  QT *dq, *dk, *dv;
  CUDA_CHECK(cudaMalloc(&dq, sizeof(QT) * hq.size()));
  CUDA_CHECK(cudaMalloc(&dk, sizeof(QT) * hk.size()));
  CUDA_CHECK(cudaMalloc(&dv, sizeof(QT) * hv.size()));
  CUDA_CHECK(cudaMemcpy(dq, hq.data(), sizeof(QT) * hq.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dk, hk.data(), sizeof(QT) * hk.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dv, hv.data(), sizeof(QT) * hv.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMalloc(&P.o, sizeof(float) * kMaxRows * kD));
  CUDA_CHECK(cudaMalloc(&P.cycles, sizeof(long long) * sms * 2));
  P.q = dq;
  P.k = dk;
  P.v = dv;
  P.tiles = tiles;
  P.c = float(sm_scale * 1.4426950408889634);
  P.side.mask_mode = POD_MASK_NONE;
  P.side.window_left = -1;
  P.gd = FastDiv::make(1);

  // (copy, tma) the paged cache: token t of every head holds key t mod 256, its page from a shuffled table
  const int n_pages = tokens / page;  // page <= 128 divides tokens, a multiple of 256
  std::vector<std::int32_t> table(n_pages);
  for (int i = 0; i < n_pages; ++i) table[i] = i;
  std::shuffle(table.begin(), table.end(), rng);
  const std::size_t cache_elems = std::size_t(tokens) * kCacheHeads * kD;
  std::vector<QT> ck(cache_elems), cv(cache_elems);
  for (int t = 0; t < tokens; ++t)
    for (int h = 0; h < kCacheHeads; ++h)
      for (int c = 0; c < kD; ++c) {
        const std::size_t at = ((std::size_t(table[t / page]) * page + t % page) * kCacheHeads + h) * kD + c;
        ck[at] = hk[(t % kKeys) * kD + c];
        cv[at] = hv[(t % kKeys) * kD + c];
      }
  QT *dck, *dcv;
  std::int32_t* dtable;
  CUDA_CHECK(cudaMalloc(&dck, sizeof(QT) * cache_elems));
  CUDA_CHECK(cudaMalloc(&dcv, sizeof(QT) * cache_elems));
  CUDA_CHECK(cudaMalloc(&dtable, sizeof(std::int32_t) * n_pages));
  CUDA_CHECK(cudaMemcpy(dck, ck.data(), sizeof(QT) * cache_elems, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dcv, cv.data(), sizeof(QT) * cache_elems, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dtable, table.data(), sizeof(std::int32_t) * n_pages, cudaMemcpyHostToDevice));
  {
    pod_kv& kv = P.kv.s.kv;
    kv.k = dck;
    kv.v = dcv;
    kv.k_stride_page = kv.v_stride_page = std::int64_t(page) * kCacheHeads * kD;
    kv.k_stride_slot = kv.v_stride_slot = kCacheHeads * kD;
    kv.k_stride_head = kv.v_stride_head = kD;
    kv.page_size = page;
    kv.indices = dtable;
    P.kv.ps = FastDiv::make(page);
    P.kv.k_sp = P.kv.v_sp = std::uint32_t(kv.k_stride_page);
    P.kv.k_ss = P.kv.v_ss = std::uint32_t(kv.k_stride_slot);
    P.kv.kv_same = 1;
    P.page = page;
    P.tokens = tokens;
    P.stagger = stagger;
    const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
    if (!encode) {
      std::fprintf(stderr, "podcheck_loop_bench: the driver has no cuTensorMapEncodeTiled\n");
      return 2;
    }
    const cuuint64_t dims[4] = {kD, cuuint64_t(page), kCacheHeads, cuuint64_t(n_pages)};
    const cuuint64_t strides[3] = {kCacheHeads * kD * 2, kD * 2, cuuint64_t(page) * kCacheHeads * kD * 2};
    const cuuint32_t box[4] = {64, cuuint32_t(std::min(page, 64)), 1, 1}, elem[4] = {1, 1, 1, 1};
    for (auto [map, base] : {std::pair{&P.tmk, dck}, std::pair{&P.tmv, dcv}})
      if (encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, base, dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        std::fprintf(stderr, "podcheck_loop_bench: cuTensorMapEncodeTiled refused the cache's layout\n");
        return 2;
      }
  }

  const double gemm = gemm_tflops();
  std::printf("device: %s, %d SMs; tiles per consumer %d, %d timed launches per variant; (copy, tma) pages of %d, "
              "%d tokens x %d KV heads (%.1f MB of K and V), %s\n",
              prop.name, sms, tiles, reps, page, tokens, kCacheHeads, 4.0 * tokens * kCacheHeads * kD / 1e6,
              stagger ? "each head's CTAs staggered over its tiles" : "every CTA from tile 0");
  std::printf("ceiling: cuBLAS bf16 GEMM 8192^3 %.1f TFLOP/s (this run)\n", gemm);
  std::printf("%-18s %9s %9s %7s %12s %9s %8s  %s\n", "variant", "ms", "TFLOP/s", "%gemm", "cycles/tile", "%tensor",
              "MHz", "check (max |O - ref|)");
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  int failed = 0;
  for (const Variant& x : vars) {
    CUDA_CHECK(cudaFuncSetAttribute(x.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, x.smem));
    void* args[] = {&P};
    const dim3 grid(sms), block(384);  // three warpgroups, as the kernel: the same registers per consumer
    CUDA_CHECK(cudaMemset(P.o, 0xff, sizeof(float) * kMaxRows * kD));  // NaN: an unwritten element fails the check
    CUDA_CHECK(cudaMemset(P.cycles, 0xff, sizeof(long long) * sms * 2));  // -1: an unwritten count shows negative
    CUDA_CHECK(cudaLaunchKernel(x.fn, grid, block, args, x.smem, nullptr));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> got(kMaxRows * kD);
    CUDA_CHECK(cudaMemcpy(got.data(), P.o, sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
    std::vector<float> ms(reps);
    for (int rep = 0; rep < reps; ++rep) {
      CUDA_CHECK(cudaEventRecord(e0));
      CUDA_CHECK(cudaLaunchKernel(x.fn, grid, block, args, x.smem, nullptr));
      CUDA_CHECK(cudaEventRecord(e1));
      CUDA_CHECK(cudaEventSynchronize(e1));
      CUDA_CHECK(cudaEventElapsedTime(&ms[rep], e0, e1));
    }
    std::vector<long long> cyc(sms * x.nc);
    CUDA_CHECK(cudaMemcpy(cyc.data(), P.cycles, sizeof(long long) * cyc.size(), cudaMemcpyDeviceToHost));
    std::sort(ms.begin(), ms.end());
    std::sort(cyc.begin(), cyc.end());
    const double t = ms[reps / 2];
    const double flop = 4.0 * 64 * x.tk * kD * double(tiles) * x.nc * sms;
    const double tflops = flop / (t * 1e-3) / 1e12;
    const double cpt = double(cyc[cyc.size() / 2]) / tiles;
    const double ideal = x.nc * 2.0 * 64 * x.tk * kD / 2048.0;  // the tile's products at 2,048 per cycle and SM
    char check[96] = "timing only";
    if (x.mode >= kExp) {
      double err = 0;
      for (int i = 0; i < x.nc * 64 * kD; ++i)
        err = std::isfinite(got[i]) ? std::max(err, std::fabs(got[i] - ref[i])) : INFINITY;
      const bool ok = err <= 4e-3;
      failed += !ok;
      std::snprintf(check, sizeof check, "%s (%.2e)", ok ? "ok" : "FAILED", err);
    }
    std::printf("%-18s %9.4f %9.1f %6.1f%% %12.0f %8.1f%% %8.0f  %s\n", x.name.c_str(), t, tflops,
                100.0 * tflops / gemm, cpt, 100.0 * ideal / cpt, cyc[cyc.size() / 2] / (t * 1e3), check);
  }
  CUDA_CHECK(cudaFree(dq));
  CUDA_CHECK(cudaFree(dk));
  CUDA_CHECK(cudaFree(dv));
  CUDA_CHECK(cudaFree(dck));
  CUDA_CHECK(cudaFree(dcv));
  CUDA_CHECK(cudaFree(dtable));
  CUDA_CHECK(cudaFree(P.o));
  CUDA_CHECK(cudaFree(P.cycles));
  if (failed) std::printf("%d variant(s) FAILED the check\n", failed);
  return failed ? 1 : 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const podcheck::kernels::CudaError& e) {  // every CUDA call goes through CUDA_CHECK
    std::fprintf(stderr, "podcheck_loop_bench: %s\n", e.what());
    return 2;
  }
}
