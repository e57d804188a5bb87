// FlashInfer API-logging dumps -> traces (flashinfer_dump.hpp). What each wrapper hands its kernel is read
// from FlashInfer fb28d7242b35's Python code (flashinfer/pod.py, prefill.py, decode.py; SPEC §9, §11).
#include "traces/flashinfer_dump.hpp"

#include "fixtures/fixture_io.hpp"
#include "traces/dump_calls.hpp"
#include "traces/dump_signatures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace podcheck {

namespace {

using dump::Args;
using dump::Call;
using dump::Family;
using dump::Value;

// A call podcheck cannot model (a valid dump of something outside the case model).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

float as_f32(double x) { return static_cast<float>(x); }

// Reads the call's tensors with messages naming the folder, the file and the key.
struct In {
  const Call& c;
  const Args& a;

  const safetensors::File& inputs() const {
    if (!c.inputs) c.fail_file("inputs.safetensors", "missing (the call's input tensors were not saved)");
    return *c.inputs;
  }
  const Value& value(const std::string& name) const { return a.get(name); }
  std::string key(const std::string& name) const {
    const Value& v = a.get(name);
    if (v.kind != Value::tensor)
      c.fail_file("metadata.jsonl", "argument '" + name + "' is " + (v.is_none() ? std::string("None") : "not a tensor") +
                                        ", expected a tensor");
    return v.key;
  }
  Tensor tensor(const std::string& name, const std::optional<std::vector<std::int64_t>>& rows = {}) const {
    return load(key(name), rows);
  }
  Tensor load(const std::string& k, const std::optional<std::vector<std::int64_t>>& rows = {}) const {
    try {
      return safetensors::to_tensor(inputs(), k, rows);
    } catch (const safetensors::SafetensorsError& e) {
      c.fail_file("inputs.safetensors", e.what());
    }
  }
  const safetensors::TensorInfo& info(const std::string& k) const {
    try {
      return inputs().info(k);
    } catch (const safetensors::SafetensorsError& e) {
      c.fail_file("inputs.safetensors", e.what());
    }
  }
  std::vector<std::int32_t> ints(const std::string& name) const {
    Tensor t = tensor(name);
    if (t.dtype != DType::int32 || t.shape.size() != 1)
      c.fail_file("inputs.safetensors", "tensor '" + key(name) + "' (" + name + "): expected a 1-D int32 or int64 tensor, found " +
                                            std::string(dtype_name(t.dtype)) + " " + t.shape_string());
    std::vector<std::int32_t> v(t.bytes.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
    return v;
  }
};

struct Sub {  // the same for another call (the plan of a run)
  static std::vector<std::int32_t> ints(const Call& c, const Args& a, const std::string& name) { return In{c, a}.ints(name); }
};

// ---- paged KV: the cache argument, its layout, the pages the page table reaches ----------------------------

struct CacheArg {
  bool stacked = false;
  std::string kv, k, v;                   // keys
  std::vector<std::int64_t> shape;        // k (or kv) as stored
  bool shortcut = false;                  // page_size 1 form (3-D members / 4-D stacked)
};

CacheArg cache_arg(const In& in, const std::string& name) {
  const Value& v = in.value(name);
  CacheArg ca;
  if (v.kind == Value::tensor) {
    ca.stacked = true;
    ca.kv = v.key;
    ca.shape = in.info(ca.kv).shape;
    if (ca.shape.size() != 5 && ca.shape.size() != 4)
      in.c.fail_file("inputs.safetensors", "tensor '" + ca.kv + "' (" + name + "): a single-tensor paged cache is 5-D [pages, 2, ...] (4-D for page_size 1), found " +
                                                safetensors::TensorInfo{ca.kv, {}, ca.shape, 0, 0}.shape_string());
    ca.shortcut = ca.shape.size() == 4;
    if (ca.shape[1] != 2) in.c.fail_file("inputs.safetensors", "tensor '" + ca.kv + "' (" + name + "): dimension 1 must be 2 (K, V)");
    return ca;
  }
  if (v.kind == Value::tuple_of_tensors && v.members.size() == 2) {
    ca.k = v.members[0];
    ca.v = v.members[1];
    ca.shape = in.info(ca.k).shape;
    const auto& vs = in.info(ca.v);
    if (vs.shape != ca.shape || vs.dtype != in.info(ca.k).dtype)
      in.c.fail_file("inputs.safetensors", "tensors '" + ca.k + "' and '" + ca.v + "' (" + name + "): mismatched shapes: K " +
                                                in.info(ca.k).shape_string() + ", V " + vs.shape_string());
    if (ca.shape.size() != 4 && ca.shape.size() != 3)
      in.c.fail_file("inputs.safetensors", "tensor '" + ca.k + "' (" + name + "): a paged K cache is 4-D (3-D for page_size 1), found " +
                                                in.info(ca.k).shape_string());
    ca.shortcut = ca.shape.size() == 3;
    return ca;
  }
  in.c.fail_file("metadata.jsonl", "argument '" + name + "' is neither a tensor nor a tuple (k_cache, v_cache)");
}

// The two dimensions between pages and head_dim ([ps, H] NHD, [H, ps] HND); {1, H} or {H, 1} for the shortcut.
std::pair<std::int64_t, std::int64_t> inner_dims(const CacheArg& ca) {
  const auto& s = ca.shape;
  if (ca.stacked) return ca.shortcut ? std::pair<std::int64_t, std::int64_t>{1, s[2]} : std::pair{s[2], s[3]};
  return ca.shortcut ? std::pair<std::int64_t, std::int64_t>{1, s[1]} : std::pair{s[1], s[2]};
}

struct LayoutChoice {
  Layout layout = Layout::NHD;
  std::string source;
};

// Expands a page-size-1 shortcut tensor and checks [P, ps, H, D] / [P, H, ps, D] against the plan.
std::vector<std::int64_t> page_shape(const CacheArg& ca, Layout l) {
  std::vector<std::int64_t> s = ca.shape;
  if (ca.shortcut) s.insert(s.end() - (l == Layout::NHD ? 2 : 1), 1);  // unit page dim before H (NHD) or D (HND)
  return s;
}

struct PageTableIn {
  std::vector<std::int32_t> indptr, indices, last;
  std::string where;  // "plan 'folder'" for messages
};

// Keeps the pages the table reaches, renumbered in their original order.
KvStorage gather_pages(const In& in, const CacheArg& ca, Layout layout, const PageTableIn& pt, int page_size, int hkv,
                       int head_dim, const std::string& name, std::string& kept) {
  const std::string key = ca.stacked ? ca.kv : ca.k;
  std::vector<std::int64_t> full = page_shape(ca, layout);
  const std::int64_t P = full[0];
  const std::size_t off = ca.stacked ? 1 : 0;
  const std::int64_t ps = layout == Layout::NHD ? full[1 + off] : full[2 + off];
  const std::int64_t h = layout == Layout::NHD ? full[2 + off] : full[1 + off];
  if (ps != page_size || h != hkv || full.back() != head_dim)
    in.c.fail_file("inputs.safetensors",
                   fmt::format("tensor '{}' ({}): mismatched shapes: a {} cache of page_size {}, {} kv heads and head_dim {} (from {}) "
                               "cannot have shape {}", key, name, layout_name(layout), page_size, hkv, head_dim, pt.where,
                               in.info(key).shape_string()));
  if (pt.indptr.empty() || pt.indptr[0] != 0)
    throw Unsupported(fmt::format("{}: kv indptr does not start at 0", pt.where));
  for (std::size_t i = 1; i < pt.indptr.size(); ++i)
    if (pt.indptr[i] < pt.indptr[i - 1]) in.c.fail(fmt::format("{}: kv indptr decreases at position {}", pt.where, i));
  const std::int64_t used = pt.indptr.back();
  if (used > static_cast<std::int64_t>(pt.indices.size()))
    in.c.fail(fmt::format("{}: kv indptr[-1] = {} but the page indices hold {} entries", pt.where, used, pt.indices.size()));
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < used; ++i) {
    const std::int32_t p = pt.indices[static_cast<std::size_t>(i)];
    if (p < 0 || p >= P)
      in.c.fail_file("inputs.safetensors", fmt::format("tensor '{}' ({}): page index {} at position {} of {}'s indices is out of range [0, {})",
                                                       key, name, p, i, pt.where, P));
    rows.push_back(p);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::map<std::int32_t, std::int32_t> renum;
  for (std::size_t i = 0; i < rows.size(); ++i) renum[static_cast<std::int32_t>(rows[i])] = static_cast<std::int32_t>(i);

  KvStorage kv;
  kv.paged = true;
  kv.layout = layout;
  kv.pages.page_size = page_size;
  kv.pages.indptr = pt.indptr;
  kv.pages.last_page_len = pt.last;
  for (std::int64_t i = 0; i < used; ++i) kv.pages.indices.push_back(renum.at(pt.indices[static_cast<std::size_t>(i)]));
  std::vector<std::int64_t> shape = full;
  shape[0] = static_cast<std::int64_t>(rows.size());
  if (ca.stacked) {
    Tensor t = in.load(ca.kv, rows);
    t.shape = shape;
    kv.kv_stacked = std::move(t);
  } else {
    kv.k = in.load(ca.k, rows);
    kv.v = in.load(ca.v, rows);
    kv.k.shape = kv.v.shape = shape;
  }
  kept = fmt::format("{}: {} of {} pages kept", name, rows.size(), P);
  return kv;
}

// ---- scalars as FlashInfer resolves them ---------------------------------------------------------------------

// sm_scale the kernel receives: (sm_scale or 1/sqrt(head_dim)) computed in double, times q_scale and k_scale
// where FlashInfer folds them, rounded to float32.
double kernel_sm_scale(std::optional<double> sm, int head_dim, std::optional<double> q_scale, std::optional<double> k_scale) {
  double s = sm ? *sm : 1.0 / std::sqrt(static_cast<double>(head_dim));
  if (q_scale) s *= *q_scale;
  if (k_scale) s *= *k_scale;
  return static_cast<double>(as_f32(s));
}

PosEncoding pos_mode(const Call& c, const std::string& arg, const std::optional<std::string>& s) {
  std::string m = s.value_or("NONE");
  if (m == "NONE") return PosEncoding::none;
  if (m == "ROPE_LLAMA") return PosEncoding::rope_llama;
  if (m == "ALIBI") return PosEncoding::alibi;
  c.fail_file("metadata.jsonl", "argument '" + arg + "' is '" + m + "' (FlashInfer accepts NONE, ROPE_LLAMA, ALIBI)");
}

Layout layout_arg(const Call& c, const std::string& arg, const std::optional<std::string>& s) {
  std::string m = s.value_or("NHD");
  if (m == "NHD") return Layout::NHD;
  if (m == "HND") return Layout::HND;
  c.fail_file("metadata.jsonl", "argument '" + arg + "' is '" + m + "' (FlashInfer accepts NHD, HND)");
}

int window(std::optional<std::int64_t> w) { return w && *w >= 0 ? static_cast<int>(*w) : -1; }  // negative: no window

// A scale argument must be a Python number (FlashInfer multiplies sm_scale by it); tensors are not modelled.
std::optional<double> scale_arg(const In& in, const std::string& name) {
  const Value& v = in.value(name);
  if (v.kind == Value::tensor || v.kind == Value::tuple_of_tensors)
    throw Unsupported("argument '" + name + "' is a tensor (per-head or device scales are not modelled)");
  return in.a.number(name);
}

void require_none(const In& in, std::initializer_list<const char*> names, const std::string& why_prefix = "") {
  for (const char* n : names)
    if (!in.value(n).is_none()) throw Unsupported(why_prefix + "argument '" + std::string(n) + "' is given (not modelled)");
}

// Packs a bool mask [bits] little-endian into ceil(bits/8) bytes (numpy.packbits(bitorder="little")).
std::vector<std::uint8_t> packbits(const std::uint8_t* bits, std::int64_t n) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>((n + 7) / 8), 0);
  for (std::int64_t i = 0; i < n; ++i)
    if (bits[i]) out[static_cast<std::size_t>(i / 8)] |= static_cast<std::uint8_t>(1u << (i % 8));
  return out;
}

