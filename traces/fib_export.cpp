// Cases -> a flashinfer-bench dataset folder (fib.hpp): definitions, workload lines, one blob per workload.
#include "traces/fib.hpp"

#include "fixtures/case_digest.hpp"
#include "traces/fib_defs.hpp"
#include "traces/safetensors.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <unistd.h>

namespace podcheck {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

[[noreturn]] void refuse(const Case& c, const std::string& what) {
  throw std::invalid_argument("case '" + c.id + "': " + what);
}

std::uint64_t fnv(const std::string& s, std::uint64_t h) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001B3ull;
  }
  return h;
}

// A uuid-shaped name for a case that did not come from flashinfer-bench: a hash of its id and digest.
std::string uuid_for(const Case& c) {
  const std::string key = c.id + "|" + case_digest(c);
  const std::uint64_t a = fnv(key, 0xCBF29CE484222325ull), b = fnv(key, 0x84222325CBF29CE4ull);
  const std::string h = fmt::format("{:016x}{:016x}", a, b);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20, 12);
}

struct Kind {
  fib::Kind kind;
  int ps = 1;
};

Kind kind_of_case(const Case& c) {
  if (c.prefill && c.decode) {
    if (!c.decode->kv.paged) refuse(c, "a POD case needs a paged decode side");
    if (!c.prefill->kv.paged) return {fib::Kind::pod, c.decode->kv.pages.page_size};
    if (c.prefill->kv.pages.page_size != c.decode->kv.pages.page_size)
      refuse(c, "the two sides have different page sizes (the proposed batch_pod definition has one page_size)");
    return {fib::Kind::batch_pod, c.decode->kv.pages.page_size};
  }
  if (c.decode) {
    if (!c.decode->kv.paged) refuse(c, "a decode side with dense KV has no flashinfer-bench definition");
    return {fib::Kind::decode, c.decode->kv.pages.page_size};
  }
  if (c.prefill->kv.paged) return {fib::Kind::paged_prefill, c.prefill->kv.pages.page_size};
  return {fib::Kind::ragged_prefill, 1};
}

// The workload's uuid: the one a case imported from flashinfer-bench came with (id fib_<definition>_<uuid>).
std::string uuid_of(const Case& c, const std::string& def) {
  const std::string prefix = "fib_" + def + "_";
  if (c.id.rfind(prefix, 0) == 0 && c.id.size() > prefix.size()) return c.id.substr(prefix.size());
  return uuid_for(c);
}

Tensor ints(const std::vector<std::int32_t>& v) {
  Tensor t;
  t.dtype = DType::int32;
  t.shape = {static_cast<std::int64_t>(v.size())};
  t.bytes.resize(v.size() * 4);
  if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

// K (or V) of a side as NHD separate tensors: [P, ps, H, D] paged, [L, H, D] dense (copied through offset()).
Tensor nhd(const Case& c, const Side& s, bool is_v, std::vector<std::string>& notes, const std::string& side) {
  const KvStorage& kv = s.kv;
  const Tensor& src = is_v ? kv.v_tensor() : kv.k_tensor();
  if (kv.layout == Layout::NHD && !kv.stacked()) return is_v ? kv.v : kv.k;
  if (!is_v) {
    if (kv.layout == Layout::HND) notes.push_back(side + ": HND KV written as NHD (flashinfer-bench definitions are NHD)");
    if (kv.stacked()) notes.push_back(side + ": stacked 5-D KV written as separate k_cache / v_cache");
  }
  const std::int64_t H = c.num_kv_heads, D = c.head_dim, es = static_cast<std::int64_t>(dtype_size(src.dtype));
  Tensor t;
  t.dtype = src.dtype;
  std::int64_t P = 1, ps = 0;
  if (kv.paged) {
    P = kv.num_pages();
    ps = kv.pages.page_size;
    t.shape = {P, ps, H, D};
  } else {
    ps = s.kv_len(0);
    t.shape = {ps, H, D};
  }
  t.bytes.resize(static_cast<std::size_t>(P * ps * H * D * es));
  for (std::int64_t p = 0; p < P; ++p)
    for (std::int64_t slot = 0; slot < ps; ++slot)
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t from = kv.offset(is_v, p, slot, h), to = ((p * ps + slot) * H + h) * D;
        std::memcpy(t.bytes.data() + to * es, src.bytes.data() + from * es, static_cast<std::size_t>(D * es));
      }
  return t;
}

