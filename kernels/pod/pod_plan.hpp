// Host-side planning of one POD launch: work items (query tile x KV head x KV chunk) for each side, the
// split-KV chunk size, partial-state offsets for the LSE merge, and the role split used by the CTA
// scheduler. Pure C++ (no CUDA), so the CPU tests check it without a GPU.
#pragma once

#include "kernels/include/podcheck_kernel_abi.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace podcheck::kernels {

inline constexpr int kTileQ = 64;   // prefill: packed (query row, head-in-group) rows per CTA tile: 4 warps x 16
inline constexpr int kTileKV = 32;  // prefill: KV tokens per shared-memory tile (also the split-chunk granule)
inline constexpr int kTileQDecode = 16;   // decode: packed rows per item (one mma row block, shared by 4 warps)
inline constexpr int kTileKVDecode = 16;  // decode: KV tokens per warp tile (each warp streams its own tiles)
inline constexpr int kWarps = 4;
inline constexpr int kThreads = kWarps * 32;

// Packed query rows per work item of a side (0 prefill, 1 decode).
constexpr int tile_rows(int side) { return side == 0 ? kTileQ : kTileQDecode; }

// One unit of work; shared verbatim with the device code (plain, 32 bytes).
struct WorkItem {
  std::int32_t request;
  std::int32_t kv_head;
  std::int32_t row_begin;  // first packed row (i * g + head_in_group) of the tile, within the request
  std::int32_t kv_begin;   // KV token range of this chunk [kv_begin, kv_end)
  std::int32_t kv_end;
  std::int32_t chunk;      // chunk index within the request
  std::int32_t nchunks;    // 1: write the final output directly; > 1: write a partial state
  std::int32_t cost;       // planner's estimate (KV tokens visited), for ordering
};

// A (request, local query row) whose partial states must be merged.
struct MergeRow {
  std::int32_t side;  // 0 prefill, 1 decode
  std::int32_t request;
  std::int32_t row;   // local query row within the request
  std::int32_t pad;
};

struct SidePlan {
  std::vector<WorkItem> items;          // heaviest first
  std::vector<std::int64_t> part_base;  // per request: first partial entry (entries are (chunk, row, head))
  std::vector<std::int32_t> kv_len;     // per request
  std::int64_t part_entries = 0;        // partial (row, head) states in total
  int chunk_tokens = 0;                 // 0: no split
  int max_splits = 1;
  double cost = 0;                      // sum of item costs
  // (split_prefill_tail with the merge in the launch) per item: -1, or the pair slot of a cut item's two pieces
  // (both pieces of one (request, row_begin, kv_head) share it); n_pair_slots slots in all
  std::vector<std::int32_t> pair_slot;
  int n_pair_slots = 0;
};

// One CTA's record of one work item in a timeline launch (PreparedPod::launch_timeline; item -1: the CTA's whole
// life, entry to exit). Times from %globaltimer (ns). Shared verbatim with the device code (plain, 72 bytes; the
// device writes every field, ph as kNoPhase, and the host fills ph in).
struct ItemSpan {
  std::uint64_t t0, t1;
  std::int32_t cta;   // blockIdx.x
  std::int32_t sm;    // %smid
  std::int32_t item;  // index in its side's queue; -1: the CTA's life
  // bit 0: the item's side (0 prefill, 1 decode); bit 1: the CTA's (or warpgroup's) role; bits 2 and up: the
  // warpgroups that ran the item, or (the life span) that run items in the CTA, 0 read as 1 (pod_ws_kernel: 1-3)
  std::int32_t side_role;
  std::uint64_t c1 = 0;  // the SM's clock (clock64) at the span's end; 0: not recorded
  // (pod_ws_kernel's prefill items; filled on the host from the launch's phase stamps) when, in ns from t0, the item's
  // first consumer warp had its item and mask ready, had its Q, had finished its tiles (the last P V included; the
  // epilogue follows until t1), and its producer took the item's index, had issued its Q, its first tile, its last tile
  // (the producer runs ahead: negative is early); kNoPhase where not recorded
  static constexpr std::int32_t kNoPhase = INT32_MIN;
  static constexpr int kPhases = 7;
  std::int32_t ph[kPhases] = {kNoPhase, kNoPhase, kNoPhase, kNoPhase, kNoPhase, kNoPhase, kNoPhase};
};
static_assert(sizeof(ItemSpan) == 72, "the layout the device code writes and the host reads");
// The phases' names, in ItemSpan::ph's order (the spans CSV's columns, kernels/tools/spans_fit.py)
inline constexpr const char* kPhaseNames[ItemSpan::kPhases] = {"c_ready", "c_q", "c_tiles", "p_item",
                                                               "p_q", "p_tile0", "p_last"};