// ---- wrappers, their state, the cases ------------------------------------------------------------------------

struct Wrapper {
  Family family = Family::other;
  int index = -1;
  const Call* init = nullptr;
  std::shared_ptr<Args> init_args;
  const Call* plan = nullptr;
  std::shared_ptr<Args> plan_args;
  int runs_since_plan = 0;
};

struct Built {
  Case c;
  KernelOutputs obs;
  std::map<std::string, std::string> facts;
  std::string kernel_name;
};

LayoutChoice wrapper_layout(const Wrapper& w, const DumpImportOptions& o, const CacheArg& ca, int ps, int hkv, const Call& run) {
  if (w.init) {
    auto l = w.init_args->text("kv_layout");
    return {layout_arg(*w.init, "kv_layout", l), "__init__ (" + w.init->folder + ")"};
  }
  if (o.kv_layout) return {*o.kv_layout, "--kv-layout"};
  auto [a, b] = inner_dims(ca);
  if (ca.shortcut) return {Layout::NHD, "page_size 1 (NHD and HND coincide)"};
  if (ps != hkv) {
    if (a == ps && b == hkv) return {Layout::NHD, fmt::format("cache shape (page_size {} before {} kv heads; __init__ not in the dump)", ps, hkv)};
    if (a == hkv && b == ps) return {Layout::HND, fmt::format("cache shape ({} kv heads before page_size {}; __init__ not in the dump)", hkv, ps)};
    return {Layout::NHD, "?"};  // gather_pages reports the mismatch
  }
  run.fail(fmt::format("the cache layout is unknown: the wrapper's __init__ is not in the dump and page_size = num_kv_heads = {}, "
                       "so its shape does not tell NHD from HND; pass --kv-layout NHD or HND", ps));
}

void observe(const Call& c, KernelOutputs& o, SideKind side, const char* out_key, const char* lse_key) {
  if (!c.outputs) return;
  auto get = [&](const char* k) -> std::optional<Tensor> {
    if (!k) return std::nullopt;
    if (!c.outputs->has(k))
      c.fail_file("outputs.safetensors", std::string("tensor '") + k + "' is not in the file (" +
                                             std::to_string(c.outputs->header().tensors.size()) + " tensors there)");
    try {
      return safetensors::to_tensor(*c.outputs, k);
    } catch (const safetensors::SafetensorsError& e) {
      c.fail_file("outputs.safetensors", e.what());
    }
  };
  o.out(side) = get(out_key);
  o.lse(side) = get(lse_key);
}

void require_outputs(const Call& c) {
  if (c.status == "completed" && !c.outputs)
    c.fail_file("outputs.safetensors", "missing although the call completed (execution_status 'completed')");
}

void base_case(Case& k, const Tensor& q, DType kv, DType out, int hq, int hkv, int d) {
  k.num_qo_heads = hq;
  k.num_kv_heads = hkv;
  k.head_dim = d;
  k.dtype_q = q.dtype;
  k.dtype_kv = kv;
  k.dtype_o = out;
  k.lse_base = LseBase::base2;
  k.fp8_overflow = Fp8Overflow::saturate;
  k.seed = 0;
  k.distribution = "flashinfer-dump";
}