void require_plain(const Case& c, const SideParams& p, const std::string& side, bool allow_window_scales) {
  if (p.mask_mode == MaskMode::custom) refuse(c, side + ": custom mask (no flashinfer-bench definition carries one)");
  if (p.pos_encoding != PosEncoding::none) refuse(c, side + ": pos encoding " + std::string(pos_encoding_name(p.pos_encoding)) + " (not in the definitions)");
  if (p.logits_soft_cap != 0) refuse(c, side + ": logits_soft_cap (not in the definitions)");
  if (!allow_window_scales) {
    if (p.window_left != -1) refuse(c, side + ": window_left " + std::to_string(p.window_left) + " (flashinfer-bench's gqa definitions have no window)");
    if (p.q_scale != 1 || p.k_scale != 1 || p.v_scale != 1) refuse(c, side + ": q/k/v scales (flashinfer-bench's gqa definitions have none)");
  }
}

bool is_f32(double v) { return static_cast<double>(static_cast<float>(v)) == v; }

struct Exported {
  fib::DefSpec def;
  std::string uuid;
  ojson workload;  // {uuid, axes, inputs}
  std::string blob_rel;
  std::vector<safetensors::WriteTensor> blob;
  std::vector<std::string> notes;
  // what the workload's float32 scalars cannot say, for podcheck's import (the "podcheck" object of the line)
  ojson exact = ojson::object();             // scalar input -> its value in double
  std::vector<std::string> default_sm_scale;  // sm_scale inputs standing for "not given" (1/sqrt(head_dim))
};

