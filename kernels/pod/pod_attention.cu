// podcheck-cuda: podcheck's own fused POD (prefill + paged decode in one launch) attention kernel.
//
// Versions (one line each; how to run it):
//   v1              Fused POD, persistent CTAs choosing their role SM by SM (POD-Attention scheme):
//                   each CTA reads %smid, takes a ticket from that SM's counter and starts as prefill or
//                   decode in proportion to the planned work of each side; then it pops items from its
//                   role's global queue (atomicAdd) and, once that queue is empty, from the other one.
//                   Item = 64 packed (query row, head-in-group) rows x one KV head x one KV chunk; 4 warps,
//                   16 rows each; KV tiles of 32 tokens gathered through the page table into shared memory
//                   (fp8 KV dequantised to the query dtype there). QK^T and PV on mma.sync m16n8k16
//                   (f16/bf16 in, f32 accumulate), online softmax in fp32 with exp2f, P rounded to the
//                   query dtype for PV. Split-KV chunks write fp32 partial (O, LSE) states that one small
//                   merge kernel combines by LSE (pod_merge_kernel). Writes every output element (out and
//                   LSE, base 2 or e; empty rows 0 / -inf). Not supported (reported, never computed):
//                   RoPE, ALiBi, logits soft cap, head_dim other than 64/128/256, fp8 Q, dtype_o != dtype_q.
//                   Run: `podcheck run --kernel podcheck-cuda --tier quick -o t.h5`;
//                   time: `podcheck bench kernel`.
//                   Same decode tile as prefill (64 packed rows): simple, correct, wasteful for small groups.
//   v2              Same scheduler, numerics, features and ABI; faster data movement. Decode items of 16
//                   packed rows whose KV range the 4 warps split among themselves (tiles of 16 tokens, each
//                   warp its own online-softmax state and a 3-stage (D 256: 2) cp.async ring of its own), the
//                   four states merged by LSE in shared memory (fp32). Prefill keeps 64-row items, with KV
//                   tiles of 64 tokens (D 256: 32) double-buffered by cp.async (load t+1 while computing t). K, V and Q
//                   fragments come from ldmatrix (.trans for V) on rows padded by 16 bytes (conflict-free);
//                   fp8 KV is copied raw and converted (exactly) in shared memory after the copy lands.
//   v3              v2 plus the standalone-kernel features, on both sides (ABI 2): RoPE-LLaMA (q rotated at
//                   position i + L - Q while its tile is loaded, k at position j in shared memory once its
//                   tile has landed; angles in double, reduced to [-pi, pi], __sincosf, results rounded to
//                   the query dtype as the mma operands), ALiBi (slope_h * (j - i) added to the fp32 logit)
//                   and the logits soft cap (cap * tanhf(s / cap)), in the emulator's order: s = x * sm,
//                   + bias, soft cap, * log2(e). Tiles, scheduler and numerics otherwise as v2. The feature
//                   paths are a second instantiation (template bool F), so cases without them keep v2's code.
//   v3.1            v3's tiles, scheduler and numerics with fewer instructions (the first step toward v4,
//                   docs/KERNEL.md notebook): KV copy addresses resolved once per item and a page lookup per
//                   row through a FastDiv (v3 divided per 16-byte chunk), each role's side by a compile-time
//                   index (its parameters are constant-bank operands), tiles whose real rows all see every
//                   key skip the per-element mask (rows past the request no longer force it), O rescaled
//                   only when a row maximum moved, and a register budget per head_dim that matches what
//                   shared memory allows (no spills). Outputs bit-identical to v3's by construction.
//   v3.2            v3.1's tiles and scheduler, a leaner inner loop (step 2 of the notebook): softmax weights
//                   2^(s * c - m) by one fused multiply-add on raw logits of unmasked tiles, ex2.approx.ftz,
//                   row sums of the rounded P as one mma with a B of ones per 16 tokens (fp32, on the tensor
//                   core) instead of unpacking and adding, KV row offsets from 32-bit strides (V reusing K's),
//                   divisions by the group size through a FastDiv, and each output row's destination resolved
//                   once. Same rounding points as v3.1 (P rounded to the query dtype, fp32 state); not bit-identical
//                   (the scale is folded into the exponent, the row sums are added in another order).
//   v3.3            v3.2 plus a Hopper (sm_90a) prefill: S = Q K^T and O += P V on wgmma m64nNk16 for one
//                   warpgroup (the CTA's 4 warps, the 64-row item), A from registers (Q fragments kept per item,
//                   P from the softmax), B from K / V stages in [TK][64]-element blocks with the 128-byte swizzle
//                   (kernels/pod/wgmma_sm90.cuh); softmax, masks and row sums shared with the mma.sync path, which
//                   stays for sm_80, fp8 KV, the feature paths, head_dim 256 and the decode side.
//   v3.4            3 CTAs per SM at head_dim 128 on sm_90 (2 before): decode rings of 2 stages (as fast as 3,
//                   notebook step 5), mma.sync prefill tiles of 32 tokens (their softmax steps by 32), the wgmma
//                   prefill's stage 1 overlaying its Q tile (Q lives in registers there), 168 registers; a launch
//                   with no prefill work keeps 2 CTAs per SM (the decode gains nothing from a third).
//   v3.5            a launch with prefill work only (16-bit KV, no RoPE / ALiBi / soft cap, head_dim 64
//                   / 128, sm_90a) runs pod_ws_kernel (named pod_prefill_ws_kernel until step 10): one persistent CTA per SM, a producer warpgroup copying
//                   Q, K, V (cp.async completing on mbarriers) and two consumer warpgroups of 64 rows each on wgmma,
//                   128-row items; PODCHECK_CUDA_WS=0 keeps the fused kernel. Same arithmetic as the wgmma prefill.
//                   Opt-in (notebook step 10, measured no faster yet): fused launches on the same kernel, both sides
//                   on every SM (PODCHECK_CUDA_WS=2) or SMs split by side (=3); default outputs are v3.5's.
//   v3.6            v3.5 with every cp.async asking L2 for its whole 128-byte line (PODCHECK_CP_L2): the same bytes
//                   copied, decode alone 2-5 % faster (notebook step 11). Outputs bit for bit v3.5's.
//   v3.7            notebook step 12: the decode's page lookups one per lane and tile, a tile ahead, handed to the
//                   rows by shuffles (PODCHECK_DEC_PV; page 1 decode alone 0.298 -> 0.280 ms); the split-KV merge
//                   one warp per merged row and head (v3.6's one CTA per row walked the heads: 60-80 us of latency
//                   after a split launch); decode-only launches split into the fewest chunks whose waves are full
//                   (decode_only_splits). Outputs bit for bit v3.6's wherever the plan's chunks are the same.
//   v3.8            notebook step 13: a launch with both sides and fewer items than CTAs chunks its decode for
//                   the CTAs that start in the decode role (pod_plan: decode_only_splits over them; v3.7 chunked it
//                   as the prefill): 8 decodes of 8k beside a 512-token prefill 0.143 -> 0.108 ms. Kernel code as v3.7.
//   v3.9            notebook step 14: the decode's 16-bit K / V tiles (no RoPE, ALiBi or soft cap) unpadded and
//                   xor-swizzled in shared memory (PODCHECK_DEC_XS): v3.8's 272-byte rows put each 256-byte token
//                   row's cp.async across three 128-byte segments and L2 served 1.5x the KV's sectors (24 per
//                   warp copy, 16 needed). Decode alone 2 % faster on the H100; outputs bit for bit v3.8's.
//   v3.10           notebook step 16: fp8 KV's prefill items on wgmma on sm_90a (PODCHECK_FP8_WG): the raw tile
//                   converted (exactly) straight into wgmma's swizzled layout instead of the padded tile mma.sync
//                   reads; same stages, tile size and shared memory. Mix A with e4m3 KV on the H200: prefill alone
//                   0.230 -> 0.198 ms, fused 0.458 -> 0.417. The code paths of 16-bit KV are unchanged.
//   v3.11           notebook step 17: fp8 KV's decode copies 16-byte chunks of 16 elements where pointers and
//                   strides allow (v3.10: 8-byte chunks, twice the copy instructions per byte; PODCHECK_CUDA_FP8_WIDE=0
//                   at run time), and an fp8 decode launched alone holds 3 CTAs per SM (16-bit: 2). Mix A-e4m3's
//                   decode alone on the H200 (step 18, same call): 0.289 ms at 2 CTAs, 0.263 with 8-byte copies,
//                   0.251. The same operations per tile; 16-bit KV's code paths are unchanged. (Step 17's
//                   measured-slower variant, one converted tile per warp and a third raw stage, is in git: 528420f,
//                   PODCHECK_FP8_DEC=1.)
//   v3.12            notebook step 19: the dynamic shared memory's 1024-byte alignment as an offset added to the
//                   array (smem_aligned_1024), so plain accesses through it compile to LDS / STS, not generic LD /
//                   ST (PODCHECK_SMEM_GENERIC=1: v3.11's form); fp8's conversion of each raw tile issues all of a
//                   thread's loads before its first conversion. Mix A-e4m3 on the H100, same call, two rounds:
//                   fused 0.410-0.415 -> 0.359-0.363 ms, prefill alone 0.197-0.199 -> 0.178-0.181, decode alone
//                   0.245-0.248 -> 0.234-0.235; 16-bit mix A unchanged. The same operations on the same values.
//   v3.19 (this file) notebook step 38: the warp-specialised prefill's row sums as fp32 adds of each tile's weights
//                   (PODCHECK_WS_FSUM=3) in place of an mma.sync of the rounded P beside the wgmma. One H100, four
//                   rounds against v3.18: prefill alone B 0.255-0.258 -> 0.233-0.235 ms, C 0.081-0.082 ->
//                   0.074-0.077, A unchanged (0.095-0.096); fused A 0.384-0.385 -> 0.387-0.391, B 0.421 ->
//                   0.418-0.420. The weights P V uses are unchanged; the sums are of them before their rounding.
//   v3.18            notebook step 36: at pages smaller than the prefill's 64-key tile (8 tokens or more, dividing
//                   it) a warp-specialised prefill tile that begins a page and lies whole within its item's KV
//                   range takes K by tensor copies, a page and 64 columns each, and V by the cp.async gather
//                   (PODCHECK_WS_TMA=2). One H100, two rounds against v3.17's module: prefill alone A 0.105-0.106 ->
//                   0.099 ms, B 0.294-0.296 -> 0.260-0.261; fused B 0.443-0.446 -> 0.428-0.430, A and C unchanged.
//                   The same operations on the same values.
//   v3.17            notebook step 35: a warp-specialised prefill item's final output goes through shared memory,
//                   each consumer warp's 16 rows bulk-copied to global memory by its own lanes
//                   (PODCHECK_WS_OSTAGE=1). One H100, three rounds against v3.16's module: fused A 0.388-0.389 ->
//                   0.383-0.386 ms, B 0.436-0.438 -> 0.434-0.438, C 0.383 -> 0.381-0.382; prefill alone A
//                   0.106-0.108 -> 0.102-0.105. The same operations on the same values.
//   v3.16            notebook steps 33-34: the warp-specialised prefill's producer hands each item and its context
//                   over in shared memory (PODCHECK_WS_CTX=1), and the group decode's tensor copies are L2
//                   evict-first (PODCHECK_GD_EVICT_FIRST=1). One H100, two rounds against v3.15's module: fused A
//                   0.404-0.406 -> 0.394-0.397 ms, C 0.409-0.413 -> 0.390-0.391, B 0.445 -> 0.440-0.443. The same
//                   operations on the same values.
//   v3.15            notebook step 32: in the split form the prefill CTAs are those on SMs spread evenly over
//                   the SM ids (ws_prefill_sm; PODCHECK_CUDA_WS_ROLE=0 keeps v3.14's first CTAs by index). Two H100s,
//                   alternating processes: fused B 0.478-0.490 -> 0.436-0.438 ms and 0.528-0.531 -> 0.438-0.440,
//                   A 0.432-0.433 -> 0.396 and equal, C 2-4 % slower. Outputs bit for bit v3.14's (each item's
//                   arithmetic is the same whichever SM runs it).
//   v3.14            notebook steps 24-25: the group decode takes pages of any multiple of 16 tokens, a copy stage
//                   being 16 slots of a page (v3.13: pages of 16 only); by default at pages of 16 and 64, where it
//                   was measured faster than the fused kernel (pod_plan's group_decode_default_page).
//   v3.13            notebook step 23: form 3 with the group decode (below) is the default of a fused launch whose
//                   decode it takes (page 16, 16-bit KV, KV heads a multiple of 4, g <= 8, one query row per decode
//                   request, no custom mask or window on the decode, no feature on either side); PODCHECK_CUDA_WS=1 keeps
//                   v3.12's fused kernel there. The group decode's stage meta is read by one lane and shuffled.
//   (v3.12, opt-in) notebook steps 20-21: form 3 (PODCHECK_CUDA_WS=3, SMs split by side)
//                   runs its decode by groups of 4 KV heads fed by tensor copies on the transposed tile (gd_cta) where
//                   the decode qualifies, with the SM split refitted to it (ws_split_sms_gdec). H100, same call,
//                   against the default: B 0.546 -> 0.483 ms, Sp 0.430 -> 0.384, C 0.402 -> 0.394, A 0.426 -> 0.435;
//                   the default tier 4,017 / 4,017 under it. PODCHECK_CUDA_GDEC=0: form 3's decode warpgroups.
#include "kernels/pod/pod_kernels.cuh"
#include <algorithm>

