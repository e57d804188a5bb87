// flashinfer-bench definitions (fib_defs.hpp). Names, axes, inputs and constraints follow flashinfer-bench's
// own gqa_paged / gqa_ragged definitions (flashinfer_trace/definitions at 40e6ca78's parent ecafa9c2); the
// proposed pod definitions extend them with both sides' index arrays and scalars. The reference code is ours.
#include "traces/fib_defs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podcheck::fib {

namespace {

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// Shared by every reference: attention of one request in float32, FlashInfer's conventions (query row i at
// position i + L - Q, causal j <= that position, window j >= position - window_left, empty rows 0 / -inf,
// LSE in base 2, GQA head h reading kv head h // (H / Hkv)).
constexpr const char* kPrelude = R"PY(import math

import torch


def _attend(q, k, v, sm_scale, causal, window_left):
    """q [Q, H, D], k and v [L, Hkv, D] -> out [Q, H, D] float32, lse [Q, H] (base 2)."""
    nq, heads, dim = q.shape
    nk, kv_heads = k.shape[0], k.shape[1]
    out = torch.zeros((nq, heads, dim), dtype=torch.float32, device=q.device)
    lse = torch.full((nq, heads), float("-inf"), dtype=torch.float32, device=q.device)
    if nq == 0 or nk == 0:
        return out, lse
    group = heads // kv_heads
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    logits = torch.einsum("qhd,khd->hqk", q.float(), kf) * sm_scale
    pos = torch.arange(nq, device=q.device)[:, None] + (nk - nq)
    key = torch.arange(nk, device=q.device)[None, :]
    seen = torch.ones((nq, nk), dtype=torch.bool, device=q.device)
    if causal:
        seen = seen & (key <= pos)
    if window_left >= 0:
        seen = seen & (key >= pos - window_left)
    logits = logits.masked_fill(~seen[None], float("-inf"))
    top = logits.amax(dim=-1, keepdim=True)
    some = torch.isfinite(top)
    w = torch.where(some, torch.exp(logits - torch.where(some, top, torch.zeros_like(top))), torch.zeros_like(logits))
    total = w.sum(dim=-1, keepdim=True)
    out = torch.einsum("hqk,khd->qhd", w / torch.where(total > 0, total, torch.ones_like(total)), vf)
    base2 = (top[..., 0] + torch.log(torch.where(total[..., 0] > 0, total[..., 0], torch.ones_like(total[..., 0])))) / math.log(2.0)
    lse = torch.where(some[..., 0], base2, torch.full_like(base2, float("-inf"))).transpose(0, 1)
    return out, lse


def _tokens(k_cache, v_cache, indptr, indices, last_page_len, b):
    """K and V tokens of request b from an NHD paged cache [pages, page_size, Hkv, D]."""
    page_size = k_cache.shape[1]
    ids = indices[int(indptr[b]) : int(indptr[b + 1])].long()
    if ids.numel() == 0:
        return k_cache[:0, 0], v_cache[:0, 0]
    last = int(last_page_len[b]) if last_page_len is not None else page_size
    n = (ids.numel() - 1) * page_size + last
    return (k_cache[ids].reshape(-1, *k_cache.shape[2:])[:n], v_cache[ids].reshape(-1, *v_cache.shape[2:])[:n])


def _batch(q, qo_indptr, k_cache, v_cache, kv_indptr, kv_indices, last_page_len, sm_scale, causal, window_left):
    out = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=torch.float32, device=q.device)
    for b in range(kv_indptr.shape[0] - 1):
        a, e = int(qo_indptr[b]), int(qo_indptr[b + 1])
        k, v = _tokens(k_cache, v_cache, kv_indptr, kv_indices, last_page_len, b)
        out[a:e], lse[a:e] = _attend(q[a:e], k, v, sm_scale, causal, window_left)
    return out, lse

)PY";