Exported export_case(const Case& c, bool with_bytes) {
  if (c.lse_base != LseBase::base2) refuse(c, "LSE base e (flashinfer-bench's lse outputs are base 2)");
  const Kind k = kind_of_case(c);
  const bool lpl_needed = k.kind == fib::Kind::pod || k.kind == fib::Kind::batch_pod || k.ps != 1;
  Exported e;
  e.def = fib::make_def(k.kind, c.num_qo_heads, c.num_kv_heads, c.head_dim, k.ps, c.dtype_q, c.dtype_kv, c.dtype_o, lpl_needed);
  e.uuid = uuid_of(c, e.def.name);
  std::string hex = e.uuid;
  hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
  e.blob_rel = fmt::format("./blob/workloads/{}/{}/{}_{}.safetensors", e.def.op_type, e.def.name, e.def.name, hex);
  ojson axes = ojson::object(), inputs = ojson::object();
  auto tensor = [&](const std::string& name, const Tensor& t) {
    inputs[name] = {{"type", "safetensors"}, {"path", e.blob_rel}, {"tensor_key", name}};
    if (with_bytes) e.blob.push_back(safetensors::from_tensor(name, t));
  };
  auto scalar = [&](const std::string& name, const ojson& v) { inputs[name] = {{"type", "scalar"}, {"value", v}}; };
  auto f32_scalar = [&](const std::string& name, double v) {
    if (!is_f32(v)) e.exact[name] = v;
    scalar(name, v);
  };
  auto sm = [&](const std::string& name, const SideParams& p) {
    if (p.sm_scale) return f32_scalar(name, *p.sm_scale);
    e.default_sm_scale.push_back(name);  // flashinfer-bench's own workloads write 1/sqrt(head_dim) in double
    scalar(name, 1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  };
  auto paged = [&](const Side& s, const std::string& sfx, const std::string& side, bool qo, bool lpl) {
    const std::int64_t R = s.num_requests();
    axes["len_indptr" + sfx] = R + 1;
    axes["num_pages" + sfx] = s.kv.num_pages();
    axes["num_kv_indices" + sfx] = static_cast<std::int64_t>(s.kv.pages.indices.size());
    if (lpl) axes["batch_size" + sfx] = R;
    if (with_bytes) {
      tensor("k_cache" + sfx, nhd(c, s, false, e.notes, side));
      tensor("v_cache" + sfx, nhd(c, s, true, e.notes, side));
    } else {
      tensor("k_cache" + sfx, Tensor{});
      tensor("v_cache" + sfx, Tensor{});
    }
    if (qo) tensor("qo_indptr" + sfx, ints(s.qo_indptr));
    tensor("kv_indptr" + sfx, ints(s.kv.pages.indptr));
    tensor("kv_indices" + sfx, ints(s.kv.pages.indices));
    if (lpl) {
      tensor("kv_last_page_len" + sfx, ints(s.kv.pages.last_page_len));
    } else {
      for (int r = 0; r < R; ++r)
        if (s.kv.pages.last_page_len[static_cast<std::size_t>(r)] != 1) {
          e.notes.push_back(side + ": kv_last_page_len of an empty request is not 1 (the page_size-1 definition has none)");
          break;
        }
    }
  };
  auto side_scalars = [&](const Side& s, const std::string& sfx, const std::string& side) {
    const SideParams& p = s.params;
    scalar("causal" + sfx, p.mask_mode == MaskMode::causal);
    scalar("window_left" + sfx, p.window_left);
    (void)side;
    sm("sm_scale" + sfx, p);
    f32_scalar("q_scale" + sfx, p.q_scale);
    f32_scalar("k_scale" + sfx, p.k_scale);
    f32_scalar("v_scale" + sfx, p.v_scale);
  };
  switch (k.kind) {
    case fib::Kind::decode: {
      const Side& s = *c.decode;
      require_plain(c, s.params, "decode", false);
      for (int r = 0; r < s.num_requests(); ++r)
        if (s.qo_len(r) != 1) refuse(c, "decode: request " + std::to_string(r) + " has " + std::to_string(s.qo_len(r)) + " query rows (the decode definition has one)");
      if (s.params.mask_mode != MaskMode::none) e.notes.push_back("decode: causal mask dropped (the same for one query row)");
      axes["batch_size"] = s.num_requests();
      tensor("q", s.q);
      paged(s, "", "decode", false, lpl_needed);
      sm("sm_scale", s.params);
      break;
    }
    case fib::Kind::paged_prefill: {
      const Side& s = *c.prefill;
      require_plain(c, s.params, "prefill", false);
      if (s.params.mask_mode != MaskMode::causal) refuse(c, "prefill: not causal (flashinfer-bench's prefill definitions are causal)");
      axes["total_q"] = s.num_rows();
      tensor("q", s.q);
      paged(s, "", "prefill", true, lpl_needed);
      sm("sm_scale", s.params);
      break;
    }
    case fib::Kind::ragged_prefill: {
      const Side& s = *c.prefill;
      require_plain(c, s.params, "prefill", false);
      if (s.params.mask_mode != MaskMode::causal) refuse(c, "prefill: not causal (flashinfer-bench's prefill definitions are causal)");
      const std::int64_t L = s.kv_len(0);
      axes["len_indptr"] = 2;
      axes["total_q"] = s.num_rows();
      axes["total_kv"] = L;
      tensor("q", s.q);
      tensor("k", with_bytes ? nhd(c, s, false, e.notes, "prefill") : Tensor{});
      tensor("v", with_bytes ? nhd(c, s, true, e.notes, "prefill") : Tensor{});
      tensor("qo_indptr", ints(s.qo_indptr));
      tensor("kv_indptr", ints({0, static_cast<std::int32_t>(L)}));
      sm("sm_scale", s.params);
      break;
    }
    case fib::Kind::pod: {
      const Side& p = *c.prefill;
      const Side& d = *c.decode;
      require_plain(c, p.params, "prefill", true);
      require_plain(c, d.params, "decode", true);
      for (int r = 0; r < d.num_requests(); ++r)
        if (d.qo_len(r) != 1) refuse(c, "decode: request " + std::to_string(r) + " has several query rows (single POD has one)");
      axes["qo_len_p"] = p.num_rows();
      axes["kv_len_p"] = p.kv_len(0);
      axes["batch_size_d"] = d.num_requests();
      tensor("q_p", p.q);
      tensor("k_p", with_bytes ? nhd(c, p, false, e.notes, "prefill") : Tensor{});
      tensor("v_p", with_bytes ? nhd(c, p, true, e.notes, "prefill") : Tensor{});
      tensor("q_d", d.q);
      paged(d, "_d", "decode", false, true);
      side_scalars(p, "_p", "prefill");
      side_scalars(d, "_d", "decode");
      break;
    }
    case fib::Kind::batch_pod: {
      const Side& p = *c.prefill;
      const Side& d = *c.decode;
      require_plain(c, p.params, "prefill", true);
      require_plain(c, d.params, "decode", true);
      axes["total_q_p"] = p.num_rows();
      tensor("q_p", p.q);
      paged(p, "_p", "prefill", true, true);
      axes["total_q_d"] = d.num_rows();
      tensor("q_d", d.q);
      paged(d, "_d", "decode", true, true);
      side_scalars(p, "_p", "prefill");
      side_scalars(d, "_d", "decode");
      break;
    }
  }
  // inputs in the definition's order (the kernel's interface)
  ojson ordered = ojson::object();
  for (const auto& t : e.def.inputs) {
    if (!inputs.contains(t.name)) throw std::logic_error("fib export: input " + t.name + " not produced");
    ordered[t.name] = inputs[t.name];
  }
  ojson ax = ojson::object();
  for (const auto& v : e.def.vars)
    if (axes.contains(v)) ax[v] = axes[v];
  e.workload = {{"uuid", e.uuid}, {"axes", ax}, {"inputs", ordered}};
  return e;
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write '" + p.string() + "'");
}

}  // namespace