// Overrides of the planner's choices, for experiments (PreparedPod reads them from the environment:
// PODCHECK_CUDA_PREFILL_CTAS, PODCHECK_CUDA_DECODE_CHUNK, PODCHECK_CUDA_PREFILL_CHUNK; docs/KERNEL.md).
// The environment variables of those overrides, in PlanTuning's order, then the launch's own one
// (PODCHECK_CUDA_CTAS_PER_SM: resident CTAs per SM, at most what occupancy allows): read by PreparedPod, printed
// by the bench.
// PODCHECK_CUDA_WS (0-3): which launches take the warp-specialised kernel, and in which form (docs/KERNEL.md; unset:
// prefill-only launches, and fused ones whose decode the group decode takes at a default page size, in the split
// form: launch_form below);
// PODCHECK_CUDA_PREFILL_SMS: of a fused warp-specialised launch with SMs split by side, the prefill's SMs.
// PODCHECK_CUDA_FP8_WIDE (0 / 1, default 1): the fp8 decode's 16-byte copies where the KV allows them (v3.11); 0: the
// 8-byte copies every fp8 layout can take (v3.10's), for same-call comparisons and to test that path.
// PODCHECK_CUDA_GDEC (0 / 1, default 1): in the split form, the decode by groups of KV heads fed by tensor copies
// where the decode qualifies (notebook step 21); 0: the split form's decode warpgroups, for same-call comparisons
// (and, with PODCHECK_CUDA_WS unset, the fused kernel for every fused launch).
// PODCHECK_CUDA_WS_ROLE (0 / 1, default 1 since v3.15): in the split form, which CTAs take the prefill role: 1 those on
// the SMs ws_prefill_sm picks, spread evenly over the SM ids; 0 the first ones by block index (v3.14). Notebook steps
// 31-32, two H100s: mix B 0.436-0.440 ms against 0.478-0.531, A 0.396 against 0.432 on one and equal on the other,
// C 2-4 % slower.
// PODCHECK_CUDA_TAIL_SPLIT (0 / 1 / 2, default 0): in the split form, the prefill's partial last wave cut in KV pieces
// (split_prefill_tail below): 1 merged by the merge kernel after the launch (notebook step 34: B 0.447-0.448 ms against
// 0.440-0.442, the merge launch costing more than the cut gains), 2 merged inside the launch by whichever piece ends
// second (step 35: B 0.460 ms against 0.448 uncut, slower still).
inline constexpr const char* kTuningKnobs[10] = {"PODCHECK_CUDA_PREFILL_CTAS", "PODCHECK_CUDA_PREFILL_CHUNK",
                                                 "PODCHECK_CUDA_DECODE_CHUNK", "PODCHECK_CUDA_CTAS_PER_SM",
                                                 "PODCHECK_CUDA_WS",           "PODCHECK_CUDA_PREFILL_SMS",
                                                 "PODCHECK_CUDA_FP8_WIDE",     "PODCHECK_CUDA_GDEC",
                                                 "PODCHECK_CUDA_WS_ROLE",      "PODCHECK_CUDA_TAIL_SPLIT"};
