// Host-side planning of one POD launch (see pod_plan.hpp).
#include "kernels/pod/pod_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <queue>
#include <tuple>

namespace podcheck::kernels {

std::int32_t kv_len_of(const pod_kv& kv, int r) {
  const std::int32_t n = kv.indptr_host[r + 1] - kv.indptr_host[r];
  return n == 0 ? 0 : (n - 1) * kv.page_size + kv.last_page_len_host[r];
}

namespace {

bool is16(int t) { return t == POD_DTYPE_F16 || t == POD_DTYPE_BF16; }
bool is8(int t) { return t == POD_DTYPE_E4M3 || t == POD_DTYPE_E5M2; }

std::string check_side(const pod_problem& p, const pod_side& s, const char* name, bool* invalid) {
  const std::string n = name;
  if (s.pos_encoding < POD_POS_NONE || s.pos_encoding > POD_POS_ALIBI) { *invalid = true; return n + ": unknown pos_encoding"; }
  if (s.pos_encoding == POD_POS_ROPE_LLAMA && !(s.rope_scale > 0.0 && s.rope_theta > 0.0)) {
    *invalid = true;
    return n + ": RoPE-LLaMA needs rope_scale > 0 and rope_theta > 0";
  }
  if (s.pos_encoding == POD_POS_ALIBI && !s.alibi_slopes) { *invalid = true; return n + ": ALiBi without alibi_slopes"; }
  if (!(s.logits_soft_cap >= 0.0f)) { *invalid = true; return n + ": logits_soft_cap must be >= 0 (0: off)"; }
  if (s.mask_mode < POD_MASK_NONE || s.mask_mode > POD_MASK_CUSTOM) { *invalid = true; return n + ": unknown mask_mode"; }
  if (s.num_requests < 0 || !s.qo_indptr_host || !s.kv.indptr_host || !s.kv.last_page_len_host) {
    *invalid = true;
    return n + ": missing host index arrays";
  }
  if (s.kv.page_size < 1) { *invalid = true; return n + ": page_size must be >= 1"; }
  if (s.mask_mode == POD_MASK_CUSTOM && (!s.custom_mask || !s.custom_mask_indptr)) {
    *invalid = true;
    return n + ": CUSTOM mask without custom_mask / custom_mask_indptr";
  }
  // 16-byte vector loads and 4-byte paired stores: every stride a multiple of 8 elements.
  const std::int64_t strides[] = {s.q_stride_row, s.q_stride_head, s.o_stride_row, s.o_stride_head,
                                  s.kv.k_stride_page, s.kv.k_stride_slot, s.kv.k_stride_head,
                                  s.kv.v_stride_page, s.kv.v_stride_slot, s.kv.v_stride_head};
  for (std::int64_t st : strides)
    if (st % 8 != 0) return n + ": a stride that is not a multiple of 8 elements is not supported";
  // the copy loops form a token's offset from 32-bit page and slot strides (one multiply-add per row)
  const std::int64_t row_strides[] = {s.kv.k_stride_page, s.kv.k_stride_slot, s.kv.v_stride_page, s.kv.v_stride_slot};
  for (std::int64_t st : row_strides)
    if (st < 0 || st > INT32_MAX)
      return n + ": a KV page or slot stride outside [0, 2^31) elements is not supported";
  for (int r = 0; r < s.num_requests; ++r) {
    if (s.qo_indptr_host[r + 1] < s.qo_indptr_host[r]) { *invalid = true; return n + ": qo_indptr decreases"; }
    const int np = s.kv.indptr_host[r + 1] - s.kv.indptr_host[r];
    if (np < 0) { *invalid = true; return n + ": kv indptr decreases"; }
    if (np > 0 && (s.kv.last_page_len_host[r] < 1 || s.kv.last_page_len_host[r] > s.kv.page_size)) {
      *invalid = true;
      return n + ": last_page_len out of [1, page_size]";
    }
  }
  (void)p;
  return {};
}

}  // namespace

std::string check_support(const pod_problem& p, bool* invalid) {
  bool dummy = false;
  if (!invalid) invalid = &dummy;
  *invalid = false;
  if (p.abi_version != POD_ABI_VERSION) { *invalid = true; return "ABI version mismatch"; }
  if (p.num_qo_heads <= 0 || p.num_kv_heads <= 0 || p.num_qo_heads % p.num_kv_heads != 0) {
    *invalid = true;
    return "num_qo_heads must be a positive multiple of num_kv_heads";
  }
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    return "head_dim " + std::to_string(p.head_dim) + " is not supported (64, 128, 256)";
  if (!is16(p.dtype_q)) return "query dtype must be float16 or bfloat16";
  if (!(p.dtype_kv == p.dtype_q || is8(p.dtype_kv)))
    return "KV dtype must equal the query dtype or be float8 (e4m3fn / e5m2)";
  if (p.dtype_o != p.dtype_q) return "output dtype must equal the query dtype";
  if (!p.prefill.present && !p.decode.present) { *invalid = true; return "neither side present"; }
  if (p.prefill.present) {
    std::string w = check_side(p, p.prefill, "prefill", invalid);
    if (!w.empty()) return w;
  }
  if (p.decode.present) {
    std::string w = check_side(p, p.decode, "decode", invalid);
    if (!w.empty()) return w;
  }
  if (p.kv_chunk_tokens < 0 || p.kv_chunk_tokens % kTileKV != 0) {
    *invalid = true;
    return "kv_chunk_tokens must be a non-negative multiple of the KV tile (32)";
  }
  return {};
}

namespace {

// Tokens a query tile [row_begin, row_begin + rows) of packed rows can see within [0, L) (mask bounds only).
void tile_kv_bounds(const pod_side& s, int g, int qo_len, int L, int row_begin, int rows, int* lo, int* hi) {
  const int packed = qo_len * g;
  const int i_min = row_begin / g;
  const int i_max = (std::min(packed, row_begin + rows) - 1) / g;
  *lo = 0;
  *hi = L;
  if (s.mask_mode == POD_MASK_CAUSAL) *hi = std::clamp(i_max + L - qo_len + 1, 0, L);
  if (s.window_left >= 0) *lo = std::clamp(i_min + L - qo_len - s.window_left, 0, L);
}

void plan_side(const pod_problem& p, const pod_side& s, int side_index, int rows, int chunk, SidePlan& out,
               std::vector<MergeRow>& merge_rows) {
  const int g = p.num_qo_heads / p.num_kv_heads;
  out.items.clear();
  out.part_base.assign(s.num_requests, -1);
  out.kv_len.resize(s.num_requests);
  out.part_entries = 0;
  out.chunk_tokens = chunk;
  out.max_splits = 1;
  out.cost = 0;
  for (int r = 0; r < s.num_requests; ++r) {
    const int qo_len = s.qo_indptr_host[r + 1] - s.qo_indptr_host[r];
    const int L = kv_len_of(s.kv, r);
    out.kv_len[r] = L;
    if (qo_len == 0) continue;
    const int nchunks = (chunk > 0 && L > chunk) ? (L + chunk - 1) / chunk : 1;
    out.max_splits = std::max(out.max_splits, nchunks);
    if (nchunks > 1) {
      out.part_base[r] = out.part_entries;
      out.part_entries += std::int64_t(nchunks) * qo_len * p.num_qo_heads;
      for (int i = 0; i < qo_len; ++i) merge_rows.push_back({side_index, r, i, 0});
    }
    for (int kh = 0; kh < p.num_kv_heads; ++kh)
      for (int rb = 0; rb < qo_len * g; rb += rows)
        for (int c = 0; c < nchunks; ++c) {
          const int kb = nchunks > 1 ? c * chunk : 0;
          const int ke = nchunks > 1 ? std::min(L, kb + chunk) : L;
          int lo, hi;
          tile_kv_bounds(s, g, qo_len, L, rb, rows, &lo, &hi);
          const int cost = std::max(0, std::min(ke, hi) - std::max(kb, lo)) + kTileKV;  // + fixed overhead
          out.items.push_back({r, kh, rb, kb, ke, c, nchunks, cost});
          out.cost += cost;
        }
  }
  std::stable_sort(out.items.begin(), out.items.end(),
                   [](const WorkItem& a, const WorkItem& b) { return a.cost > b.cost; });
}

}  // namespace

int decode_only_splits(long long items, int target) {
  if (items <= 0 || items >= target) return 1;
  const long long ceil_splits = (target + items - 1) / items;
  int best = 1;
  double best_t = 1.0;
  for (int s = 2; s <= 2 * ceil_splits; ++s) {
    const double t = double((items * s + target - 1) / target) / s;
    if (t < best_t - 1e-12) {
      best_t = t;
      best = s;
    }
  }
  return best;
}

namespace {
// Of the prefill SM counts 1 .. sms - 1, the one whose later side ends first by end_of(p); of counts that tie (a
// bandwidth floor or a wave count binds over a range), the middle one, robust to either side's rate.
template <class EndOf> int best_split(int sms, EndOf&& end_of) {
  double best_t = end_of(1);
  for (int p = 2; p < sms; ++p) best_t = std::min(best_t, end_of(p));
  int first = 0, last = 0;
  for (int p = 1; p < sms; ++p)
    if (end_of(p) <= best_t * (1 + 1e-9)) {
      if (!first) first = p;
      last = p;
    }
  return (first + last) / 2;
}
// The prefill side's SM time (us at head_dim 128): kPrefillTokenSmUs per KV token of an item, kPrefillItemSmUs per item.
double prefill_sm_us(const PodPlan& plan) {
  const double n_items = double(plan.side[0].items.size());
  return (plan.side[0].cost - kTileKV * n_items) * kPrefillTokenSmUs + n_items * kPrefillItemSmUs;
}
}  // namespace

SplitEnds ws_split_ends(const PodPlan& plan, int sms, int head_dim, int p, int groups, int pipes_per_sm) {
  const double f = head_dim / 128.0;
  const double wp = prefill_sm_us(plan) * f;
  const double floor_d = plan.side[1].cost * kDecodeUnitMachineUs * f;
  const int d = std::max(1, sms - p);
  SplitEnds e;
  if (groups <= 0) {  // the decode warpgroups: the decode's work spread evenly over its SMs
    e.prefill_us = wp / p;
    e.decode_us = std::max(floor_d, plan.side[1].cost * kDecodeUnitSmUs * f / d);
    return e;
  }
  // waves on both sides: whole items per prefill SM, whole groups per decode pipeline
  const double n_items = double(plan.side[0].items.size());
  const double item_us = n_items > 0 ? wp / n_items : 0.0;
  const double group_us = plan.side[1].cost / groups * kGdPipeUnitUs * f;
  e.prefill_us = std::max(wp / p, std::ceil(n_items / p) * item_us);
  e.decode_us = std::max(floor_d, std::ceil(double(groups) / (double(pipes_per_sm) * d)) * group_us);
  return e;
}

int ws_split_sms(const PodPlan& plan, int sms, int head_dim) {
  if (sms < 2) return 1;
  return best_split(sms, [&](int p) {
    const SplitEnds e = ws_split_ends(plan, sms, head_dim, p);
    return std::max(e.prefill_us, e.decode_us);
  });
}

int ws_split_sms_gdec(const PodPlan& plan, int sms, int head_dim, int groups, int pipes_per_sm) {
  if (sms < 2) return 1;
  return best_split(sms, [&](int p) {
    const SplitEnds e = ws_split_ends(plan, sms, head_dim, p, groups, pipes_per_sm);
    return std::max(e.prefill_us, e.decode_us);
  });
}

double tail_model_end(const std::vector<WorkItem>& items, int ctas) {
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (int c = 0; c < std::max(1, ctas); ++c) free_at.push(0.0);
  double end = 0;
  for (const WorkItem& w : items) {
    const double t = free_at.top() + w.cost + kTailItemTokens;
    free_at.pop();
    free_at.push(t);
    end = std::max(end, t);
  }
  return end;
}

int split_prefill_tail(const pod_problem& p, int ctas, int rows, PodPlan& plan, bool merge_in_launch) {
  SidePlan& sp = plan.side[0];
  const pod_side& s = p.prefill;
  const int n = int(sp.items.size());
  const int g = p.num_kv_heads > 0 ? p.num_qo_heads / p.num_kv_heads : 0;
  if (ctas < 2 || n <= ctas || n % ctas == 0 || sp.max_splits > 1 || g < 1 || rows % g != 0) return 0;
  // the q-tiles of the last wave's items
  std::map<std::pair<int, int>, bool> tail;
  for (int i = n - n % ctas; i < n; ++i) tail[{sp.items[i].request, sp.items[i].row_begin}] = true;
  constexpr int kCutGranule = 64;  // the warp-specialised kernel's KV tile: pieces start on a tile
  auto cut_plan = [&](double f) {
    std::vector<WorkItem> v;
    for (const WorkItem& w : sp.items) {
      if (!tail.count({w.request, w.row_begin})) {
        v.push_back(w);
        continue;
      }
      const int qo_len = s.qo_indptr_host[w.request + 1] - s.qo_indptr_host[w.request], L = sp.kv_len[w.request];
      int lo, hi;
      tile_kv_bounds(s, g, qo_len, L, w.row_begin, rows, &lo, &hi);
      const int seen = std::max(0, hi - lo);
      const int cut = std::clamp(lo + int(std::lround(seen * f / kCutGranule)) * kCutGranule, std::min(lo, hi), hi);
      const int c0 = std::max(0, cut - lo), c1 = seen - c0;
      v.push_back({w.request, w.kv_head, w.row_begin, 0, cut, 0, 2, c0 + kTileKV});
      v.push_back({w.request, w.kv_head, w.row_begin, cut, L, 1, 2, c1 + kTileKV});
    }
    std::stable_sort(v.begin(), v.end(), [](const WorkItem& a, const WorkItem& b) { return a.cost > b.cost; });
    return v;
  };
  const double unsplit = tail_model_end(sp.items, ctas);
  std::vector<WorkItem> best;
  double best_end = unsplit * 0.99;  // a cut must gain 1 % in the model
  for (int k = 11; k <= 19; ++k) {
    std::vector<WorkItem> v = cut_plan(k / 20.0);
    const double e = tail_model_end(v, ctas);
    if (e < best_end) {
      best_end = e;
      best = std::move(v);
    }
  }
  if (best.empty()) return 0;
  sp.items = std::move(best);
  sp.max_splits = 2;
  sp.cost = 0;
  for (const WorkItem& w : sp.items) sp.cost += w.cost;
  for (const auto& [key, unused] : tail) {  // (request, row_begin) in order: each request's entries once
    const auto [r, rb] = key;
    const int qo_len = s.qo_indptr_host[r + 1] - s.qo_indptr_host[r];
    if (sp.part_base[r] < 0) {
      sp.part_base[r] = sp.part_entries;
      sp.part_entries += std::int64_t(2) * qo_len * p.num_qo_heads;
    }
    if (!merge_in_launch)
      for (int i = rb / g; i < std::min(qo_len, (rb + rows) / g); ++i) plan.merge_rows.push_back({0, r, i, 0});
  }
  if (merge_in_launch) {  // the cut pieces (the side was unsplit: every item of 2 chunks is one) paired by their tile
    std::map<std::tuple<int, int, int>, int> slot;
    sp.pair_slot.assign(sp.items.size(), -1);
    for (std::size_t i = 0; i < sp.items.size(); ++i) {
      const WorkItem& w = sp.items[i];
      if (w.nchunks != 2) continue;
      sp.pair_slot[i] = slot.try_emplace({w.request, w.row_begin, w.kv_head}, int(slot.size())).first->second;
    }
    sp.n_pair_slots = int(slot.size());
  }
  return int(tail.size());
}

std::string group_decode_refusal(const pod_problem& p) {
  const pod_side& s = p.decode;
  const pod_kv& kv = s.kv;
  if (is8(p.dtype_kv)) return "fp8 KV";
  if (kv.page_size % kGroupDecodeTokens != 0)
    return "page size " + std::to_string(kv.page_size) + ", not a multiple of " + std::to_string(kGroupDecodeTokens);
  const int g = p.num_kv_heads > 0 ? p.num_qo_heads / p.num_kv_heads : 0;
  if (g > 8) return "group size " + std::to_string(g) + " (at most 8)";
  if (p.num_kv_heads % kGroupDecodeHeads != 0) return "KV heads not a multiple of 4";
  if (s.mask_mode == POD_MASK_CUSTOM || s.window_left >= 0) return "custom mask or sliding window";
  for (int r = 0; r < s.num_requests; ++r)
    if (s.qo_indptr_host[r + 1] - s.qo_indptr_host[r] > 1) return "a request with more than one query row";
  // byte strides (16-bit elements) in 16-byte multiples and under 2^40, as cuTensorMapEncodeTiled takes them
  const auto a16 = [](std::int64_t elems) { return (elems * 2) % 16 == 0 && elems * 2 < (std::int64_t(1) << 40); };
  if (reinterpret_cast<std::uintptr_t>(kv.k) % 16 || reinterpret_cast<std::uintptr_t>(kv.v) % 16 ||
      !a16(kv.k_stride_page) || !a16(kv.k_stride_slot) || !a16(kv.k_stride_head) || !a16(kv.v_stride_page) ||
      !a16(kv.v_stride_slot) || !a16(kv.v_stride_head))
    return "K / V base or strides not multiples of 16 bytes";
  if (reinterpret_cast<std::uintptr_t>(s.q) % 4 || s.q_stride_row % 2 || s.q_stride_head % 2)
    return "query rows not 4-byte aligned";
  return {};
}

bool group_decode_default_page(int page_size) { return page_size == 16 || page_size == 64; }

int launch_form(const LaunchFormInputs& in) {
  if (!in.ws_applies || !in.prefill_runs) return kFormFused;
  if (!in.decode_runs) return in.ws_knob != 0 ? kFormWsPrefillOnly : kFormFused;
  if (in.ws_knob >= 2) return in.ws_knob == 2 ? kFormWsCoResident : kFormWsSplitSms;
  return in.ws_knob < 0 && in.gdec_knob && in.gdec_takes_decode && in.gdec_default_page ? kFormWsSplitSms : kFormFused;
}

std::vector<std::array<int, kGroupDecodeHeads>> group_decode_groups(const SidePlan& decode, std::string* why_not) {
  std::vector<std::array<int, kGroupDecodeHeads>> groups;
  const auto refuse = [&](const char* why) {
    if (why_not) *why_not = why;
    groups.clear();
    return groups;
  };
  const std::vector<WorkItem>& items = decode.items;
  std::map<std::array<int, 3>, int> at;  // (request, chunk, KV head) -> item
  for (int i = 0; i < int(items.size()); ++i) {
    const WorkItem& w = items[i];
    if (w.row_begin != 0) return refuse("an item past the first row tile");
    at[{w.request, w.chunk, w.kv_head}] = i;
  }
  for (int i = 0; i < int(items.size()); ++i) {
    const WorkItem& w = items[i];
    if (w.kv_head % kGroupDecodeHeads != 0) continue;
    std::array<int, kGroupDecodeHeads> ids{};
    ids[0] = i;
    for (int h = 1; h < kGroupDecodeHeads; ++h) {
      const auto f = at.find({w.request, w.chunk, w.kv_head + h});
      if (f == at.end()) return refuse("an item without the rest of its head group");
      const WorkItem& x = items[f->second];
      if (x.kv_begin != w.kv_begin || x.kv_end != w.kv_end || x.nchunks != w.nchunks)
        return refuse("a head group's ranges differ");
      ids[h] = f->second;
    }
    groups.push_back(ids);
  }
  if (groups.size() * kGroupDecodeHeads != items.size()) return refuse("items outside head groups");
  if (why_not) why_not->clear();
  return groups;
}

int role_split(double prefill_cost, double decode_cost, int ctas_per_sm) {
  if (prefill_cost <= 0) return 0;
  if (decode_cost <= 0) return ctas_per_sm;
  int k = (int)std::lround(ctas_per_sm * prefill_cost / (prefill_cost + decode_cost));
  if (ctas_per_sm >= 2) k = std::clamp(k, 1, ctas_per_sm - 1);
  return k;
}

PodPlan make_plan(const pod_problem& p, int target_ctas, int ctas_per_sm, const PlanTuning& tuning) {
  PodPlan plan;
  const pod_side* sides[2] = {p.prefill.present && p.only_side != 2 ? &p.prefill : nullptr,
                              p.decode.present && p.only_side != 1 ? &p.decode : nullptr};
  const int g = p.num_qo_heads / p.num_kv_heads;
  const int rows_of[2] = {tuning.prefill_tile_rows > 0 ? tuning.prefill_tile_rows : tile_rows(0), tile_rows(1)};
  // Unsplit item count and longest KV of each side decide the split-KV chunk size.
  long long base_items = 0, side_items[2] = {0, 0};
  int max_len[2] = {0, 0};
  for (int si = 0; si < 2; ++si) {
    if (!sides[si]) continue;
    const pod_side& s = *sides[si];
    for (int r = 0; r < s.num_requests; ++r) {
      const int qo_len = s.qo_indptr_host[r + 1] - s.qo_indptr_host[r];
      side_items[si] += (long long)((qo_len * g + rows_of[si] - 1) / rows_of[si]) * p.num_kv_heads;
      max_len[si] = std::max(max_len[si], kv_len_of(s.kv, r));
    }
    base_items += side_items[si];
  }
  // Of the CTAs on one SM, how many start as prefill: a share proportional to the prefill's cost, or the experiment's
  auto prefill_ctas = [&](double prefill_cost, double decode_cost) {
    return tuning.prefill_ctas_per_sm >= 0 ? std::min(tuning.prefill_ctas_per_sm, ctas_per_sm)
                                           : role_split(prefill_cost, decode_cost, ctas_per_sm);
  };
  // A launch with both sides and fewer items than CTAs (v3.8): the decode's chunks are chosen for the CTAs that
  // start in the decode role (the role split of the unsplit work), as a decode-only launch's are for all of its CTAs
  int decode_slots = target_ctas;
  if (sides[0] && sides[1] && base_items > 0 && base_items < target_ctas && !tuning.splits_within_one_wave &&
      ctas_per_sm >= 1) {
    SidePlan unsplit[2];
    std::vector<MergeRow> none;
    for (int si = 0; si < 2; ++si) plan_side(p, *sides[si], si, rows_of[si], 0, unsplit[si], none);
    const int k = prefill_ctas(unsplit[0].cost, unsplit[1].cost);
    if (k < ctas_per_sm) decode_slots = std::max(1, (int)((long long)target_ctas * (ctas_per_sm - k) / ctas_per_sm));
  }
  for (int si = 0; si < 2; ++si) {
    if (!sides[si]) continue;
    int chunk = 0;
    if (tuning.chunk_tokens[si] >= 0) {
      chunk = tuning.chunk_tokens[si];
    } else if (p.kv_chunk_tokens > 0) {
      chunk = p.kv_chunk_tokens;
    } else if (base_items > 0 && base_items < target_ctas &&
               (!tuning.splits_within_one_wave || 2 * base_items <= target_ctas)) {
      const long long splits = tuning.splits_within_one_wave ? target_ctas / base_items
                               : !sides[0]                   ? decode_only_splits(base_items, target_ctas)
                               : si == 1                     ? decode_only_splits(side_items[1], decode_slots)
                                                             : (target_ctas + base_items - 1) / base_items;
      if (splits > 1) {
        chunk = (int)((max_len[si] + splits - 1) / splits);
        chunk = std::max(256, (chunk + kTileKV - 1) / kTileKV * kTileKV);
      }
    }
    plan_side(p, *sides[si], si, rows_of[si], chunk, plan.side[si], plan.merge_rows);
  }
  plan.prefill_ctas_per_sm = prefill_ctas(plan.side[0].cost, plan.side[1].cost);
  return plan;
}

}  // namespace podcheck::kernels