void check_q(const In& in, const std::string& name, const Tensor& q, std::int64_t rows, int hq, int d, const std::string& by) {
  if (q.shape.size() != 3 || (rows >= 0 && q.shape[0] != rows) || q.shape[1] != hq || q.shape[2] != d)
    in.c.fail_file("inputs.safetensors",
                   fmt::format("tensor '{}' ({}): mismatched shapes: {} gives [{}, {}, {}], the tensor is {}", in.key(name), name, by,
                               rows >= 0 ? std::to_string(rows) : std::string("rows"), hq, d, q.shape_string()));
}

DType out_dtype(const Call& c, const char* key, DType fallback) {
  if (c.outputs && c.outputs->has(key)) {
    try {
      return safetensors::to_tensor(*c.outputs, key).dtype;
    } catch (const safetensors::SafetensorsError& e) {
      c.fail_file("outputs.safetensors", e.what());
    }
  }
  return fallback;
}

void note_ignored(const In& in, Built& b, std::initializer_list<const char*> names, const char* why) {
  std::string s;
  for (const char* n : names)
    if (in.a.given(n)) s += (s.empty() ? "" : ", ") + std::string(n);
  if (!s.empty()) b.facts["ignored_by_flashinfer"] = s + " (" + why + ")";
}

// PODWithPagedKVCacheWrapper.run (pod.py:453-725): prefill options from run, decode options from plan.
Built build_pod(const Call& run, const Args& ra, const Wrapper& w, const DumpImportOptions& o) {
  In in{run, ra};
  const Call& pc = *w.plan;
  const Args& pa = *w.plan_args;
  Built b;
  b.kernel_name = "flashinfer-pod";
  if (ra.boolean("use_fp16_qk_reduction")) throw Unsupported("use_fp16_qk_reduction=True (not modelled)");
  if (!ra.extra_positional().empty()) throw Unsupported("extra positional arguments to run");
  const int hq = static_cast<int>(pa.integer("num_qo_heads").value_or(0));
  const int hkv = static_cast<int>(pa.integer("num_kv_heads").value_or(0));
  const int d = static_cast<int>(pa.integer("head_dim").value_or(0));
  const int ps = static_cast<int>(pa.integer("page_size").value_or(0));
  const std::string by = "plan '" + pc.folder + "'";
  PageTableIn pt{Sub::ints(pc, pa, "indptr"), Sub::ints(pc, pa, "indices"), Sub::ints(pc, pa, "last_page_len"), by};
  const std::int64_t batch = static_cast<std::int64_t>(pt.last.size());

  Tensor q_p = in.tensor("q_p");
  check_q(in, "q_p", q_p, -1, hq, d, by);
  Tensor q_d = in.tensor("q_d");
  check_q(in, "q_d", q_d, batch, hq, d, by);
  if (q_p.dtype != q_d.dtype) throw Unsupported("q_p and q_d have different dtypes (FlashInfer's POD has one)");

  Side p;
  p.q = q_p;
  p.qo_indptr = {0, static_cast<std::int32_t>(q_p.shape[0])};
  p.kv.paged = false;
  p.kv.layout = layout_arg(run, "kv_layout_p", ra.text("kv_layout_p"));
  p.kv.k = in.tensor("k_p");
  p.kv.v = in.tensor("v_p");
  if (p.kv.k.shape != p.kv.v.shape)
    run.fail_file("inputs.safetensors", "tensors '" + in.key("k_p") + "' and '" + in.key("v_p") + "': mismatched shapes " +
                                            p.kv.k.shape_string() + " and " + p.kv.v.shape_string());
  if (p.kv.k.shape.size() != 3)
    run.fail_file("inputs.safetensors", "tensor '" + in.key("k_p") + "' (k_p): expected 3-D, found " + p.kv.k.shape_string());
  const std::int64_t kv_len = p.kv.layout == Layout::NHD ? p.kv.k.shape[0] : p.kv.k.shape[1];
  SideParams& pp = p.params;
  if (!in.value("packed_custom_mask_p").is_none()) {
    Tensor m = in.tensor("packed_custom_mask_p");
    const std::int64_t need = (q_p.shape[0] * kv_len + 7) / 8;
    if (m.dtype != DType::uint8 || static_cast<std::int64_t>(m.bytes.size()) < need)
      run.fail_file("inputs.safetensors", fmt::format("tensor '{}' (packed_custom_mask_p): expected at least {} uint8 bytes, found {} {}",
                                                      in.key("packed_custom_mask_p"), need, dtype_name(m.dtype), m.shape_string()));
    pp.mask_mode = MaskMode::custom;
    pp.custom_mask.assign(m.bytes.begin(), m.bytes.begin() + need);
    pp.custom_mask_indptr = {0, need};
  } else if (!in.value("custom_mask_p").is_none()) {
    Tensor m = in.tensor("custom_mask_p");
    if (m.numel() != q_p.shape[0] * kv_len)
      run.fail_file("inputs.safetensors", fmt::format("tensor '{}' (custom_mask_p): mismatched shapes: expected [{}, {}], found {}",
                                                      in.key("custom_mask_p"), q_p.shape[0], kv_len, m.shape_string()));
    pp.mask_mode = MaskMode::custom;
    pp.custom_mask = packbits(m.bytes.data(), m.numel());
    pp.custom_mask_indptr = {0, static_cast<std::int64_t>(pp.custom_mask.size())};
  } else {
    pp.mask_mode = ra.boolean("causal_p") ? MaskMode::causal : MaskMode::none;
  }
  pp.window_left = window(ra.integer("window_left_p"));
  pp.sm_scale = kernel_sm_scale(ra.number("sm_scale_p"), static_cast<int>(q_p.shape[2]), std::nullopt, std::nullopt);
  pp.pos_encoding = pos_mode(run, "pos_encoding_mode_p", ra.text("pos_encoding_mode_p"));
  pp.rope_scale = ra.number("rope_scale_p").value_or(1.0);
  pp.rope_theta = ra.number("rope_theta_p").value_or(1e4);

  const CacheArg ca = cache_arg(in, "paged_kv_cache_d");
  const LayoutChoice lc = wrapper_layout(w, o, ca, ps, hkv, run);
  Side dd;
  dd.q = q_d;
  dd.qo_indptr = uniform_indptr(batch);
  std::string kept;
  dd.kv = gather_pages(in, ca, lc.layout, pt, ps, hkv, d, "paged_kv_cache_d", kept);
  SideParams& dp = dd.params;
  dp.mask_mode = MaskMode::none;  // decode is NON_CAUSAL (pod.py:709)
  dp.window_left = window(pa.integer("window_left"));
  dp.pos_encoding = pos_mode(pc, "pos_encoding_mode", pa.text("pos_encoding_mode"));
  dp.rope_scale = pa.number("rope_scale").value_or(1.0);
  dp.rope_theta = pa.number("rope_theta").value_or(1e4);
  dp.sm_scale = kernel_sm_scale(pa.number("sm_scale"), static_cast<int>(q_d.shape[2]), scale_arg(in, "q_scale"), scale_arg(in, "k_scale"));
  if (auto vs = scale_arg(in, "v_scale")) dp.v_scale = static_cast<double>(as_f32(*vs));  // out_d *= v_scale (pod.py:722)

  const DType kvt = ca.stacked ? dd.kv.kv_stacked->dtype : dd.kv.k.dtype;
  if (p.kv.k.dtype != kvt) throw Unsupported("k_p and the decode cache have different dtypes (FlashInfer's POD has one)");
  base_case(b.c, q_p, kvt, out_dtype(run, "result_0", q_p.dtype), hq, hkv, d);
  b.c.prefill = std::move(p);
  b.c.decode = std::move(dd);
  require_outputs(run);
  observe(run, b.obs, SideKind::prefill, "result_0", nullptr);  // run returns (out_p, out_d); no LSE (SPEC §3.2)
  observe(run, b.obs, SideKind::decode, "result_1", nullptr);
  note_ignored(in, b, {"custom_mask_d", "packed_custom_mask_d", "causal_d", "kv_layout_d", "pos_encoding_mode_d", "sm_scale_d",
                       "window_left_d", "rope_scale_d", "rope_theta_d"},
               "single POD takes the decode options from plan and the layout from __init__");
  if (ra.boolean("return_lse_p") || ra.boolean("return_lse_d")) b.facts["lse"] = "return_lse_* given, but single POD never returns LSE";
  b.facts["layout_source"] = lc.source;
  b.facts["pages"] = kept;
  return b;
}