std::string torch_dtype(const std::string& fib) { return "torch." + fib; }

std::string reference(Kind k, bool lpl, const std::string& out_dtype) {
  const std::string od = torch_dtype(out_dtype);
  std::string body;
  switch (k) {
    case Kind::decode:
      body = fmt::format(R"PY(@torch.no_grad()
def run(q, k_cache, v_cache, kv_indptr, kv_indices, {0}sm_scale):
    """One query row per request, non-causal."""
    rows = torch.arange(q.shape[0] + 1, device=q.device)
    out, lse = _batch(q, rows, k_cache, v_cache, kv_indptr, kv_indices, {1}, sm_scale, False, -1)
    return out.to({2}), lse
)PY", lpl ? "kv_last_page_len, " : "", lpl ? "kv_last_page_len" : "None", od);
      break;
    case Kind::paged_prefill:
      body = fmt::format(R"PY(@torch.no_grad()
def run(q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, {0}sm_scale):
    """Causal, aligned to the end of each request's KV."""
    out, lse = _batch(q, qo_indptr, k_cache, v_cache, kv_indptr, kv_indices, {1}, sm_scale, True, -1)
    return out.to({2}), lse
)PY", lpl ? "kv_last_page_len, " : "", lpl ? "kv_last_page_len" : "None", od);
      break;
    case Kind::ragged_prefill:
      body = fmt::format(R"PY(@torch.no_grad()
def run(q, k, v, qo_indptr, kv_indptr, sm_scale):
    """Causal, aligned to the end of each request's KV; request b reads k[kv_indptr[b]:kv_indptr[b + 1]]."""
    out = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=torch.float32, device=q.device)
    for b in range(qo_indptr.shape[0] - 1):
        a, e = int(qo_indptr[b]), int(qo_indptr[b + 1])
        s, t = int(kv_indptr[b]), int(kv_indptr[b + 1])
        out[a:e], lse[a:e] = _attend(q[a:e], k[s:t], v[s:t], sm_scale, True, -1)
    return out.to({0}), lse
)PY", od);
      break;
    case Kind::pod:
      body = fmt::format(R"PY(@torch.no_grad()
def run(q_p, k_p, v_p, q_d, k_cache_d, v_cache_d, kv_indptr_d, kv_indices_d, kv_last_page_len_d,
        causal_p, window_left_p, sm_scale_p, q_scale_p, k_scale_p, v_scale_p,
        causal_d, window_left_d, sm_scale_d, q_scale_d, k_scale_d, v_scale_d):
    """Single POD: one dense prefill request (NHD k_p, v_p) and a paged decode batch (one row per request).
    Each side's logits are scaled by sm_scale * q_scale * k_scale and its output multiplied by v_scale."""
    out_p, lse_p = _attend(q_p, k_p, v_p, sm_scale_p * q_scale_p * k_scale_p, bool(causal_p), int(window_left_p))
    rows = torch.arange(q_d.shape[0] + 1, device=q_d.device)
    out_d, lse_d = _batch(q_d, rows, k_cache_d, v_cache_d, kv_indptr_d, kv_indices_d, kv_last_page_len_d,
                          sm_scale_d * q_scale_d * k_scale_d, bool(causal_d), int(window_left_d))
    return (out_p * v_scale_p).to({0}), lse_p, (out_d * v_scale_d).to({0}), lse_d
)PY", od);
      break;
    case Kind::batch_pod:
      body = fmt::format(R"PY(@torch.no_grad()
def run(q_p, k_cache_p, v_cache_p, qo_indptr_p, kv_indptr_p, kv_indices_p, kv_last_page_len_p,
        q_d, k_cache_d, v_cache_d, qo_indptr_d, kv_indptr_d, kv_indices_d, kv_last_page_len_d,
        causal_p, window_left_p, sm_scale_p, q_scale_p, k_scale_p, v_scale_p,
        causal_d, window_left_d, sm_scale_d, q_scale_d, k_scale_d, v_scale_d):
    """Batch POD: a paged prefill batch and a paged decode batch, each with its own page table and options."""
    out_p, lse_p = _batch(q_p, qo_indptr_p, k_cache_p, v_cache_p, kv_indptr_p, kv_indices_p, kv_last_page_len_p,
                          sm_scale_p * q_scale_p * k_scale_p, bool(causal_p), int(window_left_p))
    out_d, lse_d = _batch(q_d, qo_indptr_d, k_cache_d, v_cache_d, kv_indptr_d, kv_indices_d, kv_last_page_len_d,
                          sm_scale_d * q_scale_d * k_scale_d, bool(causal_d), int(window_left_d))
    return (out_p * v_scale_p).to({0}), lse_p, (out_d * v_scale_d).to({0}), lse_d
)PY", od);
      break;
  }
  return std::string(kPrelude) + body;
}

