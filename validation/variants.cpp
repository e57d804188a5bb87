// Semantic variants as case rewrites (validation/variants.hpp).
#include "validation/variants.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>

namespace podcheck::validation {
namespace {

bool any_side(const Case& c, const std::function<bool(const Side&)>& f) {
  for (SideKind k : {SideKind::prefill, SideKind::decode})
    if (const Side* s = c.side(k); s && f(*s)) return true;
  return false;
}

// Bit i * L + j of request r's segment of a custom mask.
bool custom_bit(const SideParams& p, int r, std::int64_t i, std::int64_t j, std::int64_t L) {
  const std::int64_t bit = p.custom_mask_indptr[r] * 8 + i * L + j;
  return (p.custom_mask[static_cast<std::size_t>(bit >> 3)] >> (bit & 7)) & 1;
}

// Replaces the side's mask by a custom mask whose bit (r, i, j) is bit(r, i, j), over the side's current
// qo_indptr and kv lengths (one byte-aligned segment per request).
void set_custom_mask(Side& s, const std::function<bool(int, std::int64_t, std::int64_t)>& bit) {
  SideParams& p = s.params;
  std::vector<std::uint8_t> bits;
  std::vector<std::int64_t> indptr = {0};
  for (int r = 0; r < s.num_requests(); ++r) {
    const std::int64_t Q = s.qo_len(r), L = s.kv_len(r);
    const std::size_t base = bits.size();
    bits.resize(base + static_cast<std::size_t>((Q * L + 7) / 8), 0);
    for (std::int64_t i = 0; i < Q; ++i)
      for (std::int64_t j = 0; j < L; ++j)
        if (bit(r, i, j)) {
          const std::int64_t b = i * L + j;
          bits[base + static_cast<std::size_t>(b >> 3)] |= static_cast<std::uint8_t>(1u << (b & 7));
        }
    indptr.push_back(static_cast<std::int64_t>(bits.size()));
  }
  p.mask_mode = MaskMode::custom;
  p.custom_mask = std::move(bits);
  p.custom_mask_indptr = std::move(indptr);
}

// Causal aligned at the top-left: key j visible to local row i iff j <= i (the window still applies on top).
void causal_top_left(Side& s) {
  if (s.params.mask_mode != MaskMode::causal) return;
  set_custom_mask(s, [](int, std::int64_t i, std::int64_t j) { return j <= i; });
}

// Query heads permuted so that head h' of the rewritten case holds the original head sigma(h') = kvh + hh * H_kv
// (h' = kvh * g + hh): h' reads kv head h' / g = kvh = sigma(h') % H_kv, the h % H_kv mapping.
void gqa_modulo(Case& c, std::vector<int>& heads) {
  const int H = c.num_qo_heads, Hkv = c.num_kv_heads, g = c.group_size();
  std::vector<int> sigma(H);
  for (int kvh = 0; kvh < Hkv; ++kvh)
    for (int hh = 0; hh < g; ++hh) sigma[kvh * g + hh] = kvh + hh * Hkv;
  heads.assign(H, 0);
  for (int hp = 0; hp < H; ++hp) heads[sigma[hp]] = hp;
  for (SideKind k : {SideKind::prefill, SideKind::decode}) {
    Side* s = c.side(k);
    if (!s) continue;
    const std::size_t es = dtype_size(s->q.dtype);
    const std::size_t row_bytes = static_cast<std::size_t>(c.head_dim) * es;
    const Tensor& q = s->q;
    Tensor out = q;
    for (std::int64_t row = 0; row < s->num_rows(); ++row)
      for (int hp = 0; hp < H; ++hp)
        std::memcpy(&out.bytes[(static_cast<std::size_t>(row) * H + hp) * row_bytes],
                    &q.bytes[(static_cast<std::size_t>(row) * H + sigma[hp]) * row_bytes], row_bytes);
    s->q = std::move(out);
    SideParams& p = s->params;
    if (p.pos_encoding == PosEncoding::alibi) {
      const std::vector<double> slopes = p.alibi_slopes.empty() ? default_alibi_slopes(H) : p.alibi_slopes;
      p.alibi_slopes.assign(H, 0.0);
      for (int hp = 0; hp < H; ++hp) p.alibi_slopes[hp] = slopes[sigma[hp]];
    }
  }
}

// Every request's pages read in pool order: indices[k] = k.
void pages_in_order(Side& s) {
  if (!s.kv.paged) return;
  auto& ix = s.kv.pages.indices;
  for (std::size_t k = 0; k < ix.size(); ++k) ix[k] = static_cast<std::int32_t>(k);
}

// ALiBi at the true position j - p_i, p_i = i + L - Q: L - Q rows (zero queries) are prepended to each request,
// so that row i becomes local row p_i with the same position (its mask, window and RoPE are unchanged) and
// FlashInfer's slope * (j - local row) is slope * (j - p_i). False when some request has L < Q.
bool alibi_true_position(Side& s, std::vector<std::int64_t>& rows) {
  const int R = s.num_requests();
  for (int r = 0; r < R; ++r)
    if (s.qo_len(r) > 0 && s.kv_len(r) < s.qo_len(r)) return false;
  const Side old = s;
  std::vector<std::int32_t> indptr = {0};
  rows.assign(static_cast<std::size_t>(old.num_rows()), 0);
  for (int r = 0; r < R; ++r) {
    const std::int64_t Q = old.qo_len(r), P = Q > 0 ? old.kv_len(r) - Q : 0;
    for (std::int64_t i = 0; i < Q; ++i) rows[static_cast<std::size_t>(old.qo_indptr[r] + i)] = indptr.back() + P + i;
    indptr.push_back(static_cast<std::int32_t>(indptr.back() + P + Q));
  }
  const std::int64_t H = old.q.shape.size() > 1 ? old.q.shape[1] : 0, D = old.q.shape.size() > 2 ? old.q.shape[2] : 0;
  const std::size_t row_bytes = static_cast<std::size_t>(H * D) * dtype_size(old.q.dtype);
  Tensor q = Tensor::zeros(old.q.dtype, {indptr.back(), H, D});
  for (std::int64_t row = 0; row < old.num_rows(); ++row)
    std::memcpy(&q.bytes[static_cast<std::size_t>(rows[static_cast<std::size_t>(row)]) * row_bytes],
                &old.q.bytes[static_cast<std::size_t>(row) * row_bytes], row_bytes);
  s.qo_indptr = std::move(indptr);
  s.q = std::move(q);
  if (old.params.mask_mode == MaskMode::custom)
    set_custom_mask(s, [&](int r, std::int64_t i, std::int64_t j) {
      const std::int64_t P = old.kv_len(r) - old.qo_len(r);
      return i >= P && custom_bit(old.params, r, i - P, j, old.kv_len(r));
    });
  return true;
}

}  // namespace

std::vector<Variant> semantic_variants(const Case& c, const Semantics& sem) {
  std::vector<Variant> out;
  auto global = [&](std::string name, const std::function<bool(Variant&)>& f) {
    Variant v{std::move(name), std::nullopt, c, sem, false, {}, {}};
    if (f(v)) out.push_back(std::move(v));
  };
  auto global_mask = [&](std::string name, const std::function<bool(Variant&)>& f) {
    Variant v{std::move(name), std::nullopt, c, sem, true, {}, {}};
    if (f(v)) out.push_back(std::move(v));
  };
  auto each_side = [](Variant& v, const std::function<void(SideKind, Side&)>& f) {
    for (SideKind k : {SideKind::prefill, SideKind::decode})
      if (Side* s = v.kase.side(k)) f(k, *s);
  };
  // Per-side parameter flips: one variant per side that has the feature.
  auto per_side = [&](const std::string& what, const std::function<bool(const Side&)>& has,
                      const std::function<void(SideParams&)>& f, bool mask_only = false) {
    for (SideKind k : {SideKind::prefill, SideKind::decode}) {
      const Side* s = c.side(k);
      if (!s || !has(*s)) continue;
      Variant v{fmt::format("{}: {}", side_name(k), what), k, c, sem, mask_only, {}, {}};
      f(v.kase.side(k)->params);
      out.push_back(std::move(v));
    }
  };
  auto per_side_rewrite = [&](const std::string& what, const std::function<bool(const Side&)>& has,
                              const std::function<void(Side&)>& f) {
    for (SideKind k : {SideKind::prefill, SideKind::decode}) {
      const Side* s = c.side(k);
      if (!s || !has(*s)) continue;
      Variant v{fmt::format("{}: {}", side_name(k), what), k, c, sem, true, {}, {}};
      f(*v.kase.side(k));
      out.push_back(std::move(v));
    }
  };
  global(c.lse_base == LseBase::base2 ? "LSE in base e (natural log)" : "LSE in base 2", [](Variant& v) {
    v.kase.lse_base = v.kase.lse_base == LseBase::base2 ? LseBase::base_e : LseBase::base2;
    return true;
  });
  if (any_side(c, [](const Side& s) {
        if (s.params.mask_mode != MaskMode::causal) return false;
        for (int r = 0; r < s.num_requests(); ++r)
          if (s.qo_len(r) != s.kv_len(r)) return true;
        return false;
      }))
    global_mask("causal mask aligned top-left (j <= i)", [&](Variant& v) {
      each_side(v, [](SideKind, Side& s) { causal_top_left(s); });
      return true;
    });
  if (c.group_size() > 1 && c.num_kv_heads > 1)
    global("GQA mapping h % H_kv instead of h / group", [](Variant& v) {
      gqa_modulo(v.kase, v.heads);
      return true;
    });
  if (any_side(c, [](const Side& s) { return s.kv.paged; }))
    global("page table ignored (pages read in order)", [&](Variant& v) {
      each_side(v, [](SideKind, Side& s) { pages_in_order(s); });
      return true;
    });
  if (any_side(c, [](const Side& s) { return s.params.window_left >= 0; })) {
    global_mask("window_left + 1 (window off by one)", [&](Variant& v) {
      each_side(v, [](SideKind, Side& s) {
        if (s.params.window_left >= 0) ++s.params.window_left;
      });
      return true;
    });
    if (any_side(c, [](const Side& s) { return s.params.window_left >= 1; }))
      global_mask("window_left - 1 (window off by one)", [&](Variant& v) {
        each_side(v, [](SideKind, Side& s) {
          if (s.params.window_left >= 1) --s.params.window_left;
        });
        return true;
      });
  }
  if (any_side(c, [](const Side& s) {
        return s.params.pos_encoding == PosEncoding::alibi && s.params.logits_soft_cap > 0;
      }))
    global(sem.alibi_softcap_double_sm_scale ? "sm_scale applied once with ALiBi + soft cap"
                                             : "sm_scale applied twice with ALiBi + soft cap (FlashInfer's quirk)",
           [](Variant& v) {
             v.semantics.alibi_softcap_double_sm_scale = !v.semantics.alibi_softcap_double_sm_scale;
             return true;
           });
  if (any_side(c, [](const Side& s) { return s.params.pos_encoding == PosEncoding::alibi; }))
    global("ALiBi at true positions (slope*(j - p_i))", [&](Variant& v) {
      bool ok = true;
      each_side(v, [&](SideKind k, Side& s) {
        if (s.params.pos_encoding == PosEncoding::alibi) ok = ok && alibi_true_position(s, v.rows[k]);
      });
      return ok;
    });

  per_side("RoPE not applied (pos_encoding NONE)",
           [](const Side& s) { return s.params.pos_encoding == PosEncoding::rope_llama; },
           [](SideParams& p) { p.pos_encoding = PosEncoding::none; });
  per_side("RoPE applied (ROPE_LLAMA) although not asked",
           [](const Side& s) { return s.params.pos_encoding == PosEncoding::none; },
           [](SideParams& p) { p.pos_encoding = PosEncoding::rope_llama; });
  per_side("soft cap not applied", [](const Side& s) { return s.params.logits_soft_cap > 0; },
           [](SideParams& p) { p.logits_soft_cap = 0; });
  per_side("k_scale not applied", [](const Side& s) { return s.params.k_scale != 1.0; },
           [](SideParams& p) { p.k_scale = 1.0; });
  per_side("k_scale applied twice", [](const Side& s) { return s.params.k_scale != 1.0; },
           [](SideParams& p) { p.k_scale *= p.k_scale; });
  per_side("v_scale not applied", [](const Side& s) { return s.params.v_scale != 1.0; },
           [](SideParams& p) { p.v_scale = 1.0; });
  per_side("v_scale applied twice", [](const Side& s) { return s.params.v_scale != 1.0; },
           [](SideParams& p) { p.v_scale *= p.v_scale; });
  per_side("q_scale not applied", [](const Side& s) { return s.params.q_scale != 1.0; },
           [](SideParams& p) { p.q_scale = 1.0; });
  per_side("causal mask not applied", [](const Side& s) { return s.params.mask_mode == MaskMode::causal; },
           [](SideParams& p) { p.mask_mode = MaskMode::none; }, true);
  per_side("causal mask applied although not asked", [](const Side& s) { return s.params.mask_mode == MaskMode::none; },
           [](SideParams& p) { p.mask_mode = MaskMode::causal; }, true);
  per_side_rewrite("causal diagonal one key late (j <= p_i + 1)",
                   [](const Side& s) { return s.params.mask_mode == MaskMode::causal; }, [](Side& s) {
                     set_custom_mask(s, [&](int r, std::int64_t i, std::int64_t j) {
                       return j <= i + s.kv_len(r) - s.qo_len(r) + 1;
                     });
                   });
  per_side_rewrite("causal diagonal one key early (j <= p_i - 1)",
                   [](const Side& s) { return s.params.mask_mode == MaskMode::causal; }, [](Side& s) {
                     set_custom_mask(s, [&](int r, std::int64_t i, std::int64_t j) {
                       return j <= i + s.kv_len(r) - s.qo_len(r) - 1;
                     });
                   });
  per_side("window not applied", [](const Side& s) { return s.params.window_left >= 0; },
           [](SideParams& p) { p.window_left = -1; }, true);
  per_side("custom mask ignored", [](const Side& s) { return s.params.mask_mode == MaskMode::custom; },
           [](SideParams& p) {
             p.mask_mode = MaskMode::none;
             p.custom_mask.clear();
             p.custom_mask_indptr.clear();
           }, true);
  per_side("default sm_scale 1/sqrt(head_dim) instead of the given one",
           [&](const Side& s) {
             return s.params.sm_scale && std::abs(*s.params.sm_scale * std::sqrt(double(c.head_dim)) - 1.0) > 1e-6;
           },
           [](SideParams& p) { p.sm_scale.reset(); });
  return out;
}

SideResult variant_reference(const Variant& v, SideKind side) {
  SideResult got = reference_fast_side(v.kase, side, v.semantics);
  const auto rit = v.rows.find(side);
  const bool same_rows = rit == v.rows.end() || rit->second.empty();
  if (same_rows && v.heads.empty()) return got;
  SideResult out;
  out.rows = same_rows ? got.rows : static_cast<std::int64_t>(rit->second.size());
  out.heads = got.heads;
  out.head_dim = got.head_dim;
  out.out.resize(static_cast<std::size_t>(out.rows * out.heads * out.head_dim));
  out.lse.resize(static_cast<std::size_t>(out.rows * out.heads));
  for (std::int64_t row = 0; row < out.rows; ++row) {
    const std::int64_t src_row = same_rows ? row : rit->second[static_cast<std::size_t>(row)];
    for (int h = 0; h < out.heads; ++h) {
      const int src_h = v.heads.empty() ? h : v.heads[h];
      out.lse[row * out.heads + h] = got.lse[src_row * got.heads + src_h];
      std::memcpy(&out.out[(row * out.heads + h) * out.head_dim], &got.out[(src_row * got.heads + src_h) * got.head_dim],
                  sizeof(double) * static_cast<std::size_t>(out.head_dim));
    }
  }
  return out;
}

}  // namespace podcheck::validation