// BatchPODWithPagedKVCacheWrapper.run (pod.py:1127-1354): every option from plan; decode non-causal.
Built build_batch_pod(const Call& run, const Args& ra, const Wrapper& w, const DumpImportOptions& o) {
  In in{run, ra};
  const Call& pc = *w.plan;
  const Args& pa = *w.plan_args;
  Built b;
  b.kernel_name = "flashinfer-batch-pod";
  if (!in.value("custom_mask_p").is_none() || !in.value("packed_custom_mask_p").is_none())
    throw Unsupported("BatchPOD's custom mask is broken in FlashInfer (whole-tensor packbits, no mask_indptr; SPEC §2.5)");
  if (ra.boolean("use_fp16_qk_reduction")) throw Unsupported("use_fp16_qk_reduction=True (not modelled)");
  const int hq = static_cast<int>(pa.integer("num_qo_heads").value_or(0));
  const int hkv = static_cast<int>(pa.integer("num_kv_heads").value_or(0));
  const int d = static_cast<int>(pa.integer("head_dim").value_or(0));
  const int ps = static_cast<int>(pa.integer("page_size").value_or(0));
  const std::string by = "plan '" + pc.folder + "'";
  const int wl = window(pa.integer("window_left"));
  const PosEncoding pos = pos_mode(pc, "pos_encoding_mode", pa.text("pos_encoding_mode"));
  const auto sm = pa.number("sm_scale");
  std::string kept_all;
  LayoutChoice lc;
  auto side = [&](const char* sfx) {
    const std::string s(sfx);
    PageTableIn pt{Sub::ints(pc, pa, "kv_indptr" + s), Sub::ints(pc, pa, "kv_indices" + s), Sub::ints(pc, pa, "last_page_len" + s), by};
    Side x;
    x.qo_indptr = Sub::ints(pc, pa, "qo_indptr" + s);
    if (x.qo_indptr.empty() || x.qo_indptr[0] != 0) throw Unsupported("qo_indptr" + s + " does not start at 0");
    x.q = in.tensor("q" + s);
    check_q(in, "q" + s, x.q, x.qo_indptr.back(), hq, d, by);
    const CacheArg ca = cache_arg(in, "paged_kv_cache" + s);
    lc = wrapper_layout(w, o, ca, ps, hkv, run);
    std::string kept;
    x.kv = gather_pages(in, ca, lc.layout, pt, ps, hkv, d, "paged_kv_cache" + s, kept);
    kept_all += (kept_all.empty() ? "" : "; ") + kept;
    x.params.window_left = wl;
    x.params.pos_encoding = pos;
    x.params.rope_scale = pa.number("rope_scale").value_or(1.0);
    x.params.rope_theta = pa.number("rope_theta").value_or(1e4);
    return x;
  };
  Side p = side("_p");
  Side dd = side("_d");
  p.params.mask_mode = ra.boolean("causal_p") ? MaskMode::causal : MaskMode::none;
  p.params.sm_scale = kernel_sm_scale(sm, static_cast<int>(p.q.shape[2]), std::nullopt, std::nullopt);
  dd.params.mask_mode = MaskMode::none;
  dd.params.sm_scale = kernel_sm_scale(sm, static_cast<int>(dd.q.shape[2]), scale_arg(in, "q_scale"), scale_arg(in, "k_scale"));
  if (auto vs = scale_arg(in, "v_scale")) dd.params.v_scale = static_cast<double>(as_f32(*vs));
  if (p.q.dtype != dd.q.dtype) throw Unsupported("q_p and q_d have different dtypes (FlashInfer's POD has one)");
  const DType kvt = p.kv.stacked() ? p.kv.kv_stacked->dtype : p.kv.k.dtype;
  const DType kvd = dd.kv.stacked() ? dd.kv.kv_stacked->dtype : dd.kv.k.dtype;
  if (kvt != kvd) throw Unsupported("the prefill and decode caches have different dtypes (FlashInfer's POD has one)");
  const bool lse = ra.boolean("return_lse");
  base_case(b.c, p.q, kvt, out_dtype(run, lse ? "result_0__0" : "result_0", p.q.dtype), hq, hkv, d);
  b.c.prefill = std::move(p);
  b.c.decode = std::move(dd);
  require_outputs(run);
  // ((out_p, out_d), (lse_p, lse_d)) with return_lse (pod.py:1354; the docstring's nesting is wrong, SPEC §3.2)
  observe(run, b.obs, SideKind::prefill, lse ? "result_0__0" : "result_0", lse ? "result_1__0" : nullptr);
  observe(run, b.obs, SideKind::decode, lse ? "result_0__1" : "result_1", lse ? "result_1__1" : nullptr);
  b.facts["layout_source"] = lc.source;
  b.facts["pages"] = kept_all;
  return b;
}

void check_backend(const std::optional<std::string>& backend, const char* who) {
  const std::string s = backend.value_or("auto");
  if (s != "auto" && s != "fa2" && s != "fa3")
    throw Unsupported(std::string(who) + " backend '" + s + "' (podcheck models FlashInfer's fa2/fa3 attention)");
}