TensorSpec t(std::string name, std::vector<std::string> shape, std::string dtype, std::string desc = "") {
  return TensorSpec{std::move(name), std::move(shape), false, std::move(dtype), std::move(desc)};
}
TensorSpec scalar(std::string name, std::string dtype, std::string desc) {
  return TensorSpec{std::move(name), {}, true, std::move(dtype), std::move(desc)};
}

}  // namespace

std::optional<Kind> kind_of(const std::string& name, const std::string& op) {
  if (op == "gqa_paged" && starts(name, "gqa_paged_decode_")) return Kind::decode;
  if (op == "gqa_paged" && starts(name, "gqa_paged_prefill_causal_")) return Kind::paged_prefill;
  if (op == "gqa_ragged" && starts(name, "gqa_ragged_prefill_causal_")) return Kind::ragged_prefill;
  if (op == "pod" && starts(name, "pod_run_")) return Kind::pod;
  if (op == "pod" && starts(name, "batch_pod_run_")) return Kind::batch_pod;
  return std::nullopt;
}

const char* op_type_of(Kind k) {
  switch (k) {
    case Kind::decode:
    case Kind::paged_prefill: return "gqa_paged";
    case Kind::ragged_prefill: return "gqa_ragged";
    default: return "pod";
  }
}

std::string definition_name(Kind k, int h, int kv, int d, int ps) {
  switch (k) {
    case Kind::decode: return fmt::format("gqa_paged_decode_h{}_kv{}_d{}_ps{}", h, kv, d, ps);
    case Kind::paged_prefill: return fmt::format("gqa_paged_prefill_causal_h{}_kv{}_d{}_ps{}", h, kv, d, ps);
    case Kind::ragged_prefill: return fmt::format("gqa_ragged_prefill_causal_h{}_kv{}_d{}", h, kv, d);
    case Kind::pod: return fmt::format("pod_run_h{}_kv{}_d{}_ps{}", h, kv, d, ps);
    case Kind::batch_pod: return fmt::format("batch_pod_run_h{}_kv{}_d{}_ps{}", h, kv, d, ps);
  }
  return "";
}

const char* fib_dtype(DType t) {
  switch (t) {
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float8_e4m3fn: return "float8_e4m3fn";
    case DType::float8_e5m2: return "float8_e5m2";
    case DType::float32: return "float32";
    case DType::int32: return "int32";
    default: throw std::invalid_argument(std::string("dtype ") + std::string(dtype_name(t)) + " has no flashinfer-bench name");
  }
}

std::optional<DType> model_dtype(const std::string& s) {
  if (s == "float16") return DType::float16;
  if (s == "bfloat16") return DType::bfloat16;
  if (s == "float8_e4m3fn") return DType::float8_e4m3fn;
  if (s == "float8_e5m2") return DType::float8_e5m2;
  if (s == "float32") return DType::float32;
  if (s == "int32") return DType::int32;
  return std::nullopt;
}