struct PlanTuning {
  int prefill_ctas_per_sm = -1;  // -1: proportional to each side's work; else 0 .. ctas_per_sm
  int chunk_tokens[2] = {-1, -1};  // per side: -1 the planner's choice (or kv_chunk_tokens); 0 no split; > 0 tokens
  int prefill_tile_rows = 0;       // packed rows per prefill item; 0: kTileQ (the warp-specialised prefill: 128)
  // false: a launch with fewer items than target CTAs splits until every CTA has one (ceil(target / items) splits);
  // true (the warp-specialised prefill, one CTA per SM): only as far as the split items still fit in one wave
  // (floor): C's prefill alone, 128 items on 132 SMs, 0.138 ms split in 2 and merged, 0.091 ms unsplit (step 9)
  bool splits_within_one_wave = false;
};

struct PodPlan {
  SidePlan side[2];  // 0 prefill, 1 decode
  std::vector<MergeRow> merge_rows;
  int prefill_ctas_per_sm = 0;  // of ctas_per_sm CTAs on one SM, how many start in the prefill role
};

// KV length of request r from the host page table (SPEC §1.3 kernel formula).
std::int32_t kv_len_of(const pod_kv& kv, int r);

// Checks what the kernel computes; returns "" when supported, else the reason (not-supported or invalid).
// `invalid` is set when the problem is inconsistent rather than merely unsupported.
std::string check_support(const pod_problem& p, bool* invalid);

// The fused warp-specialised launch with SMs split by side (one CTA per SM): how many of `sms` run the prefill, the
// rest the decodes (prefill CTAs join the decodes once the prefill queue is empty). The plan's side costs are turned
// into SM time with rates fitted to the H200's (notebook step 10; head_dim 128, scaled by head_dim / 128): a prefill
// SM takes kPrefillTokenSmUs per KV token of a 128-row item plus kPrefillItemSmUs per item; a decode SM
// kDecodeUnitSmUs per cost unit (a KV token of one KV head, three decode warpgroups per SM); all decode SMs together
// no less than kDecodeUnitMachineUs per unit (the bandwidth of the whole GPU). The count minimises the later of the
// two sides' ends, at least 1 each; of counts that tie (the bandwidth floor binds), the middle one.
inline constexpr double kPrefillTokenSmUs = 0.019, kPrefillItemSmUs = 8.6;
inline constexpr double kDecodeUnitSmUs = 0.01237, kDecodeUnitMachineUs = 0.283 * 1000 / (1024.0 * 2080);
int ws_split_sms(const PodPlan& plan, int sms, int head_dim);
// The same choice when the decode SMs run the group decode (`pipes_per_sm` pipelines per SM, each taking one of
// `groups` groups of KV heads at a time; notebook step 21). Waves count on both sides: a prefill SM takes
// ceil(items / p) items of the average item's time (no less than its share of the work), a decode SM's pipelines
// ceil(groups / (pipes_per_sm d)) groups of the average group's units at kGdPipeUnitUs each (a pipeline's rate
// with two per SM beside a prefill, measured on the H100: 0.0168-0.0171 us per unit on mixes A, B and C), and the
// decode no faster than the bandwidth floor. Of counts that tie, the middle one.
inline constexpr double kGdPipeUnitUs = 0.017;
int ws_split_sms_gdec(const PodPlan& plan, int sms, int head_dim, int groups, int pipes_per_sm);
// Where that model puts each side's end (us) with p of the sms SMs on the prefill: the two times whose later one
// ws_split_sms (groups 0: the decode warpgroups) or ws_split_sms_gdec (groups > 0) minimises over p. `bench kernel`
// prints them for a split-form launch, beside the timeline's measured ends.
struct SplitEnds {
  double prefill_us = 0, decode_us = 0;
};
SplitEnds ws_split_ends(const PodPlan& plan, int sms, int head_dim, int p, int groups = 0, int pipes_per_sm = 0);