// single_prefill_with_kv_cache (prefill.py:1186-1467).
Built build_single_prefill(const Call& call, const Args& a) {
  In in{call, a};
  Built b;
  b.kernel_name = "flashinfer-single-prefill";
  require_none(in, {"scale_q", "scale_k", "scale_v", "kv_cache_sf"});
  if (a.boolean("use_fp16_qk_reduction")) throw Unsupported("use_fp16_qk_reduction=True (not modelled)");
  check_backend(a.text("backend"), "single_prefill_with_kv_cache");
  Tensor q = in.tensor("q");
  if (is_float8(q.dtype)) throw Unsupported("fp8 q (the FA3 fp8 path is not modelled)");
  if (q.shape.size() != 3) call.fail_file("inputs.safetensors", "tensor '" + in.key("q") + "' (q): expected 3-D, found " + q.shape_string());
  Side s;
  s.q = q;
  s.qo_indptr = {0, static_cast<std::int32_t>(q.shape[0])};
  s.kv.paged = false;
  s.kv.layout = layout_arg(call, "kv_layout", a.text("kv_layout"));
  s.kv.k = in.tensor("k");
  s.kv.v = in.tensor("v");
  if (s.kv.k.shape.size() != 3 || s.kv.k.shape != s.kv.v.shape)
    call.fail_file("inputs.safetensors", "tensors '" + in.key("k") + "' and '" + in.key("v") + "': mismatched shapes " +
                                             s.kv.k.shape_string() + " and " + s.kv.v.shape_string() + " (expected equal 3-D)");
  const int hkv = static_cast<int>(s.kv.layout == Layout::NHD ? s.kv.k.shape[1] : s.kv.k.shape[0]);
  const std::int64_t kv_len = s.kv.layout == Layout::NHD ? s.kv.k.shape[0] : s.kv.k.shape[1];
  if (s.kv.k.shape[2] != q.shape[2])
    throw Unsupported("head_dim of v/k differs from q's (head_dim_vo != head_dim_qk is not modelled)");
  SideParams& sp = s.params;
  if (!in.value("packed_custom_mask").is_none()) {
    Tensor m = in.tensor("packed_custom_mask");
    const std::int64_t need = (q.shape[0] * kv_len + 7) / 8;
    if (m.dtype != DType::uint8 || static_cast<std::int64_t>(m.bytes.size()) < need)
      call.fail_file("inputs.safetensors", fmt::format("tensor '{}' (packed_custom_mask): expected at least {} uint8 bytes, found {}",
                                                       in.key("packed_custom_mask"), need, m.shape_string()));
    sp.mask_mode = MaskMode::custom;
    sp.custom_mask.assign(m.bytes.begin(), m.bytes.begin() + need);
    sp.custom_mask_indptr = {0, need};
  } else if (!in.value("custom_mask").is_none()) {
    Tensor m = in.tensor("custom_mask");
    if (m.numel() != q.shape[0] * kv_len)
      call.fail_file("inputs.safetensors", fmt::format("tensor '{}' (custom_mask): mismatched shapes: expected [{}, {}], found {}",
                                                       in.key("custom_mask"), q.shape[0], kv_len, m.shape_string()));
    sp.mask_mode = MaskMode::custom;
    sp.custom_mask = packbits(m.bytes.data(), m.numel());
    sp.custom_mask_indptr = {0, static_cast<std::int64_t>(sp.custom_mask.size())};
  } else {
    sp.mask_mode = a.boolean("causal") ? MaskMode::causal : MaskMode::none;
  }
  sp.window_left = window(a.integer("window_left"));
  sp.logits_soft_cap = static_cast<double>(as_f32(a.number("logits_soft_cap").value_or(0.0)));
  sp.pos_encoding = pos_mode(call, "pos_encoding_mode", a.text("pos_encoding_mode"));
  sp.rope_scale = a.number("rope_scale").value_or(1.0);
  sp.rope_theta = a.number("rope_theta").value_or(1e4);
  // sm_scale *= k_scale (no q_scale here, prefill.py:1414); v_scale after the kernel unless it is the float 1.0
  sp.sm_scale = kernel_sm_scale(a.number("sm_scale"), static_cast<int>(q.shape[2]), std::nullopt, scale_arg(in, "k_scale"));
  if (auto vs = scale_arg(in, "v_scale"); vs && *vs != 1.0) sp.v_scale = static_cast<double>(as_f32(*vs));
  const bool lse = a.boolean("return_lse");
  base_case(b.c, q, s.kv.k.dtype, out_dtype(call, lse ? "result_0" : "result", q.dtype), static_cast<int>(q.shape[1]), hkv,
            static_cast<int>(q.shape[2]));
  b.c.prefill = std::move(s);
  require_outputs(call);
  observe(call, b.obs, SideKind::prefill, lse ? "result_0" : "result", lse ? "result_1" : nullptr);
  return b;
}

// What BatchPrefillWithPagedKVCacheWrapper and BatchDecodeWithPagedKVCacheWrapper both take from plan (window,
// soft cap, position encoding, sm_scale with q_scale and k_scale folded in) and run (v_scale after the kernel
// unless it is the float 1.0; a run window_left other than plan's is refused).
void paged_one_sided_options(SideParams& sp, const Side& s, const Call& pc, const Args& pa, const Args& ra, const In& in) {
  sp.window_left = window(pa.integer("window_left"));
  if (auto rw = ra.integer("window_left"); rw && window(rw) != sp.window_left)
    throw Unsupported("run window_left differs from plan's (only trtllm-gen honours it)");
  sp.logits_soft_cap = static_cast<double>(as_f32(pa.number("logits_soft_cap").value_or(0.0)));
  sp.pos_encoding = pos_mode(pc, "pos_encoding_mode", pa.text("pos_encoding_mode"));
  sp.rope_scale = pa.number("rope_scale").value_or(1.0);
  sp.rope_theta = pa.number("rope_theta").value_or(1e4);
  sp.sm_scale = kernel_sm_scale(pa.number("sm_scale"), static_cast<int>(s.q.shape[2]), scale_arg(in, "q_scale"), scale_arg(in, "k_scale"));
  if (auto vs = scale_arg(in, "v_scale"); vs && *vs != 1.0) sp.v_scale = static_cast<double>(as_f32(*vs));
}

// The end of both paged one-sided cases: dtypes, the side, the outputs observed ("result", or "result_0" and
// the LSE "result_1" with return_lse), and where the layout and the kept pages came from.
void finish_paged_one_sided(Built& b, Side s, SideKind kind, const Call& run, const Args& ra, int hq, int hkv, int d,
                            const LayoutChoice& lc, const std::string& kept) {
  const bool lse = ra.boolean("return_lse");
  const DType kvt = s.kv.stacked() ? s.kv.kv_stacked->dtype : s.kv.k.dtype;
  base_case(b.c, s.q, kvt, out_dtype(run, lse ? "result_0" : "result", s.q.dtype), hq, hkv, d);
  (kind == SideKind::prefill ? b.c.prefill : b.c.decode) = std::move(s);
  require_outputs(run);
  observe(run, b.obs, kind, lse ? "result_0" : "result", lse ? "result_1" : nullptr);
  b.facts["layout_source"] = lc.source;
  b.facts["pages"] = kept;
}