FibWorkload fib_workload_of(const Case& c) {
  const Kind k = kind_of_case(c);
  const bool lpl = k.kind == fib::Kind::pod || k.kind == fib::Kind::batch_pod || k.ps != 1;
  const std::string name = fib::make_def(k.kind, c.num_qo_heads, c.num_kv_heads, c.head_dim, k.ps, c.dtype_q, c.dtype_kv, c.dtype_o, lpl).name;
  return FibWorkload{name, fib::op_type_of(k.kind), uuid_of(c, name)};
}

nlohmann::json fib_workload_json(const Case& c) { return nlohmann::json::parse(export_case(c, false).workload.dump()); }

FibExportResult export_fib(const std::vector<Case>& cases, const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)))
    throw std::invalid_argument("'" + dir + "' exists and is not an empty folder: export fib writes a new dataset folder");
  // everything is checked and converted before anything is written
  std::vector<Exported> ex;
  std::map<std::string, ojson> defs;
  std::set<std::string> ids;
  for (const Case& c : cases) {
    if (!ids.insert(c.id).second) throw std::invalid_argument("case '" + c.id + "' is given twice");
    ex.push_back(export_case(c, true));
    const ojson dj = fib::def_json(ex.back().def);
    auto it = defs.find(ex.back().def.name);
    if (it != defs.end() && it->second != dj)
      throw std::invalid_argument("case '" + c.id + "' needs definition '" + ex.back().def.name +
                                  "' with other dtypes than an earlier case: export them to separate folders");
    defs.emplace(ex.back().def.name, dj);
  }
  fs::path target = fs::absolute(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  std::string leaf = ".";
  leaf += target.filename().string();
  leaf += ".tmp-XXXXXX";
  std::string tmpl = (target.parent_path() / leaf).string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temp folder next to '" + dir + "'");
  const fs::path tmp(tmpl);
  FibExportResult r;
  try {
    for (const auto& [name, dj] : defs) {
      const std::string rel = "definitions/" + dj["op_type"].get<std::string>() + "/" + name + ".json";
      write_text(tmp / rel, dj.dump(2) + "\n");
      r.files.push_back(rel);
    }
    std::map<std::string, std::string> lines;  // workloads file -> text
    for (std::size_t i = 0; i < ex.size(); ++i) {
      const Exported& e = ex[i];
      const Case& c = cases[i];
      ojson line;
      line["definition"] = e.def.name;
      line["solution"] = nullptr;
      line["workload"] = e.workload;
      line["evaluation"] = nullptr;
      line["podcheck"] = {{"case_id", c.id}, {"seed", c.seed}, {"distribution", c.distribution},
                          {"fp8_overflow", std::string(fp8_overflow_name(c.fp8_overflow))}};
      if (!e.exact.empty()) line["podcheck"]["exact_scalars"] = e.exact;
      if (!e.default_sm_scale.empty()) line["podcheck"]["default_sm_scale"] = e.default_sm_scale;
      lines["workloads/" + e.def.op_type + "/" + e.def.name + ".jsonl"] += line.dump() + "\n";
      const std::string blob = e.blob_rel.substr(2);
      fs::create_directories((tmp / blob).parent_path());
      safetensors::write_file((tmp / blob).string(), e.blob);
      r.files.push_back(blob);
      for (const auto& n : e.notes) r.notes.push_back("case '" + c.id + "': " + n);
    }
    for (const auto& [rel, text] : lines) {
      write_text(tmp / rel, text);
      r.files.push_back(rel);
    }
    if (fs::exists(target)) fs::remove(target);  // the empty folder
    fs::rename(tmp, target);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return r;
}

}  // namespace podcheck