// Whether the device code that runs was compiled with the wgmma prefill: each compilation pass defines it, and the
// host reads the one the loaded image holds (its prefill KV tile, pod_run_stats::tile_kv, depends on it).
__device__ int podcheck_wgmma_built = PODCHECK_WGMMA;  // read-only in practice; not const, so it is emitted

namespace podcheck::kernels {
using namespace pod_detail;  // the device code and its parameters (pod_kernels.cuh)
namespace {

template <int D>
Kernels kernels_for_q(int dtype_q, int dtype_kv, bool feat) {
  if (dtype_q == POD_DTYPE_BF16) return kernel_set<D, __nv_bfloat16>(dtype_kv, feat);
  return kernel_set<D, __half>(dtype_kv, feat);
}

bool uses_features(const pod_side& s) {
  return s.present && (s.pos_encoding != POD_POS_NONE || s.logits_soft_cap > 0.0f);
}
// Whether a side has a query row to compute (a present side may hold only empty requests).
bool side_has_rows(const pod_side& s) {
  return s.num_requests > 0 && s.qo_indptr_host[s.num_requests] > s.qo_indptr_host[0];
}
// PODCHECK_CUDA_WS: 0 every launch keeps the fused kernel; 1 only prefill-only launches take the warp-specialised one
// (v3.5; v3.12's default); 2 fused launches too, both sides on every SM; 3 fused launches too, SMs split by side.
// Unset (the default since v3.13): prefill-only launches as 1, and fused launches whose decode the group decode takes
// as 3, since v3.14 at pages of 16 and 64 only (notebook steps 23, 25; pod_plan's launch_form). PODCHECK_CUDA_PREFILL_SMS: form 3's prefill SMs (else ws_split_sms / ws_split_sms_gdec).
constexpr const char* kWsKnob = kTuningKnobs[4];
constexpr const char* kPrefillSmsKnob = kTuningKnobs[5];

Kernels select_kernels(const pod_problem& p) {
  const bool feat = uses_features(p.prefill) || uses_features(p.decode);
  switch (p.head_dim) {
    case 64: return kernels_for_q<64>(p.dtype_q, p.dtype_kv, feat);
    case 128: return kernels_for_q<128>(p.dtype_q, p.dtype_kv, feat);
    default: return kernels_for_q<256>(p.dtype_q, p.dtype_kv, feat);
  }
}

template <class T>
T* upload(const std::vector<T>& v, std::vector<void*>& owned) {
  if (v.empty()) return nullptr;
  void* ptr = nullptr;
  CUDA_CHECK(cudaMalloc(&ptr, v.size() * sizeof(T)));
  owned.push_back(ptr);
  CUDA_CHECK(cudaMemcpy(ptr, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return static_cast<T*>(ptr);
}

// An integer experiment knob from the environment (docs/KERNEL.md): -1 when unset; a value that is not an
// integer in [lo, hi], or not a multiple of `step`, is refused with the variable's name.
int env_knob(const char* name, int lo, int hi, int step) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi || x % step != 0)
    throw std::invalid_argument(std::string(name) + "='" + v + "': expected an integer in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]" + (step > 1 ? ", a multiple of " + std::to_string(step) : ""));
  return int(x);
}
// PODCHECK_CUDA_PREFILL_CTAS is accepted up to the 32 CTAs an SM can hold at all and clamped per launch (make_plan):
// one setting applies to a whole bench run, whose launches hold 1 (the warp-specialised prefill alone), 2 (a decode
// alone) or 3 CTAs per SM (v3.8 refused 2 for the prefill alone, and so the whole run).
PlanTuning tuning_from_env() {
  PlanTuning t;
  t.prefill_ctas_per_sm = env_knob(kTuningKnobs[0], 0, 32, 1);
  t.chunk_tokens[0] = env_knob(kTuningKnobs[1], 0, 1 << 30, kTileKV);
  t.chunk_tokens[1] = env_knob(kTuningKnobs[2], 0, 1 << 30, kTileKV);
  return t;
}

// A side's 16-bit K and V as 4-D tensor maps (column, slot, head, page; boxes of 64 columns x `slots` x `heads` x 1
// page, 128-byte swizzle: the [rows][64] blocks the sm_90a kernels read), the page dimension as long as the largest
// page id in the side's table (read back once). Returns "" when both are encoded, else why not.
std::string encode_kv_maps(const pod_problem& p, const pod_side& s, int slots, int heads, CUtensorMap* mk,
                           CUtensorMap* mv) {
  const pod_kv& kv = s.kv;
  const int n_idx = kv.indptr_host[s.num_requests];
  std::vector<std::int32_t> ids(std::max(n_idx, 1), 0);
  if (n_idx > 0) CUDA_CHECK(cudaMemcpy(ids.data(), kv.indices, n_idx * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
  const std::int64_t pages = std::int64_t(*std::max_element(ids.begin(), ids.end())) + 1;
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (!encode) return "the driver has no cuTensorMapEncodeTiled";
  const auto make = [&](CUtensorMap* map, const void* base, std::int64_t sp_, std::int64_t ss, std::int64_t sh) {
    const cuuint64_t dims[4] = {cuuint64_t(p.head_dim), cuuint64_t(kv.page_size), cuuint64_t(p.num_kv_heads),
                                cuuint64_t(pages)};
    const cuuint64_t strides[3] = {cuuint64_t(ss * 2), cuuint64_t(sh * 2), cuuint64_t(sp_ * 2)};
    const cuuint32_t box[4] = {64, cuuint32_t(slots), cuuint32_t(heads), 1}, elem[4] = {1, 1, 1, 1};
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, const_cast<void*>(base), dims, strides, box, elem,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
  };
  if (!make(mk, kv.k, kv.k_stride_page, kv.k_stride_slot, kv.k_stride_head) ||
      !make(mv, kv.v, kv.v_stride_page, kv.v_stride_slot, kv.v_stride_head))
    return "cuTensorMapEncodeTiled refused the K / V layout";
  return "";
}

// The group decode of the split form (gd_cta) for a decode that pod_plan's group_decode_refusal took (the caller asks
// it, once): its groups (group_decode_groups, which the CPU tests check) and its tensor maps. Returns "" when set up
// (k.gdec on), else why not (the launch then keeps the split form's other decode).
std::string setup_group_decode(const pod_problem& p, const SidePlan& sp, KParams& k, std::vector<void*>& owned) {
  std::string why;
  const auto ids4 = group_decode_groups(sp, &why);
  if (ids4.empty()) return why.empty() ? "no decode item" : why;
  std::vector<int4> groups;
  for (const auto& g : ids4) groups.push_back(make_int4(g[0], g[1], g[2], g[3]));
  why = encode_kv_maps(p, p.decode, kGdTokens, kGdHeads, &k.gdec_k, &k.gdec_v);
  if (!why.empty()) return why;
  k.gdec_groups = upload(groups, owned);
  k.gdec_n = int(groups.size());
  k.gdec = 1;
  return "";
}

}  // namespace

struct PreparedPod::Impl {
  KParams params{};
  Kernels kern;
  PodPlan plan;
  pod_run_stats stats{};
  int grid = 0;
  int threads = kThreads;
  int ws_form = -1;  // the launch runs pod_ws_kernel in this form (kern.fused points to it), or -1
  int sms = 0, head_dim = 0;  // the device's SMs and the problem's head_dim (the split model's inputs)
  std::string gdec_why_not;  // (split form) why the group decode does not run, "" when it does or was not asked
  const MergeRow* merge_rows = nullptr;
  int n_merge = 0;
  std::size_t n_pair_flags = 0;  // (PODCHECK_CUDA_TAIL_SPLIT=2) KParams::pair_flags' ints
  std::vector<void*> owned;
  mutable unsigned launches = 0;  // (kCounterFlip) launches enqueued: launch g uses counter block g % 2
  ~Impl() {
    for (void* p : owned) cudaFree(p);  // no throw from a destructor; errors surface on the next call
  }
};

PreparedPod::PreparedPod(const pod_problem& p) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  bool invalid = false;
  const std::string why = check_support(p, &invalid);
  if (!why.empty()) throw std::invalid_argument(why);
  m.kern = select_kernels(p);
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  m.sms = sms;
  m.head_dim = p.head_dim;
  // Whether the loaded image holds the sm_90a device code (the wgmma prefill and the warp-specialised kernel).
  int wgmma_built = 0;
  CUDA_CHECK(cudaMemcpyFromSymbol(&wgmma_built, podcheck_wgmma_built, sizeof(int)));
  const bool fp8_kv = p.dtype_kv == POD_DTYPE_E4M3 || p.dtype_kv == POD_DTYPE_E5M2;
  // A launch with prefill work takes the warp-specialised kernel where it applies: prefill only (notebook step 9)
  // or both sides (step 10); PODCHECK_CUDA_WS=0 / 1 keeps the fused kernel for both / for fused launches.
  const bool decode_runs = p.decode.present && p.only_side != 1 && side_has_rows(p.decode);
  const bool prefill_runs = p.prefill.present && p.only_side != 2 && side_has_rows(p.prefill);
  const int ws_knob = env_knob(kWsKnob, 0, 3, 1);
  const bool fp8_wide = env_knob(kTuningKnobs[6], 0, 1, 1) != 0;  // unset (-1): on
  const bool gdec_knob = env_knob(kTuningKnobs[7], 0, 1, 1) != 0;  // unset (-1): on
  // the kernel and form (pod_plan's launch_form, host-tested): v3.13 sends a fused launch whose decode the group
  // decode takes to the split form (v3.14: at the page sizes where that was measured faster), any other keeps the
  // fused kernel (notebook steps 23, 25)
  LaunchFormInputs form;
  form.ws_applies = wgmma_built && m.kern.ws[kWsPrefillOnly] && !fp8_kv && !uses_features(p.prefill) &&
                    !(decode_runs && uses_features(p.decode));
  form.prefill_runs = prefill_runs;
  form.decode_runs = decode_runs;
  form.ws_knob = ws_knob;
  form.gdec_knob = gdec_knob;
  const std::string gdec_refusal = decode_runs ? group_decode_refusal(p) : std::string();
  form.gdec_takes_decode = decode_runs && gdec_refusal.empty();
  form.gdec_default_page = group_decode_default_page(p.decode.kv.page_size);
  m.ws_form = launch_form(form);
  if (m.ws_form >= 0) {
    m.kern.fused = m.kern.ws[m.ws_form];
    m.kern.smem = m.kern.ws_smem[m.ws_form];
    m.threads = kWsThreads;
  }
  CUDA_CHECK(cudaFuncSetAttribute(m.kern.fused, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)m.kern.smem));
  // v2's decode rings want the whole carveout for shared memory (a hint; occupancy is read back below).
  CUDA_CHECK(cudaFuncSetAttribute(m.kern.fused, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  (int)cudaSharedmemCarveoutMaxShared));
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, m.kern.fused, m.threads, m.kern.smem));
  if (per_sm < 1) throw CudaError(std::string(m.ws_form >= 0 ? "pod_ws_kernel" : "pod_fused_kernel") +
                                  " cannot be resident (occupancy 0)");
  // With no prefill work, at most 2 CTAs per SM for 16-bit KV: the decode's throughput per SM barely grows with
  // resident CTAs (1 -> 2: 1.17x, notebook step 5), while every slot more makes a last wave of fewer items (mix B's
  // decode alone: 512 items, 0.280 ms on 264 slots, 0.323 on 396)
  // (experiment knob: any count up to occupancy, the decode alone's 3 included; until 2026-12-05 the knob was capped
  // at that 2, so it could not try 3)
  const int occupancy = per_sm;
  // fp8 KV's decode alone: 3 where they fit (head_dim 64 / 128; notebook steps 17-18: mix A-e4m3's decode alone
  // 0.289 -> 0.251 ms on the H200), its warps being bound by their own copy-convert-attend chain rather than by bytes
  if (!p.prefill.present || p.prefill.num_requests == 0 || p.only_side == 2) per_sm = std::min(per_sm, fp8_kv ? 3 : 2);
  if (const int k = env_knob(kTuningKnobs[3], 1, occupancy, 1); k > 0) per_sm = k;
  PlanTuning tuning = tuning_from_env();
  if (m.ws_form >= 0) tuning.prefill_tile_rows = kWsRowsOf[m.ws_form];
  tuning.splits_within_one_wave = m.ws_form == kWsPrefillOnly;
  m.plan = make_plan(p, sms * per_sm, per_sm, tuning);
  m.grid = sms * per_sm;
  if (m.ws_form == kWsPrefillOnly) m.grid = std::max(1, std::min(m.grid, (int)m.plan.side[0].items.size()));  // persistent, no idle CTA

  KParams& k = m.params;
  k.num_qo_heads = p.num_qo_heads;
  k.num_kv_heads = p.num_kv_heads;
  k.group = p.num_qo_heads / p.num_kv_heads;
  k.gdiv = FastDiv::make(k.group);
  k.lse_base_e = p.lse_base_e;
  k.ctas_per_sm = per_sm;
  k.prefill_ctas_per_sm = m.plan.prefill_ctas_per_sm;
  const pod_side* sides[2] = {&p.prefill, &p.decode};
  // a side's work: its items, and the chunk counts and partial-state buffers of its split requests (again for the
  // prefill after a tail split below)
  auto upload_work = [&](int si) {
    SideDev& sd = k.side[si];
    const SidePlan& sp = m.plan.side[si];
    sd.n_items = (int)sp.items.size();
    sd.items = upload(sp.items, m.owned);
    sd.kv_len = upload(sp.kv_len, m.owned);
    std::vector<std::int32_t> nch(sides[si]->num_requests, 1);
    for (const WorkItem& w : sp.items) nch[w.request] = std::max(nch[w.request], w.nchunks);
    sd.nchunks = upload(nch, m.owned);
    sd.part_base = upload(sp.part_base, m.owned);
    if (si == 0 && !sp.pair_slot.empty()) k.pair_slot = upload(sp.pair_slot, m.owned);
    if (si == 0 && sp.n_pair_slots > 0) {  // (PODCHECK_CUDA_TAIL_SPLIT=2) the pairs' flags, zeroed by enqueue
      void* ptr = nullptr;
      m.n_pair_flags = sp.n_pair_slots * kPairFlagsPerSlot;
      CUDA_CHECK(cudaMalloc(&ptr, m.n_pair_flags * sizeof(int)));
      m.owned.push_back(ptr);
      k.pair_flags = static_cast<int*>(ptr);
    }
    if (sp.part_entries > 0) {
      void* ptr = nullptr;
      CUDA_CHECK(cudaMalloc(&ptr, sp.part_entries * sizeof(float) * (p.head_dim + 1)));
      m.owned.push_back(ptr);
      sd.part_o = static_cast<float*>(ptr);
      sd.part_lse = sd.part_o + sp.part_entries * p.head_dim;
    }
  };
  for (int si = 0; si < 2; ++si) {
    SideDev& sd = k.side[si];
    sd.s = *sides[si];
    if (m.plan.side[si].items.empty()) continue;  // (n_items stays 0: params are value-initialised)
    upload_work(si);
    const double sc = double(sides[si]->sm_scale) * sides[si]->q_scale * sides[si]->k_scale;
    sd.scale_log2 = float(sc * 1.4426950408889634);
    sd.sm = float(sc);
    sd.cap = sides[si]->logits_soft_cap;
    sd.ps = FastDiv::make(sides[si]->kv.page_size);
    const pod_kv& kv = sides[si]->kv;  // strides checked to fit in 32 bits (check_support)
    sd.k_sp = std::uint32_t(kv.k_stride_page);
    sd.k_ss = std::uint32_t(kv.k_stride_slot);
    sd.v_sp = std::uint32_t(kv.v_stride_page);
    sd.v_ss = std::uint32_t(kv.v_stride_slot);
    sd.kv_same = kv.k_stride_page == kv.v_stride_page && kv.k_stride_slot == kv.v_stride_slot;
    {
      const auto a16 = [](std::int64_t x) { return x % 16 == 0; };
      sd.kv_wide = fp8_kv && fp8_wide && reinterpret_cast<std::uintptr_t>(kv.k) % 16 == 0 &&
                   reinterpret_cast<std::uintptr_t>(kv.v) % 16 == 0 && a16(kv.k_stride_page) && a16(kv.k_stride_slot) &&
                   a16(kv.k_stride_head) && a16(kv.v_stride_page) && a16(kv.v_stride_slot) && a16(kv.v_stride_head);
    }
    sd.alibi = sides[si]->pos_encoding == POD_POS_ALIBI;
    sd.rope = sides[si]->pos_encoding == POD_POS_ROPE_LLAMA;
    if (sd.rope) {
      sd.rope_log2_theta = std::log2(sides[si]->rope_theta);
      sd.rope_rcp_scale = 1.0 / sides[si]->rope_scale;
    }
  }
  {  // (kCounterFlip) two blocks, both zeroed here: enqueue alternates them
    void* ptr = nullptr;
    const std::size_t n = (kCounterFlip ? 2 : 1) * (2 + kMaxSms) * sizeof(int);
    CUDA_CHECK(cudaMalloc(&ptr, n));
    m.owned.push_back(ptr);
    if (kCounterFlip) CUDA_CHECK(cudaMemset(ptr, 0, n));
    k.counters = static_cast<int*>(ptr);
  }
  // (split SMs) the group decode where the decode qualifies (PODCHECK_CUDA_GDEC=0: the split form's other decode);
  // then the prefill's SMs: PODCHECK_CUDA_PREFILL_SMS, else the split rule of the decode that runs
  if (m.ws_form == kWsSplitSms) {
    if (decode_runs)
      m.gdec_why_not = !gdec_knob               ? std::string(kTuningKnobs[7]) + "=0"
                       : !gdec_refusal.empty() ? gdec_refusal
                                               : setup_group_decode(p, m.plan.side[1], k, m.owned);
    const int knob = env_knob(kPrefillSmsKnob, 1, std::max(1, sms - 1), 1);
    k.ws_prefill_ctas = knob > 0  ? knob
                        : k.gdec ? ws_split_sms_gdec(m.plan, sms, p.head_dim, k.gdec_n, kGdPipes)
                                 : ws_split_sms(m.plan, sms, p.head_dim);
    k.ws_role_by_sm = env_knob(kTuningKnobs[8], 0, 1, 1) != 0;  // unset: 1 (v3.15)
    // (PODCHECK_CUDA_TAIL_SPLIT=1 or 2, opt-in) the prefill's partial last wave cut in KV pieces for those CTAs, merged
    // after the launch (1) or in it (2)
    const int tail = env_knob(kTuningKnobs[9], 0, 2, 1);
    if (tail == 2 && !kWsPairMerge)
      throw std::invalid_argument(std::string(kTuningKnobs[9]) +
                                  "=2: this build merges no pieces in the launch (needs PODCHECK_WS_PAIR_MERGE=1)");
    if (tail > 0 && prefill_runs &&
        split_prefill_tail(p, k.ws_prefill_ctas, kWsRowsOf[m.ws_form], m.plan, tail == 2) > 0)
      upload_work(0);
  }