// BatchPrefillWithPagedKVCacheWrapper.run (prefill.py:2696-3146): mask, window, soft cap, pos encoding, sm_scale
// from plan; q_scale and k_scale folded into sm_scale; v_scale after the kernel.
Built build_batch_prefill(const Call& run, const Args& ra, const Wrapper& w, const DumpImportOptions& o) {
  In in{run, ra};
  const Call& pc = *w.plan;
  const Args& pa = *w.plan_args;
  In pin{pc, pa};
  Built b;
  b.kernel_name = "flashinfer-batch-prefill";
  if (w.init) check_backend(w.init_args->text("backend"), "BatchPrefillWithPagedKVCacheWrapper");
  require_none(pin, {"prefix_len_ptr", "token_pos_in_items_ptr", "max_item_len_ptr", "seq_lens", "seq_lens_q", "block_tables"}, "plan: ");
  require_none(in, {"sinks", "kv_cache_sf", "skip_softmax_threshold_scale_factor"}, "run: ");
  if (!ra.extra_positional().empty()) throw Unsupported("extra positional arguments to run (fp8 scale tensors)");
  if (pa.boolean("use_fp16_qk_reduction")) throw Unsupported("use_fp16_qk_reduction=True (not modelled)");
  const int hq = static_cast<int>(pa.integer("num_qo_heads").value_or(0));
  const int hkv = static_cast<int>(pa.integer("num_kv_heads").value_or(0));
  const int d = static_cast<int>(pa.integer("head_dim_qk").value_or(0));
  if (auto vo = pa.integer("head_dim_vo"); vo && *vo != d) throw Unsupported("head_dim_vo != head_dim_qk (not modelled)");
  const int ps = static_cast<int>(pa.integer("page_size").value_or(0));
  const std::string by = "plan '" + pc.folder + "'";
  PageTableIn pt{Sub::ints(pc, pa, "paged_kv_indptr"), Sub::ints(pc, pa, "paged_kv_indices"), Sub::ints(pc, pa, "paged_kv_last_page_len"), by};
  Side s;
  s.qo_indptr = Sub::ints(pc, pa, "qo_indptr");
  if (s.qo_indptr.empty() || s.qo_indptr[0] != 0) throw Unsupported("qo_indptr does not start at 0");
  s.q = in.tensor("q");
  check_q(in, "q", s.q, s.qo_indptr.back(), hq, d, by);
  const CacheArg ca = cache_arg(in, "paged_kv_cache");
  const LayoutChoice lc = wrapper_layout(w, o, ca, ps, hkv, run);
  std::string kept;
  s.kv = gather_pages(in, ca, lc.layout, pt, ps, hkv, d, "paged_kv_cache", kept);
  SideParams& sp = s.params;
  const int R = s.num_requests();
  auto kv_len = [&](int r) -> std::int64_t {
    const std::int64_t n = pt.indptr[r + 1] - pt.indptr[r];
    return n == 0 ? 0 : (n - 1) * ps + pt.last[static_cast<std::size_t>(r)];
  };
  if (!pin.value("packed_custom_mask").is_none()) {
    if (R > 1)
      throw Unsupported("plan: packed_custom_mask with more than one request (FlashInfer then offsets each request's mask by "
                        "its bit count read as bytes, prefill.py plan)");
    Tensor m = pin.tensor("packed_custom_mask");
    const std::int64_t need = (s.qo_len(0) * kv_len(0) + 7) / 8;
    if (m.dtype != DType::uint8 || static_cast<std::int64_t>(m.bytes.size()) < need)
      pc.fail_file("inputs.safetensors", fmt::format("tensor '{}' (packed_custom_mask): expected at least {} uint8 bytes, found {}",
                                                     pin.key("packed_custom_mask"), need, m.shape_string()));
    sp.mask_mode = MaskMode::custom;
    sp.custom_mask.assign(m.bytes.begin(), m.bytes.begin() + need);
    sp.custom_mask_indptr = {0, need};
  } else if (!pin.value("custom_mask").is_none()) {
    Tensor m = pin.tensor("custom_mask");
    std::int64_t total = 0;
    for (int r = 0; r < R; ++r) {
      if (pt.indptr[r + 1] == pt.indptr[r]) throw Unsupported("plan: custom_mask with a request that has no KV page");
      total += s.qo_len(r) * kv_len(r);
    }
    if (m.numel() != total)
      pc.fail_file("inputs.safetensors", fmt::format("tensor '{}' (custom_mask): mismatched shapes: the requests need {} mask bits, found {}",
                                                     pin.key("custom_mask"), total, m.shape_string()));
    sp.mask_mode = MaskMode::custom;
    sp.custom_mask_indptr = {0};
    std::int64_t bit = 0;
    for (int r = 0; r < R; ++r) {  // segment_packbits: one byte-aligned segment per request
      const std::int64_t n = s.qo_len(r) * kv_len(r);
      auto seg = packbits(m.bytes.data() + bit, n);
      sp.custom_mask.insert(sp.custom_mask.end(), seg.begin(), seg.end());
      sp.custom_mask_indptr.push_back(static_cast<std::int64_t>(sp.custom_mask.size()));
      bit += n;
    }
  } else {
    sp.mask_mode = pa.boolean("causal") ? MaskMode::causal : MaskMode::none;
  }
  paged_one_sided_options(sp, s, pc, pa, ra, in);
  finish_paged_one_sided(b, std::move(s), SideKind::prefill, run, ra, hq, hkv, d, lc, kept);
  return b;
}

// BatchDecodeWithPagedKVCacheWrapper.run (decode.py:1851-2295); plan options through _plan_impl.
Built build_batch_decode(const Call& run, const Args& ra, const Wrapper& w, const DumpImportOptions& o) {
  In in{run, ra};
  const Call& pc = *w.plan;
  const Args& pa = *w.plan_args;
  In pin{pc, pa};
  Built b;
  b.kernel_name = "flashinfer-batch-decode";
  if (w.init) {
    check_backend(w.init_args->text("backend"), "BatchDecodeWithPagedKVCacheWrapper");
    if (w.init_args->boolean("use_tensor_cores")) b.facts["use_tensor_cores"] = "True";
  }
  require_none(pin, {"block_tables", "seq_lens"}, "plan: ");
  require_none(in, {"sinks", "kv_cache_sf", "skip_softmax_threshold_scale_factor"}, "run: ");
  if (!ra.extra_positional().empty()) throw Unsupported("extra positional arguments to run (fp8 scale tensors)");
  if (pa.integer("window_right").value_or(0) != 0) throw Unsupported("plan window_right != 0 (cute-dsl only)");
  const int hq = static_cast<int>(pa.integer("num_qo_heads").value_or(0));
  const int hkv = static_cast<int>(pa.integer("num_kv_heads").value_or(0));
  const int d = static_cast<int>(pa.integer("head_dim").value_or(0));
  const int ps = static_cast<int>(pa.integer("page_size").value_or(0));
  const std::string by = "plan '" + pc.folder + "'";
  PageTableIn pt{Sub::ints(pc, pa, "indptr"), Sub::ints(pc, pa, "indices"), Sub::ints(pc, pa, "last_page_len"), by};
  const std::int64_t batch = static_cast<std::int64_t>(pt.last.size());
  const std::int64_t qlen = pa.integer("q_len_per_req").value_or(1);
  if (qlen < 1) run.fail("plan q_len_per_req < 1");
  Side s;
  s.q = in.tensor("q");
  check_q(in, "q", s.q, batch * qlen, hq, d, by);
  s.qo_indptr = uniform_indptr(batch, qlen);
  const CacheArg ca = cache_arg(in, "paged_kv_cache");
  const LayoutChoice lc = wrapper_layout(w, o, ca, ps, hkv, run);
  std::string kept;
  s.kv = gather_pages(in, ca, lc.layout, pt, ps, hkv, d, "paged_kv_cache", kept);
  SideParams& sp = s.params;
  sp.mask_mode = qlen > 1 ? MaskMode::causal : MaskMode::none;  // causal within a request's block (decode.py:2196)
  paged_one_sided_options(sp, s, pc, pa, ra, in);
  finish_paged_one_sided(b, std::move(s), SideKind::decode, run, ra, hq, hkv, d, lc, kept);
  return b;
}

// Every input element the case reads must be finite (the trace reader refuses anything else).
void check_finite_inputs(const Call& c, const Case& k) {
  for (SideKind sk : {SideKind::prefill, SideKind::decode}) {
    const Side* s = k.side(sk);
    if (!s) continue;
    for (std::int64_t i = 0; i < s->q.numel(); ++i)
      if (!std::isfinite(s->q.get(i)))
        c.fail_file("inputs.safetensors", fmt::format("{} q: element {} is NaN or infinite", side_name(sk), i));
    for (int r = 0; r < s->num_requests(); ++r)
      for (std::int64_t t = 0; t < s->kv_len(r); ++t) {
        auto [page, slot] = s->locate(r, t);
        for (int h = 0; h < k.num_kv_heads; ++h)
          for (bool is_v : {false, true}) {
            const Tensor& kt = is_v ? s->kv.v_tensor() : s->kv.k_tensor();
            const std::int64_t off = s->kv.offset(is_v, page, slot, h);
            for (int dd = 0; dd < k.head_dim; ++dd)
              if (!std::isfinite(kt.get(off + dd)))
                c.fail_file("inputs.safetensors", fmt::format("{} {}: request {} token {} kv head {} is NaN or infinite", side_name(sk),
                                                              is_v ? "V" : "K", r, t, h));
          }
      }
  }
}