DefSpec make_def(Kind k, int h, int kv, int d, int ps, DType q, DType kvt, DType out, bool lpl) {
  DefSpec s;
  s.kind = k;
  s.name = definition_name(k, h, kv, d, ps);
  s.op_type = op_type_of(k);
  const std::string qd = fib_dtype(q), kd = fib_dtype(kvt), od = fib_dtype(out);
  s.consts = {{"num_qo_heads", h}, {"num_kv_heads", kv}, {"head_dim", d}};
  if (k != Kind::ragged_prefill) s.consts.push_back({"page_size", ps});
  const TensorSpec sm = scalar("sm_scale", "float32", "Softmax scale. Default is (1/sqrt(head_dim)).");
  const char* lse_desc = "The 2-based log-sum-exp of attention logits.";
  auto paged = [&](const std::string& sfx, const std::string& pages) {
    return std::vector<TensorSpec>{t("k_cache" + sfx, {pages, "page_size", "num_kv_heads", "head_dim"}, kd, "Paged key cache (NHD)."),
                                   t("v_cache" + sfx, {pages, "page_size", "num_kv_heads", "head_dim"}, kd, "Paged value cache (NHD).")};
  };
  auto side_scalars = [&](const std::string& sfx) {
    return std::vector<TensorSpec>{
        scalar("causal" + sfx, "bool", "Causal mask aligned to the end of each request's KV."),
        scalar("window_left" + sfx, "int32", "Left window (inclusive, keys p-w..p); -1: none."),
        scalar("sm_scale" + sfx, "float32", "Softmax scale (podcheck writes the float32 the kernel receives)."),
        scalar("q_scale" + sfx, "float32", "Logit scale factor of q (fp8 calibration; 1: none)."),
        scalar("k_scale" + sfx, "float32", "Logit scale factor of k (fp8 calibration; 1: none)."),
        scalar("v_scale" + sfx, "float32", "Output scale factor (fp8 calibration; 1: none)."),
    };
  };
  auto append = [](std::vector<TensorSpec>& a, const std::vector<TensorSpec>& b) { a.insert(a.end(), b.begin(), b.end()); };
  switch (k) {
    case Kind::decode:
      s.description = "Batched grouped-query attention decode over a paged KV cache (exported by podcheck).";
      s.vars = {"batch_size", "num_pages", "len_indptr", "num_kv_indices"};
      s.inputs = {t("q", {"batch_size", "num_qo_heads", "head_dim"}, qd)};
      append(s.inputs, paged("", "num_pages"));
      s.inputs.push_back(t("kv_indptr", {"len_indptr"}, "int32", "KV page offsets for each sequence."));
      s.inputs.push_back(t("kv_indices", {"num_kv_indices"}, "int32", "Page IDs for KV cache lookups."));
      if (lpl) s.inputs.push_back(t("kv_last_page_len", {"batch_size"}, "int32", "Number of valid tokens in the last page for each sequence."));
      s.inputs.push_back(sm);
      s.outputs = {t("output", {"batch_size", "num_qo_heads", "head_dim"}, od), t("lse", {"batch_size", "num_qo_heads"}, "float32", lse_desc)};
      s.constraints = {"len_indptr == batch_size + 1", "num_kv_indices == kv_indptr[-1].item()"};
      s.tags = {"stage:decode", "fi_api:flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper", "source:podcheck"};
      break;
    case Kind::paged_prefill:
      s.description = "Batched grouped-query attention prefill over a paged KV cache, causal (exported by podcheck).";
      s.vars = {"len_indptr", "total_q", "num_kv_indices", "num_pages"};
      if (lpl) s.vars.push_back("batch_size");
      s.inputs = {t("q", {"total_q", "num_qo_heads", "head_dim"}, qd)};
      append(s.inputs, paged("", "num_pages"));
      s.inputs.push_back(t("qo_indptr", {"len_indptr"}, "int32", "Query offsets for each sequence."));
      s.inputs.push_back(t("kv_indptr", {"len_indptr"}, "int32", "KV page offsets for each sequence."));
      s.inputs.push_back(t("kv_indices", {"num_kv_indices"}, "int32", "Page IDs for KV cache lookups."));
      if (lpl) s.inputs.push_back(t("kv_last_page_len", {"batch_size"}, "int32", "Number of valid tokens in the last page for each sequence."));
      s.inputs.push_back(sm);
      s.outputs = {t("output", {"total_q", "num_qo_heads", "head_dim"}, od), t("lse", {"total_q", "num_qo_heads"}, "float32", lse_desc)};
      s.constraints = {"total_q == qo_indptr[-1].item()", "num_kv_indices == kv_indptr[-1].item()"};
      if (lpl) s.constraints.push_back("len_indptr == batch_size + 1");
      s.tags = {"stage:prefill", "fi_api:flashinfer.prefill.BatchPrefillWithPagedKVCacheWrapper", "source:podcheck"};
      break;
    case Kind::ragged_prefill:
      s.description = "Batched grouped-query attention prefill with ragged K/V, causal (exported by podcheck).";
      s.vars = {"len_indptr", "total_q", "total_kv"};
      s.inputs = {t("q", {"total_q", "num_qo_heads", "head_dim"}, qd), t("k", {"total_kv", "num_kv_heads", "head_dim"}, kd),
                  t("v", {"total_kv", "num_kv_heads", "head_dim"}, kd),
                  t("qo_indptr", {"len_indptr"}, "int32", "Query offsets for each sequence."),
                  t("kv_indptr", {"len_indptr"}, "int32", "Key-value offsets for each sequence."), sm};
      s.outputs = {t("output", {"total_q", "num_qo_heads", "head_dim"}, od), t("lse", {"total_q", "num_qo_heads"}, "float32", lse_desc)};
      s.constraints = {"total_q == qo_indptr[-1].item()", "total_kv == kv_indptr[-1].item()"};
      s.tags = {"stage:prefill", "fi_api:flashinfer.prefill.BatchPrefillWithRaggedKVCacheWrapper", "source:podcheck"};
      break;
    case Kind::pod:
      s.description =
          "Proposed by podcheck: FlashInfer's PODWithPagedKVCacheWrapper.run (one dense prefill request + a paged decode "
          "batch in one launch) with what FlashInfer's pod_run trace template leaves out: the decode page table "
          "(indices, last page lengths), causal and window per side, scales, and both LSEs.";
      s.vars = {"qo_len_p", "kv_len_p", "batch_size_d", "num_pages_d", "len_indptr_d", "num_kv_indices_d"};
      s.inputs = {t("q_p", {"qo_len_p", "num_qo_heads", "head_dim"}, qd), t("k_p", {"kv_len_p", "num_kv_heads", "head_dim"}, kd),
                  t("v_p", {"kv_len_p", "num_kv_heads", "head_dim"}, kd), t("q_d", {"batch_size_d", "num_qo_heads", "head_dim"}, qd)};
      append(s.inputs, paged("_d", "num_pages_d"));
      s.inputs.push_back(t("kv_indptr_d", {"len_indptr_d"}, "int32"));
      s.inputs.push_back(t("kv_indices_d", {"num_kv_indices_d"}, "int32"));
      s.inputs.push_back(t("kv_last_page_len_d", {"batch_size_d"}, "int32"));
      append(s.inputs, side_scalars("_p"));
      append(s.inputs, side_scalars("_d"));
      s.outputs = {t("output_p", {"qo_len_p", "num_qo_heads", "head_dim"}, od), t("lse_p", {"qo_len_p", "num_qo_heads"}, "float32", lse_desc),
                   t("output_d", {"batch_size_d", "num_qo_heads", "head_dim"}, od), t("lse_d", {"batch_size_d", "num_qo_heads"}, "float32", lse_desc)};
      s.constraints = {"len_indptr_d == batch_size_d + 1", "num_kv_indices_d == kv_indptr_d[-1].item()"};
      s.tags = {"stage:pod", "status:proposed", "fi_api:flashinfer.pod.PODWithPagedKVCacheWrapper", "source:podcheck"};
      break;
    case Kind::batch_pod:
      s.description =
          "Proposed by podcheck: FlashInfer's BatchPODWithPagedKVCacheWrapper.run (paged prefill batch + paged decode "
          "batch in one launch) with both sides' page tables, causal and window per side, scales, and both LSEs.";
      s.vars = {"total_q_p", "num_pages_p", "len_indptr_p", "num_kv_indices_p", "batch_size_p",
                "total_q_d", "num_pages_d", "len_indptr_d", "num_kv_indices_d", "batch_size_d"};
      for (const char* sfx : {"_p", "_d"}) {
        const std::string x(sfx);
        s.inputs.push_back(t("q" + x, {"total_q" + x, "num_qo_heads", "head_dim"}, qd));
        append(s.inputs, paged(x, "num_pages" + x));
        s.inputs.push_back(t("qo_indptr" + x, {"len_indptr" + x}, "int32"));
        s.inputs.push_back(t("kv_indptr" + x, {"len_indptr" + x}, "int32"));
        s.inputs.push_back(t("kv_indices" + x, {"num_kv_indices" + x}, "int32"));
        s.inputs.push_back(t("kv_last_page_len" + x, {"batch_size" + x}, "int32"));
        s.constraints.push_back("total_q" + x + " == qo_indptr" + x + "[-1].item()");
        s.constraints.push_back("num_kv_indices" + x + " == kv_indptr" + x + "[-1].item()");
        s.constraints.push_back("len_indptr" + x + " == batch_size" + x + " + 1");
      }
      append(s.inputs, side_scalars("_p"));
      append(s.inputs, side_scalars("_d"));
      s.outputs = {t("output_p", {"total_q_p", "num_qo_heads", "head_dim"}, od), t("lse_p", {"total_q_p", "num_qo_heads"}, "float32", lse_desc),
                   t("output_d", {"total_q_d", "num_qo_heads", "head_dim"}, od), t("lse_d", {"total_q_d", "num_qo_heads"}, "float32", lse_desc)};
      s.tags = {"stage:pod", "status:proposed", "fi_api:flashinfer.pod.BatchPODWithPagedKVCacheWrapper", "source:podcheck"};
      break;
  }
  return s;
}