// The split form's partial last wave of prefill items (notebook step 33; opt-in, PODCHECK_CUDA_TAIL_SPLIT=1). With
// `ctas` prefill CTAs taking the plan's unsplit items in order, n % ctas items make a last wave that leaves the other
// CTAs idle. Every item of the q-tiles (request, row_begin) among those last items, on every KV head, is cut in two
// KV pieces (chunks 0 and 1 of 2, merged like a split-KV request's rows, which the merge rows of those q-tiles'
// query rows ask for): the first piece a fraction f of the item's visible keys, the cut on 64 tokens, f chosen from
// 0.55 .. 0.95 by the greedy model (tail_model_end) and taken only if the model's end falls by 1 % or more. Needs
// tiles of whole query rows (rows % g == 0: a row's heads then lie in items of one q-tile) and an unsplit side.
// merge_in_launch (PODCHECK_CUDA_TAIL_SPLIT=2): no merge rows; instead each cut item's two pieces share a pair slot
// (SidePlan::pair_slot), and in the launch the piece that ends first writes its partial state and the other merges
// it with its own and writes the output (pod_ws_kernel). Returns how many q-tiles were cut (0: the plan is unchanged).
int split_prefill_tail(const pod_problem& p, int ctas, int rows, PodPlan& plan, bool merge_in_launch = false);
// (merge_in_launch) KParams::pair_flags' ints per pair slot: two for each of the split form's 8 consumer warps
inline constexpr int kPairFlagsPerSlot = 2 * 8;
// 1: builds whose split-form kernel merges a cut item's pieces in the launch (pod_ws_kernel's paired epilogue), which
// PODCHECK_CUDA_TAIL_SPLIT=2 needs (PreparedPod refuses it otherwise). A build switch, off by default: the paired
// epilogue's code raises the split form's spills from 56 / 64 to 60 / 88 bytes (sm_90a, ptxas), a cost every launch
// would pay untimed. Notebook steps 34-35: with PODCHECK_CUDA_TAIL_SPLIT=2, B 2.7 % slower than uncut.
#ifndef PODCHECK_WS_PAIR_MERGE
#define PODCHECK_WS_PAIR_MERGE 0
#endif
inline constexpr bool kWsPairMerge = PODCHECK_WS_PAIR_MERGE != 0;
// The greedy model split_prefill_tail judges by: items in their order, each to the CTA free first, an item costing
// its planned KV tokens plus kTailItemTokens; the last CTA's end, in tokens.
inline constexpr double kTailItemTokens = 160;  // + the plan's 32: ~3 us an item beside the decode (step 33's phases)
double tail_model_end(const std::vector<WorkItem>& items, int ctas);

// The split form's decode by groups of KV heads on tensor copies (pod_kernels.cuh, gd_cta; notebook step 21): a group
// is kGroupDecodeHeads KV heads of one request and chunk, a copy stage kGroupDecodeTokens tokens of them (one page of
// 16, or 16 consecutive slots of a larger page).
inline constexpr int kGroupDecodeHeads = 4, kGroupDecodeTokens = 16;
// Whether it can take a problem's decode, from the problem alone: every request at most one query row (a group's
// g <= 8 packed rows are then one query's heads, with no causal or window bound inside an item), pages of a multiple
// of 16 tokens,
// g <= 8, KV heads in fours, 16-bit KV, no custom mask or window, K / V base and strides in 16-byte multiples (the
// tensor maps'), query rows 4-byte aligned. "" when it can, else why not (one phrase, printed by `bench kernel`).
std::string group_decode_refusal(const pod_problem& p);
// Which kernel a launch runs (PreparedPod; notebook steps 9, 10, 21, 23): the fused kernel (kFormFused) or a form of
// the warp-specialised one: prefill only, both sides on every SM, SMs split by side (pod_kernels.cuh's kWs* equal
// these). ws_applies: the warp-specialised kernel can run this launch at all (its sm_90a image is loaded, 16-bit KV,
// head_dim 64 / 128, no feature on a side that runs). ws_knob: PODCHECK_CUDA_WS, -1 unset; gdec_knob: false for
// PODCHECK_CUDA_GDEC=0; gdec_takes_decode: group_decode_refusal found nothing; gdec_default_page: the decode's page
// size is one group_decode_default_page names. With the knob unset (v3.13) a prefill-only launch takes the
// prefill-only form and a fused one the split form where the group decode takes its decode at such a page size, the
// fused kernel otherwise; 0 keeps the fused kernel for all, 1 for fused launches, 2 / 3 send fused launches to the
// forms of both sides on every SM / SMs split by side (3: the group decode at any page size it takes).
inline constexpr int kFormFused = -1, kFormWsPrefillOnly = 0, kFormWsCoResident = 1, kFormWsSplitSms = 2;
struct LaunchFormInputs {
  bool ws_applies = false, prefill_runs = false, decode_runs = false;
  int ws_knob = -1;
  bool gdec_knob = true, gdec_takes_decode = false, gdec_default_page = false;
};
int launch_form(const LaunchFormInputs& in);
// The page sizes at which the group decode is the default (v3.14, notebook step 25): those at which it was measured
// faster than the fused kernel in the same call, 16 (mixes A, B, C) and 64 (A). At 32 it was slower (A: 0.454 ms
// against 0.433), and other multiples of 16 were not timed: PODCHECK_CUDA_WS=3 takes them.
bool group_decode_default_page(int page_size);
// Its groups over a decode plan: the items of KV heads 4 j .. 4 j + 3 of one request and chunk (indices into
// decode.items, the head-4j item's order), each with the same KV range. Empty, with *why_not set, when the items do
// not all come in such groups.
std::vector<std::array<int, kGroupDecodeHeads>> group_decode_groups(const SidePlan& decode, std::string* why_not);