std::string versions_text(const nlohmann::json& rec) {
  if (!rec.contains("versions") || !rec["versions"].is_object()) return "";
  std::string s;
  for (auto it = rec["versions"].begin(); it != rec["versions"].end(); ++it) {
    std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    v = v.substr(0, v.find(' '));  // python's sys.version: keep the version number
    s += (s.empty() ? "" : ", ") + it.key() + "=" + v;
  }
  return s;
}

std::string iso_date(const std::string& ts) {  // "20260101_120000_123" -> "2026-01-01T12:00:00.123" (local time)
  if (ts.size() != 19 || ts[8] != '_' || ts[15] != '_') return ts;
  return ts.substr(0, 4) + "-" + ts.substr(4, 2) + "-" + ts.substr(6, 2) + "T" + ts.substr(9, 2) + ":" + ts.substr(11, 2) + ":" +
         ts.substr(13, 2) + "." + ts.substr(16, 3);
}

constexpr const char* kInfo = "fi_dump.";

void store_info(Provenance& p, const DumpCallInfo& i) {
  auto& s = p.scheduling;
  s[std::string(kInfo) + "function"] = i.function;
  s[std::string(kInfo) + "call_sequence"] = std::to_string(i.call_sequence);
  s[std::string(kInfo) + "timestamp"] = i.timestamp;
  s[std::string(kInfo) + "process_id"] = std::to_string(i.process_id);
  s[std::string(kInfo) + "self_id"] = i.self_id;
  s[std::string(kInfo) + "wrapper"] = std::to_string(i.wrapper);
  s[std::string(kInfo) + "order"] = std::to_string(i.order);
  s[std::string(kInfo) + "layer"] = std::to_string(i.layer);
  s[std::string(kInfo) + "plan"] = i.plan;
  s[std::string(kInfo) + "folder"] = i.folder;
  s[std::string(kInfo) + "flush"] = std::to_string(i.flush);
  s[std::string(kInfo) + "status"] = i.status;
  s[std::string(kInfo) + "versions"] = i.versions;
}

struct Importer {
  explicit Importer(const DumpImportOptions& o) : opt(o) {}
  const DumpImportOptions& opt;
  DumpImportResult result;
  std::map<std::string, int> ignored;  // function -> calls
  int next_wrapper = 0;
  std::int64_t base = 0;  // calls of the roots read before
  std::set<std::int64_t> pids;
  std::set<std::string> ids;

  void root(const dump::Root& r) {
    const std::vector<Call> calls = dump::read_calls(r);
    for (const auto& c : calls) pids.insert(c.process_id);
    std::map<std::pair<std::int64_t, std::string>, Wrapper> wrappers;
    std::vector<std::pair<std::size_t, Trace>> out;  // (call index, trace), ids fixed after all roots
    for (std::size_t ci = 0; ci < calls.size(); ++ci) {
      const Call& c = calls[ci];
      const Family fam = dump::family_of(c.klass, c.method);
      if (fam == Family::other) {
        ignored[c.function]++;
        continue;
      }
      if (c.status == "graph_capture_pending_flush" && !c.inputs) {
        result.notes.push_back("skipped " + c.display + ": captured in a CUDA graph and never flushed (no tensors were written)");
        continue;
      }
      if (fam != Family::single_prefill && !c.self_id) c.fail_file("metadata.jsonl", "a wrapper method's record has no self_id");
      const auto key = std::make_pair(c.process_id, c.self_id.value_or(""));
      auto bind = [&] { return std::make_shared<Args>(c, dump::signature(fam, c.method)); };
      if (c.method == "__init__") {
        Wrapper w;
        w.family = fam;
        w.index = next_wrapper++;
        w.init = &c;
        w.init_args = bind();
        wrappers[key] = w;
        continue;
      }
      if (c.method == "plan") {
        auto it = wrappers.find(key);
        if (it == wrappers.end() || it->second.family != fam) {  // no __init__ in the dump (or the id was reused)
          Wrapper w;
          w.family = fam;
          w.index = next_wrapper++;
          it = wrappers.insert_or_assign(key, w).first;
        }
        it->second.plan = &c;
        it->second.plan_args = bind();
        it->second.runs_since_plan = 0;
        continue;
      }
      DumpCallInfo info;
      info.function = c.function;
      info.call_sequence = c.call_sequence;
      info.timestamp = c.timestamp;
      info.process_id = c.process_id;
      info.self_id = c.self_id.value_or("");
      info.folder = c.folder;
      info.flush = c.flush;
      info.status = c.status;
      info.versions = versions_text(c.record);
      info.order = base + static_cast<std::int64_t>(c.order);
      Built b;
      try {
        std::shared_ptr<Args> args = bind();
        if (fam == Family::single_prefill) {
          b = build_single_prefill(c, *args);
        } else {
          auto it = wrappers.find(key);
          if (it == wrappers.end() || !it->second.plan || it->second.family != fam)
            c.fail(fmt::format("a run with no plan: no {}.plan of the same wrapper (pid {}, self_id {}) precedes it in the dump "
                               "(was plan left out by FLASHINFER_DUMP_INCLUDE / _EXCLUDE?)",
                               dump::family_class(fam), c.process_id, c.self_id.value_or("")));
          Wrapper& w = it->second;
          info.wrapper = w.index;
          info.plan = w.plan->folder;
          info.layer = w.runs_since_plan++;
          switch (fam) {
            case Family::pod: b = build_pod(c, *args, w, opt); break;
            case Family::batch_pod: b = build_batch_pod(c, *args, w, opt); break;
            case Family::batch_prefill: b = build_batch_prefill(c, *args, w, opt); break;
            case Family::batch_decode: b = build_batch_decode(c, *args, w, opt); break;
            default: break;
          }
          b.facts["plan_args"] = w.plan_args->given_summary();
          if (w.init) b.facts["init_args"] = w.init_args->given_summary();
        }
        b.facts["run_args"] = args->given_summary();
      } catch (const Unsupported& e) {
        const std::string msg = c.display + " (" + c.function + " call " + std::to_string(c.call_sequence) + "): not supported: " + e.what();
        if (!opt.skip_unsupported) throw FormatError("dump folder " + msg + " (--skip-unsupported imports the other calls)");
        result.notes.push_back("skipped " + msg);
        continue;
      }
      if (c.status != "completed")
        result.notes.push_back(c.display + ": execution_status '" + c.status + "': the call did not return, no outputs recorded");
      check_finite_inputs(c, b.c);
      Trace t;
      t.kase = std::move(b.c);
      t.observed = std::move(b.obs);
      // a call that raised or never returned: the kernel did not complete, whatever it left behind
      if (c.status != "completed")
        t.run = {RunStatus::launch_failed, "FlashInfer's API log says execution_status '" + c.status + "'"};
      Provenance& p = t.provenance;
      p.kernel_name = b.kernel_name;
      const auto& v = c.record.contains("versions") ? c.record["versions"] : nlohmann::json::object();
      const std::string fv = v.is_object() && v.contains("flashinfer") && v["flashinfer"].is_string() ? v["flashinfer"].get<std::string>() : "";
      p.kernel_version = fv.empty() || fv == "<unavailable>" ? "unknown" : "flashinfer@" + fv;
      p.date = iso_date(c.timestamp);
      p.source = "podcheck import flashinfer-dump: " + c.display;
      for (const auto& [k, val] : b.facts) p.scheduling[std::string(kInfo) + k] = val;
      store_info(p, info);
      out.emplace_back(ci, std::move(t));
    }
    for (auto& [ci, t] : out) pending.emplace_back(calls[ci].function, calls[ci].call_sequence, calls[ci].process_id, calls[ci].flush,
                                                   calls[ci].display, std::move(t));
    base += static_cast<std::int64_t>(calls.size());
  }