#if PODCHECK_WS_TMA
  // (PODCHECK_WS_TMA builds) the prefill's tensor maps, where its tiles can lie whole within pages
  {
    const int tk = m.ws_form == kWsPrefillOnly ? PODCHECK_WS_TK_PREFILL : PODCHECK_WS_TK, ps = p.prefill.kv.page_size;
    const int box = ps % tk == 0 ? tk : (kWsTmaMix && ps >= 8 && tk % ps == 0) ? ps : 0;  // slots a box
    if (m.ws_form >= 0 && prefill_runs && box > 0)
      k.pre_tma = encode_kv_maps(p, p.prefill, box, 1, &k.pre_k, &k.pre_v).empty() ? box : 0;
  }
#endif
  m.merge_rows = upload(m.plan.merge_rows, m.owned);
  m.n_merge = (int)m.plan.merge_rows.size();

  pod_run_stats& st = m.stats;
  st.grid_ctas = m.grid;
  st.threads_per_cta = m.threads;
  st.smem_bytes = (int)m.kern.smem;
  st.tile_q_prefill = m.ws_form >= 0 ? kWsRowsOf[m.ws_form] : kTileQ;
  st.tile_q_decode = kTileQDecode;
  // the prefill's KV tile (decode warps use kTileKVDecode): kPreKVWg on the wgmma path with 16-bit KV (where the
  // loaded image has it and the case takes it: no feature, head_dim 64 / 128), else kPreKV (the mma.sync path's, and
  // fp8 KV's on either path)
  const bool wg_path = wgmma_built && !fp8_kv && !uses_features(p.prefill) && !uses_features(p.decode) &&
                       p.head_dim <= 128;
  st.tile_kv = m.ws_form == kWsPrefillOnly ? PODCHECK_WS_TK_PREFILL
               : m.ws_form >= 0  ? PODCHECK_WS_TK
               : wg_path           ? kPreKVWg<128>
               : p.head_dim == 64  ? kPreKV<64>
               : p.head_dim == 128 ? kPreKV<128>
                                   : kPreKV<256>;
  st.items_prefill = (int)m.plan.side[0].items.size();
  st.items_decode = (int)m.plan.side[1].items.size();
  st.max_splits_prefill = m.plan.side[0].max_splits;
  st.max_splits_decode = m.plan.side[1].max_splits;
  st.kv_chunk_prefill = m.plan.side[0].chunk_tokens;
  st.kv_chunk_decode = m.plan.side[1].chunk_tokens;
  st.merge_launched = m.n_merge > 0;
}