nlohmann::ordered_json def_json(const DefSpec& d) {
  nlohmann::ordered_json j;  // key order as flashinfer-bench writes them
  j["name"] = d.name;
  j["description"] = d.description;
  j["op_type"] = d.op_type;
  j["tags"] = d.tags;
  nlohmann::ordered_json axes = nlohmann::ordered_json::object();
  for (const auto& [n, v] : d.consts) axes[n] = {{"type", "const"}, {"value", v}};
  for (const auto& n : d.vars) axes[n] = {{"type", "var"}};
  j["axes"] = axes;
  j["constraints"] = d.constraints;
  auto specs = [](const std::vector<TensorSpec>& ts) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto& x : ts) {
      nlohmann::ordered_json e;
      e["shape"] = x.scalar ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(x.shape);
      e["dtype"] = x.dtype;
      if (!x.description.empty()) e["description"] = x.description;
      o[x.name] = e;
    }
    return o;
  };
  j["inputs"] = specs(d.inputs);
  j["outputs"] = specs(d.outputs);
  const bool lpl = std::any_of(d.inputs.begin(), d.inputs.end(), [](const TensorSpec& x) { return x.name.rfind("kv_last_page_len", 0) == 0; });
  j["reference"] = reference(d.kind, lpl, d.outputs.front().dtype);
  return j;
}

}  // namespace podcheck::fib