// (split SMs, PODCHECK_CUDA_WS_ROLE=1) whether the CTA on SM `sm` of 0 .. sms - 1 takes the prefill role: `prefill`
// of the sms SMs, spread evenly over the SM ids instead of the first `prefill` CTAs by index. The block scheduler puts
// CTA pairs on the two SMs of a TPC, going round the GPCs (contiguous id ranges), so where the first CTAs land, and
// with them how many decode SMs share each GPC's path to L2, can change from process to process (notebook step 27).
constexpr bool ws_prefill_sm(int sm, int sms, int prefill) {
  return (long long)(sm + 1) * prefill / sms > (long long)sm * prefill / sms;
}

// Splits of a decode-only launch whose `items` unsplit items are fewer than the `target` resident CTAs (v3.7): a
// decode item streams its KV at its CTA's latency-bound rate, so a part-filled last wave costs nearly a whole one.
// Of s = 1 .. 2 ceil(target / items), the s that minimises ceil(items s / target) / s (waves of items 1 / s as
// long), the fewest splits of those that tie. Measured on the H200 (decode alone, ms, notebook step 12): 16 decodes
// of 2k (128 items on 264 CTAs) 2 splits 0.055, 3 (v3.6's ceil(target / items)) 0.061, none 0.070; 8 of 8k (64
// items) 4 splits 0.089, 5 (v3.6) 0.106, 8 0.094; 24 of 4k (192 items) 4 splits 0.126, 2 (v3.6) 0.132.
int decode_only_splits(long long items, int target);

// Of the ctas_per_sm CTAs on one SM, how many start in the prefill role: a share proportional to the prefill's cost
// (1 .. ctas_per_sm - 1 when both sides have work and ctas_per_sm >= 2).
int role_split(double prefill_cost, double decode_cost, int ctas_per_sm);

// Builds the plan. target_ctas: CTAs resident at once (SMs x CTAs per SM); ctas_per_sm for the role split.
// Split-KV when the unsplit items of the launch are fewer than target_ctas (and the problem sets no kv_chunk_tokens):
// a decode-only launch by decode_only_splits over target_ctas; a launch with both sides splits its prefill into
// ceil(target_ctas / items) chunks and (v3.8) its decode by decode_only_splits of the decode's own items over the
// CTAs that start in the decode role (role_split of the unsplit costs): v3.7 split both sides alike, so 8 decodes of
// 8k beside a 512-token prefill ran 2 chunks of 4,096 tokens whose items outlasted the prefill (notebook step 13).
PodPlan make_plan(const pod_problem& p, int target_ctas, int ctas_per_sm, const PlanTuning& tuning = {});

}  // namespace podcheck::kernels