PreparedPod::~PreparedPod() = default;

namespace {
// Counter reset (kCounterFlip: the launch's counter block and the next one's instead), the fused kernel with
// parameters k, the merge when a request was split.
void enqueue(const PreparedPod::Impl& m, const KParams& k0, cudaStream_t stream) {
  KParams k = k0;
  if constexpr (kCounterFlip) {  // k0.counters: block 0 of two, each 2 + kMaxSms ints
    k.counters = k0.counters + (m.launches & 1u) * (2 + kMaxSms);
    k.counters_next = k0.counters + ((m.launches + 1) & 1u) * (2 + kMaxSms);
  } else {
    CUDA_CHECK(cudaMemsetAsync(k.counters, 0, (2 + kMaxSms) * sizeof(int), stream));
  }
  if (m.n_pair_flags > 0) CUDA_CHECK(cudaMemsetAsync(k.pair_flags, 0, m.n_pair_flags * sizeof(int), stream));
  void* args[] = {&k};
  CUDA_CHECK(cudaLaunchKernel(m.kern.fused, dim3(m.grid), dim3(m.threads), args, m.kern.smem, stream));
  CUDA_CHECK(cudaGetLastError());
  ++m.launches;  // the launch is in the stream: the next one zeroes nothing it still reads
  if (m.n_merge > 0) {
    void* margs[] = {const_cast<KParams*>(&k), const_cast<const MergeRow**>(&m.merge_rows)};
    const dim3 grid(m.n_merge, (k.num_qo_heads + kWarps - 1) / kWarps);
    CUDA_CHECK(cudaLaunchKernel(m.kern.merge, grid, dim3(kThreads), margs, 0, stream));
    CUDA_CHECK(cudaGetLastError());
  }
}
}  // namespace