  struct Pending {
    std::string function;
    std::int64_t seq, pid;
    int flush;
    std::string display;
    Trace t;
    Pending(std::string f, std::int64_t s, std::int64_t p, int fl, std::string d, Trace tr)
        : function(std::move(f)), seq(s), pid(p), flush(fl), display(std::move(d)), t(std::move(tr)) {}
  };
  std::vector<Pending> pending;

  DumpImportResult finish() {
    for (auto& pc : pending) {
      std::string id = fmt::format("fi_dump_{}_call{:04d}", pc.function, pc.seq);
      if (pids.size() > 1) id += fmt::format("_pid{}", pc.pid);
      if (pc.flush >= 0) id += fmt::format("_flush{:04d}", pc.flush);
      if (!ids.insert(id).second)
        throw FormatError("case id '" + id + "' appears twice (again at '" + pc.display +
                          "'): import dumps of different sessions into separate traces");
      pc.t.kase.id = id;
      try {
        validate_case(pc.t.kase);
      } catch (const InvalidCase& e) {
        throw FormatError("dump folder '" + pc.display + "': the recorded call is not a valid case: " + e.what());
      }
      result.traces.push_back(std::move(pc.t));
    }
    if (!ignored.empty()) {
      std::string s = "ignored calls of functions podcheck does not import:";
      for (const auto& [f, n] : ignored) s += fmt::format(" {} ({})", f, n);
      result.notes.push_back(s);
    }
    return std::move(result);
  }
};

}  // namespace

DumpImportResult import_flashinfer_dump(const std::vector<std::string>& dirs, const DumpImportOptions& options) {
  Importer im(options);
  std::vector<dump::Root> roots;
  for (const auto& d : dirs) roots.push_back(dump::scan_root(d));
  for (const auto& r : roots) im.root(r);
  return im.finish();
}

DumpImportResult import_flashinfer_dump_memory(const std::string& root_name, const std::string& session_jsonl,
                                               const std::vector<DumpFolderInMemory>& folders, const DumpImportOptions& options) {
  dump::Root r;
  r.name = root_name;
  r.session_jsonl = session_jsonl;
  for (const auto& f : folders) {
    dump::Folder x;
    x.name = f.name;
    x.metadata_jsonl = f.metadata_jsonl;
    x.inputs = f.inputs;
    x.outputs = f.outputs;
    r.folders.push_back(std::move(x));
  }
  if (r.folders.empty()) throw FormatError("dump '" + root_name + "': no call folders");
  Importer im(options);
  im.root(r);
  return im.finish();
}

std::optional<DumpCallInfo> dump_call_info(const Trace& t) {
  const auto& s = t.provenance.scheduling;
  auto get = [&](const char* k) -> std::string {
    auto it = s.find(std::string(kInfo) + k);
    return it == s.end() ? std::string() : it->second;
  };
  if (get("function").empty()) return std::nullopt;
  auto num = [&](const char* k, std::int64_t d) -> std::int64_t {
    try {
      return std::stoll(get(k));
    } catch (const std::exception&) {
      return d;
    }
  };
  DumpCallInfo i;
  i.function = get("function");
  i.call_sequence = num("call_sequence", 0);
  i.timestamp = get("timestamp");
  i.process_id = num("process_id", 0);
  i.self_id = get("self_id");
  i.wrapper = static_cast<int>(num("wrapper", -1));
  i.order = num("order", 0);
  i.layer = static_cast<int>(num("layer", -1));
  i.plan = get("plan");
  i.folder = get("folder");
  i.flush = static_cast<int>(num("flush", -1));
  i.status = get("status");
  i.versions = get("versions");
  return i;
}

DumpReplaySummary summarize_dump_replay(const std::vector<Trace>& traces, const std::vector<validation::CaseResult>& results) {
  DumpReplaySummary s;
  std::map<std::string, std::vector<const validation::CaseResult*>> by_id;
  for (const auto& r : results) by_id[r.id].push_back(&r);
  for (const auto& t : traces) {
    auto info = dump_call_info(t);
    if (!info) continue;
    DumpReplaySummary::Call c;
    c.info = *info;
    c.id = t.kase.id;
    for (const auto* r : by_id[t.kase.id]) {
      if (!c.result) c.result = r;
      if (r->verdict == validation::Verdict::fail && !c.failed) {
        c.failed = true;
        c.result = r;
      }
    }
    if (info->status != "completed") c.failed = true;
    s.calls.push_back(std::move(c));
  }
  std::stable_sort(s.calls.begin(), s.calls.end(), [](const auto& a, const auto& b) { return a.info.order < b.info.order; });
  std::map<int, std::size_t> wi;
  for (std::size_t i = 0; i < s.calls.size(); ++i) {
    const auto& c = s.calls[i];
    if (c.failed && !s.first_failure) s.first_failure = i;
    auto it = wi.find(c.info.wrapper);
    if (it == wi.end()) {
      DumpReplaySummary::Wrapper w;
      w.index = c.info.wrapper;
      w.function_class = c.info.wrapper >= 0 ? c.info.function.substr(0, c.info.function.rfind('.')) : "functions";
      w.process_id = c.info.process_id;
      w.self_id = c.info.self_id;
      it = wi.emplace(c.info.wrapper, s.wrappers.size()).first;
      s.wrappers.push_back(w);
    }
    s.wrappers[it->second].calls.push_back(i);
  }
  return s;
}

std::vector<std::string> format_dump_summary(const DumpReplaySummary& s) {
  std::vector<std::string> out;
  if (s.calls.empty()) return out;
  auto tag = [](const DumpReplaySummary::Call& c) {
    if (c.info.status != "completed") return std::string("[DID NOT RETURN]");
    if (!c.result) return std::string("[NOT JUDGED]");
    return std::string(validation::verdict_tag(c.result->verdict));
  };
  auto where = [](const DumpReplaySummary::Call& c) {
    std::string w = fmt::format("#{} {} call {}", c.info.order, c.info.function, c.info.call_sequence);
    if (c.info.flush >= 0) w += fmt::format(" flush {}", c.info.flush);
    if (c.info.wrapper >= 0) w += fmt::format(" (wrapper {}, layer {})", c.info.wrapper, c.info.layer);
    return w;
  };
  if (s.first_failure) {
    const auto& c = s.calls[*s.first_failure];
    std::string detail;
    if (c.result) {
      if (const auto* h = c.result->headline(); h && h->worst) detail = ": " + h->name + " worst at " + h->worst->text();
      else if (!c.result->message.empty()) detail = ": " + c.result->message;
    } else if (c.info.status != "completed") {
      detail = ": the call did not return (execution_status '" + c.info.status + "')";
    }
    out.push_back("first failing call: " + where(c) + detail + " [" + c.info.folder + "]");
  } else {
    out.push_back(fmt::format("all {} calls of the capture pass", s.calls.size()));
  }
  for (const auto& w : s.wrappers) {
    std::string line = w.index >= 0 ? fmt::format("wrapper {} ({}, pid {}, self_id {}):", w.index, w.function_class, w.process_id, w.self_id)
                                    : std::string("functions:");
    std::string plan;
    for (std::size_t i : w.calls) {
      const auto& c = s.calls[i];
      if (w.index >= 0 && c.info.plan != plan) {
        plan = c.info.plan;
        line += " | plan " + plan + ":";
      }
      line += w.index >= 0 ? fmt::format(" layer {} {}", c.info.layer, tag(c)) : fmt::format(" {} call {} {}", c.info.function, c.info.call_sequence, tag(c));
      if (c.info.flush >= 0) line += fmt::format("(flush {})", c.info.flush);
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace podcheck