void PreparedPod::launch(void* stream_ptr) const { enqueue(*impl_, impl_->params, static_cast<cudaStream_t>(stream_ptr)); }

std::vector<ItemSpan> PreparedPod::launch_timeline(void* stream_ptr) const {
  const Impl& m = *impl_;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int cap = m.stats.items_prefill + m.stats.items_decode + m.grid;  // every item once, every CTA once
  const std::size_t n_phases = std::size_t(m.stats.items_prefill) * 8;  // pod_ws_kernel's stamps per prefill item
  void* raw = nullptr;
  CUDA_CHECK(cudaMalloc(&raw, n_phases * 8 + std::size_t(cap) * sizeof(ItemSpan) + sizeof(int)));
  struct Free {
    void* p;
    ~Free() { cudaFree(p); }
  } guard{raw};
  KParams k = m.params;
  k.timeline_phases = static_cast<std::uint64_t*>(raw);
  k.timeline = reinterpret_cast<ItemSpan*>(static_cast<char*>(raw) + n_phases * 8);
  k.timeline_count = reinterpret_cast<int*>(k.timeline + cap);
  k.timeline_cap = cap;
  CUDA_CHECK(cudaMemsetAsync(k.timeline_phases, 0, n_phases * 8, stream));  // 0: not stamped
  CUDA_CHECK(cudaMemsetAsync(k.timeline_count, 0, sizeof(int), stream));
  enqueue(m, k, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  int n = 0;
  CUDA_CHECK(cudaMemcpy(&n, k.timeline_count, sizeof(int), cudaMemcpyDeviceToHost));
  if (n != cap)
    throw CudaError("timeline launch: " + std::to_string(n) + " spans recorded, " + std::to_string(cap) +
                    " expected (one per item and per CTA)");
  std::vector<ItemSpan> spans(static_cast<std::size_t>(n));
  CUDA_CHECK(cudaMemcpy(spans.data(), k.timeline, std::size_t(n) * sizeof(ItemSpan), cudaMemcpyDeviceToHost));
  // each prefill item's phases (pod_ws_kernel's stamps) as ns from its span's start
  std::vector<std::uint64_t> stamps(n_phases);
  if (n_phases)
    CUDA_CHECK(cudaMemcpy(stamps.data(), k.timeline_phases, n_phases * 8, cudaMemcpyDeviceToHost));
  for (ItemSpan& s : spans) {
    if (s.item < 0 || (s.side_role & 1) != 0 || std::size_t(s.item) * 8 >= n_phases) continue;
    for (int p = 0; p < ItemSpan::kPhases; ++p)
      if (const std::uint64_t t = stamps[std::size_t(s.item) * 8 + p]; t != 0)
        s.ph[p] = std::int32_t(std::clamp<std::int64_t>(std::int64_t(t - s.t0), INT32_MIN + 1, INT32_MAX));
  }
  return spans;
}

const pod_run_stats& PreparedPod::stats() const { return impl_->stats; }
const PodPlan& PreparedPod::plan() const { return impl_->plan; }
int PreparedPod::split_prefill_sms() const {
  return impl_->ws_form == kWsSplitSms ? impl_->params.ws_prefill_ctas : 0;
}
SplitEnds PreparedPod::split_model() const {
  const Impl& m = *impl_;
  if (m.ws_form != kWsSplitSms) return {};
  return ws_split_ends(m.plan, m.sms, m.head_dim, m.params.ws_prefill_ctas, m.params.gdec ? m.params.gdec_n : 0,
                       kGdPipes);
}
std::string PreparedPod::split_decode() const {
  if (impl_->ws_form != kWsSplitSms) return "";
  if (impl_->params.gdec) return "group";
  return "warpgroups" + (impl_->gdec_why_not.empty() ? "" : " (" + impl_->gdec_why_not + ")");
}

std::string device_description() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs)";
}

std::string build_version() {
  return std::string(kKernelName) + " " + kKernelVersion + " (git " + git_describe() + ")";
}

std::string driver_version() {
  if (FILE* f = std::fopen("/proc/driver/nvidia/version", "r")) {
    char line[512] = {0};
    const bool ok = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    // "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  580.159.04  ...": first d+.d+ token
    if (ok) {
      const char* p = line;
      while (*p) {
        while (*p == ' ' || *p == '\t') ++p;
        const char* b = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') ++p;
        const std::string tok(b, p);
        if (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0])) && tok.find('.') != std::string::npos)
          return tok;
        if (*p == '\n') break;
      }
    }
  }
  int v = 0;
  CUDA_CHECK(cudaDriverGetVersion(&v));
  return "CUDA driver API " + std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace podcheck::kernels

// ---- C ABI entry points -----------------------------------------------------------------------------------
namespace {
thread_local std::string g_last_error;
}

extern "C" const pod_kernel_info* podcheck_kernel_info(void) {
  static const pod_kernel_info info{POD_ABI_VERSION, podcheck::kernels::kKernelName, podcheck::kernels::kKernelVersion,
                                    "fused POD v3.19: SM-aware CTA roles, 3 CTAs per SM at head_dim 128, sm_90a wgmma prefill (16-bit and fp8 KV), fp8 decode in 16-byte copies, shared memory addressed as such (LDS / STS), warp-specialised prefill-only launches and fused ones whose decode qualifies (SMs split by side, outputs bulk-copied from shared memory, K by tensor copies a page each, the prefill's row sums in fp32, the decode by KV-head groups on tensor copies; PODCHECK_CUDA_WS=1: the fused kernel), decode split over warps (page lookups a tile ahead, xor-swizzled tiles), cp.async pipelines (128-byte L2 prefetch), ldmatrix + mma.sync m16n8k16, split-KV + LSE merge, RoPE / ALiBi / soft cap"};
  return &info;
}

extern "C" const char* podcheck_kernel_last_error(void) { return g_last_error.c_str(); }

extern "C" pod_status podcheck_kernel_supports(const pod_problem* problem) {
  g_last_error.clear();
  if (!problem) { g_last_error = "null problem"; return POD_INVALID; }
  bool invalid = false;
  g_last_error = podcheck::kernels::check_support(*problem, &invalid);
  if (g_last_error.empty()) return POD_OK;
  return invalid ? POD_INVALID : POD_NOT_SUPPORTED;
}

extern "C" pod_status podcheck_kernel_run(const pod_problem* problem, void* stream) {
  const pod_status st = podcheck_kernel_supports(problem);
  if (st != POD_OK) return st;
  try {
    podcheck::kernels::PreparedPod prepared(*problem);
    prepared.launch(stream);
    CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));  // workspace freed on return
    if (problem->stats) *problem->stats = prepared.stats();
  } catch (const std::exception& e) {
    g_last_error = e.what();
    return POD_CUDA_ERROR;
  }
  return POD_OK;
}
