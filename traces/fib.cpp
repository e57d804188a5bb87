// flashinfer-bench dataset -> cases (fib.hpp). Semantics of each definition as its reference computes it
// (flashinfer_trace/definitions/gqa_*/ at flashinfer-bench ecafa9c2): decode = one query row per request,
// non-causal; prefill = causal aligned to the end of the KV; ragged = K/V rows kv_indptr[b]..kv_indptr[b+1];
// paged definitions without kv_last_page_len have page_size 1 (every page holds one token).
#include "traces/fib.hpp"

#include "fixtures/counter_rng.hpp"
#include "fixtures/fixture_io.hpp"
#include "traces/fib_defs.hpp"
#include "traces/text_input.hpp"
#include "traces/safetensors.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace podcheck {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& what) { throw FormatError(what); }

struct Def {
  std::string file;  // for messages
  fib::Kind kind;
  json j;
  std::map<std::string, std::int64_t> consts;
  std::set<std::string> vars;
};

// One workload being read: what it resolved to, with messages that name the file, line and uuid.
struct Work {
  const Def& def;
  std::string file;
  std::size_t line = 0;
  std::string uuid;
  const std::string& root;
  std::uint64_t seed = 0;
  std::map<std::string, std::int64_t> axes;
  std::map<std::string, Tensor> tensors;
  std::map<std::string, double> scalars;
  std::set<std::string> random_inputs;
  std::map<std::string, std::shared_ptr<safetensors::File>>* blobs;

  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(fmt::format("dataset file '{}', line {}, workload '{}' (definition '{}'): {}", file, line, uuid,
                                  def.j.value("name", std::string("?")), what));
  }
  std::int64_t axis(const std::string& a) const {
    auto it = axes.find(a);
    if (it == axes.end()) fail("axis '" + a + "' has no value");
    return it->second;
  }
  const Tensor& tensor(const std::string& n) const {
    auto it = tensors.find(n);
    if (it == tensors.end()) fail("input '" + n + "' is missing");
    return it->second;
  }
  bool has(const std::string& n) const { return tensors.count(n) || scalars.count(n); }
  std::vector<std::int32_t> ints(const std::string& n) const {
    if (random_inputs.count(n)) fail("input '" + n + "' is of type random: podcheck cannot make up index arrays");
    const Tensor& t = tensor(n);
    std::vector<std::int32_t> v(t.bytes.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
    return v;
  }
  double scalar(const std::string& n) const {
    auto it = scalars.find(n);
    if (it == scalars.end()) fail("scalar input '" + n + "' is missing");
    return it->second;
  }
};

std::vector<std::int64_t> expected_shape(const Work& w, const json& spec) {
  std::vector<std::int64_t> s;
  for (const auto& a : spec["shape"]) s.push_back(w.axis(a.get<std::string>()));
  return s;
}

// An input of type random: podcheck's counter-based generator, standard normal values (fp8 clamped to
// [-2, 2] as flashinfer-bench clamps its own), stream "<uuid>:<input>".
Tensor random_tensor(const Work& w, const std::string& name, DType dt, const std::vector<std::int64_t>& shape) {
  if (dt == DType::int32) w.fail("input '" + name + "' is of type random: podcheck cannot make up index arrays");
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  const std::string stream_name = w.uuid + ":" + name;
  const std::uint64_t stream = rng::stream_id(stream_name.c_str());
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    double x = rng::normal(w.seed, stream, static_cast<std::uint64_t>(i));
    if (is_float8(dt)) x = std::clamp(x, -2.0, 2.0);
    v[static_cast<std::size_t>(i)] = x;
  }
  return Tensor::from_doubles(dt, shape, v);
}

const char* st_name_of(const std::string& fib_dtype) {
  if (fib_dtype == "float16") return "F16";
  if (fib_dtype == "bfloat16") return "BF16";
  if (fib_dtype == "float32") return "F32";
  if (fib_dtype == "float8_e4m3fn") return "F8_E4M3";
  if (fib_dtype == "float8_e5m2") return "F8_E5M2";
  if (fib_dtype == "int32") return "I32";
  if (fib_dtype == "int64") return "I64";
  if (fib_dtype == "bool") return "BOOL";
  return "?";
}

void resolve_inputs(Work& w, const json& inputs_spec) {
  const json& defin = w.def.j["inputs"];
  for (auto it = inputs_spec.begin(); it != inputs_spec.end(); ++it)
    if (!defin.contains(it.key())) w.fail("input '" + it.key() + "' is not an input of the definition");
  for (auto it = defin.begin(); it != defin.end(); ++it) {
    const std::string& name = it.key();
    const json& spec = it.value();
    const std::string fdt = spec.value("dtype", std::string());
    if (!inputs_spec.contains(name)) w.fail("input '" + name + "' has no specification (flashinfer-bench would make it random)");
    const json& in = inputs_spec[name];
    if (!in.is_object() || !in.contains("type") || !in["type"].is_string()) w.fail("input '" + name + "' has no type");
    const std::string type = in["type"].get<std::string>();
    const bool is_scalar = spec["shape"].is_null();
    if (is_scalar) {
      if (type != "scalar") w.fail("scalar input '" + name + "' is of type '" + type + "'; podcheck reads scalar values only");
      const json& v = in.contains("value") ? in["value"] : json();
      if (!(v.is_number() || v.is_boolean())) w.fail("scalar input '" + name + "' has no numeric value");
      double x = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
      if (fdt == "float32") x = static_cast<double>(static_cast<float>(x));  // the float32 the definition declares
      if (fdt == "int32" && (std::floor(x) != x || !v.is_number_integer())) w.fail("scalar input '" + name + "' is not an integer");
      w.scalars[name] = x;
      continue;
    }
    const std::vector<std::int64_t> shape = expected_shape(w, spec);
    if (type == "random") {
      auto dt = fib::model_dtype(fdt);
      if (!dt) w.fail("input '" + name + "': dtype '" + fdt + "' is not one podcheck reads");
      w.tensors[name] = random_tensor(w, name, *dt, shape);
      w.random_inputs.insert(name);
    } else if (type == "safetensors") {
      if (!in.contains("path") || !in["path"].is_string() || !in.contains("tensor_key") || !in["tensor_key"].is_string())
        w.fail("safetensors input '" + name + "' needs a path and a tensor_key");
      const std::string rel = in["path"].get<std::string>();
      const std::string key = in["tensor_key"].get<std::string>();
      fs::path p = (fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(w.root) / rel).lexically_normal();
      auto& file = (*w.blobs)[p.string()];
      try {
        if (!file) file = std::make_shared<safetensors::File>(safetensors::File::open(p.string()));
        const auto& info = file->info(key);
        if (std::string(safetensors::dtype_name(info.dtype)) != st_name_of(fdt))
          w.fail(fmt::format("input '{}' (file '{}', tensor '{}'): dtype {} where the definition says {}", name, rel, key,
                             safetensors::dtype_name(info.dtype), fdt));
        if (info.shape != shape)
          w.fail(fmt::format("input '{}' (file '{}', tensor '{}'): shape {} where the axes give {}", name, rel, key, info.shape_string(),
                             safetensors::TensorInfo{key, {}, shape, 0, 0}.shape_string()));
        w.tensors[name] = safetensors::to_tensor(*file, key);
      } catch (const safetensors::SafetensorsError& e) {
        w.fail(fmt::format("input '{}': {}", name, e.what()));
      }
    } else if (type == "scalar") {
      w.fail("tensor input '" + name + "' is given as a scalar");
    } else {
      w.fail("input '" + name + "' has unknown type '" + type + "'");
    }
  }
}

// ---- constraints: `expr OP expr` over axes, integers, NAME[i].item() and NAME.shape[k] -----------------------

struct Expr {
  const Work& w;
  const std::string& s;
  std::size_t i = 0;
  std::string constraint;

  [[noreturn]] void bad(const std::string& why) const {
    w.fail("constraint '" + constraint + "' is not one podcheck evaluates (" + why + ")");
  }
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(const char* t) {
    ws();
    std::size_t n = std::strlen(t);
    if (s.compare(i, n, t) == 0) {
      i += n;
      return true;
    }
    return false;
  }
  std::int64_t number() {
    ws();
    std::size_t b = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (b == i) bad("a number expected at " + std::to_string(b));
    return std::stoll(s.substr(b, i - b));
  }
  std::int64_t factor() {
    ws();
    if (eat("(")) {
      std::int64_t v = sum();
      if (!eat(")")) bad("')' expected");
      return v;
    }
    if (eat("-")) return -factor();
    if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) return number();
    std::size_t b = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
    if (b == i) bad("a name expected at " + std::to_string(b));
    const std::string name = s.substr(b, i - b);
    if (eat("[")) {
      const bool neg = eat("-");
      std::int64_t k = number();
      if (!eat("]") || !eat(".item()")) bad("NAME[i].item() expected");
      std::vector<std::int32_t> v = w.ints(name);
      std::int64_t at = neg ? static_cast<std::int64_t>(v.size()) - k : k;
      if (at < 0 || at >= static_cast<std::int64_t>(v.size())) w.fail("constraint '" + constraint + "': " + name + " has " + std::to_string(v.size()) + " entries");
      return v[static_cast<std::size_t>(at)];
    }
    if (eat(".shape[")) {
      std::int64_t k = number();
      if (!eat("]")) bad("NAME.shape[k] expected");
      const Tensor& t = w.tensor(name);
      if (k < 0 || k >= static_cast<std::int64_t>(t.shape.size())) bad(name + " has no dimension " + std::to_string(k));
      return t.shape[static_cast<std::size_t>(k)];
    }
    return w.axis(name);
  }
  std::int64_t product() {
    std::int64_t v = factor();
    while (eat("*")) v *= factor();
    return v;
  }
  std::int64_t sum() {
    std::int64_t v = product();
    for (;;) {
      if (eat("+")) v += product();
      else if (eat("-")) v -= product();
      else return v;
    }
  }
};

void check_constraints(const Work& w) {
  if (!w.def.j.contains("constraints")) return;
  for (const auto& c : w.def.j["constraints"]) {
    const std::string text = c.get<std::string>();
    Expr e{w, text, 0, text};
    const std::int64_t a = e.sum();
    std::string op;
    for (const char* o : {"==", "!=", "<=", ">=", "<", ">"})
      if (e.eat(o)) {
        op = o;
        break;
      }
    if (op.empty()) e.bad("a comparison expected");
    const std::int64_t b = e.sum();
    e.ws();
    if (e.i != text.size()) e.bad("text after the expression");
    const bool ok = op == "==" ? a == b : op == "!=" ? a != b : op == "<=" ? a <= b : op == ">=" ? a >= b : op == "<" ? a < b : a > b;
    if (!ok) w.fail(fmt::format("constraint '{}' does not hold ({} {} {})", text, a, op, b));
  }
}

// ---- the case -------------------------------------------------------------------------------------------------

Side paged_side(const Work& w, const std::string& sfx, const std::string& qname, bool has_qo) {
  Side s;
  s.q = w.tensor(qname);
  s.kv.paged = true;
  s.kv.layout = Layout::NHD;
  s.kv.k = w.tensor("k_cache" + sfx);
  s.kv.v = w.tensor("v_cache" + sfx);
  const int ps = static_cast<int>(w.axis("page_size"));
  s.kv.pages.page_size = ps;
  s.kv.pages.indptr = w.ints("kv_indptr" + sfx);
  s.kv.pages.indices = w.ints("kv_indices" + sfx);
  const std::size_t R = s.kv.pages.indptr.empty() ? 0 : s.kv.pages.indptr.size() - 1;
  if (w.has("kv_last_page_len" + sfx)) {
    s.kv.pages.last_page_len = w.ints("kv_last_page_len" + sfx);
  } else {
    // no kv_last_page_len: every page full (the page_size-1 definitions), 1 for empty requests as podcheck writes
    s.kv.pages.last_page_len.assign(R, ps);
    for (std::size_t r = 0; r < R; ++r)
      if (s.kv.pages.indptr[r + 1] == s.kv.pages.indptr[r]) s.kv.pages.last_page_len[r] = 1;
  }
  s.qo_indptr = has_qo ? w.ints("qo_indptr" + sfx) : uniform_indptr(static_cast<std::int64_t>(R));
  return s;
}

void side_scalars(const Work& w, const std::string& sfx, SideParams& p) {
  p.mask_mode = w.scalar("causal" + sfx) != 0 ? MaskMode::causal : MaskMode::none;
  p.window_left = static_cast<int>(w.scalar("window_left" + sfx));
  p.sm_scale = w.scalar("sm_scale" + sfx);
  p.q_scale = w.scalar("q_scale" + sfx);
  p.k_scale = w.scalar("k_scale" + sfx);
  p.v_scale = w.scalar("v_scale" + sfx);
}

Case build(const Work& w, const json& podcheck_info) {
  Case c;
  const Def& d = w.def;
  c.num_qo_heads = static_cast<int>(d.consts.at("num_qo_heads"));
  c.num_kv_heads = static_cast<int>(d.consts.at("num_kv_heads"));
  c.head_dim = static_cast<int>(d.consts.at("head_dim"));
  c.lse_base = LseBase::base2;
  c.fp8_overflow = Fp8Overflow::saturate;
  c.seed = w.seed;
  c.distribution = w.random_inputs.empty() ? "fib-recorded" : "fib-random";
  const std::string out_name = d.kind == fib::Kind::pod || d.kind == fib::Kind::batch_pod ? "output_p" : "output";
  auto out_dt = fib::model_dtype(d.j["outputs"].contains(out_name) ? d.j["outputs"][out_name].value("dtype", std::string()) : "");
  if (!out_dt) w.fail("output '" + out_name + "' has no dtype podcheck reads");
  c.dtype_o = *out_dt;
  switch (d.kind) {
    case fib::Kind::decode: {
      Side s = paged_side(w, "", "q", false);
      s.params.sm_scale = w.scalar("sm_scale");
      c.decode = std::move(s);
      break;
    }
    case fib::Kind::paged_prefill: {
      Side s = paged_side(w, "", "q", true);
      s.params.mask_mode = MaskMode::causal;
      s.params.sm_scale = w.scalar("sm_scale");
      c.prefill = std::move(s);
      break;
    }
    case fib::Kind::ragged_prefill: {
      Side s;
      s.q = w.tensor("q");
      s.qo_indptr = w.ints("qo_indptr");
      const std::vector<std::int32_t> kvp = w.ints("kv_indptr");
      if (kvp.empty() || kvp[0] != 0) w.fail("kv_indptr does not start at 0");
      Tensor k = w.tensor("k"), v = w.tensor("v");
      if (s.qo_indptr.size() == 2) {  // one request: dense K/V
        s.kv.paged = false;
        s.kv.layout = Layout::NHD;
        s.kv.k = std::move(k);
        s.kv.v = std::move(v);
      } else {  // a batch: each token its own page of size 1
        s.kv.paged = true;
        s.kv.layout = Layout::NHD;
        k.shape.insert(k.shape.begin() + 1, 1);
        v.shape.insert(v.shape.begin() + 1, 1);
        s.kv.k = std::move(k);
        s.kv.v = std::move(v);
        s.kv.pages.page_size = 1;
        s.kv.pages.indptr = kvp;
        for (std::int32_t t = 0; t < kvp.back(); ++t) s.kv.pages.indices.push_back(t);
        s.kv.pages.last_page_len.assign(kvp.size() - 1, 1);
      }
      s.params.mask_mode = MaskMode::causal;
      s.params.sm_scale = w.scalar("sm_scale");
      c.prefill = std::move(s);
      break;
    }
    case fib::Kind::pod: {
      Side p;
      p.q = w.tensor("q_p");
      p.qo_indptr = {0, static_cast<std::int32_t>(p.q.shape[0])};
      p.kv.paged = false;
      p.kv.layout = Layout::NHD;
      p.kv.k = w.tensor("k_p");
      p.kv.v = w.tensor("v_p");
      side_scalars(w, "_p", p.params);
      Side dd = paged_side(w, "_d", "q_d", false);
      side_scalars(w, "_d", dd.params);
      c.prefill = std::move(p);
      c.decode = std::move(dd);
      break;
    }
    case fib::Kind::batch_pod: {
      Side p = paged_side(w, "_p", "q_p", true);
      Side dd = paged_side(w, "_d", "q_d", true);
      side_scalars(w, "_p", p.params);
      side_scalars(w, "_d", dd.params);
      c.prefill = std::move(p);
      c.decode = std::move(dd);
      break;
    }
  }
  const Side& any = c.prefill ? *c.prefill : *c.decode;
  c.dtype_q = any.q.dtype;
  c.dtype_kv = any.kv.k.dtype;
  c.id = "fib_" + d.j["name"].get<std::string>() + "_" + w.uuid;
  if (podcheck_info.is_object()) {  // written by podcheck export fib: the case's own id, seed and distribution
    if (podcheck_info.contains("case_id") && podcheck_info["case_id"].is_string()) c.id = podcheck_info["case_id"].get<std::string>();
    if (podcheck_info.contains("seed") && podcheck_info["seed"].is_number_unsigned()) c.seed = podcheck_info["seed"].get<std::uint64_t>();
    if (podcheck_info.contains("distribution") && podcheck_info["distribution"].is_string())
      c.distribution = podcheck_info["distribution"].get<std::string>();
    if (podcheck_info.contains("fp8_overflow") && podcheck_info["fp8_overflow"].is_string())
      c.fp8_overflow = fp8_overflow_from_name(podcheck_info["fp8_overflow"].get<std::string>());
    if (podcheck_info.contains("default_sm_scale") && podcheck_info["default_sm_scale"].is_array())
      for (const auto& n : podcheck_info["default_sm_scale"]) {  // "not given" (1/sqrt(head_dim)) in the case
        const std::string name = n.is_string() ? n.get<std::string>() : "";
        Side* s = name == "sm_scale_p" ? (c.prefill ? &*c.prefill : nullptr)
                  : name == "sm_scale_d" ? (c.decode ? &*c.decode : nullptr)
                  : name == "sm_scale" ? (c.prefill ? &*c.prefill : c.decode ? &*c.decode : nullptr) : nullptr;
        if (s) s->params.sm_scale.reset();
      }
  }
  return c;
}

Def read_def(const fs::path& p, const json& j) {
  auto bad = [&](const std::string& what) { fail("dataset file '" + p.string() + "': " + what); };
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || !j.contains("op_type") || !j["op_type"].is_string())
    bad("not a definition (name and op_type expected)");
  Def d{p.string(), *fib::kind_of(j["name"], j["op_type"]), j, {}, {}};
  if (!j.contains("axes") || !j["axes"].is_object()) bad("definition without axes");
  for (auto it = j["axes"].begin(); it != j["axes"].end(); ++it) {
    const json& a = it.value();
    const std::string t = a.value("type", std::string());
    if (t == "const") {
      if (!a.contains("value") || !a["value"].is_number_integer() || a["value"].get<std::int64_t>() < 0)
        bad("const axis '" + it.key() + "' without a non-negative integer value");
      d.consts[it.key()] = a["value"].get<std::int64_t>();
    } else if (t == "var") {
      d.vars.insert(it.key());
    } else {
      bad("axis '" + it.key() + "' has type '" + t + "'");
    }
  }
  for (const char* sec : {"inputs", "outputs"}) {
    if (!j.contains(sec) || !j[sec].is_object()) bad(std::string("definition without ") + sec);
    for (auto it = j[sec].begin(); it != j[sec].end(); ++it) {
      const json& s = it.value();
      if (!s.is_object() || !s.contains("dtype") || !s["dtype"].is_string() || !s.contains("shape"))
        bad(std::string(sec) + " '" + it.key() + "' lacks shape or dtype");
      if (!s["shape"].is_null()) {
        if (!s["shape"].is_array()) bad(std::string(sec) + " '" + it.key() + "': shape is neither a list nor null");
        for (const auto& a : s["shape"])
          if (!a.is_string() || (!d.consts.count(a.get<std::string>()) && !d.vars.count(a.get<std::string>())))
            bad(std::string(sec) + " '" + it.key() + "': shape names an undeclared axis " + a.dump());
      }
    }
  }
  for (const char* c : {"num_qo_heads", "num_kv_heads", "head_dim"})
    if (!d.consts.count(c)) bad(std::string("const axis '") + c + "' expected");
  if (d.kind != fib::Kind::ragged_prefill && !d.consts.count("page_size")) bad("const axis 'page_size' expected");
  // the inputs must be those of the definition kind podcheck maps (as written by flashinfer-bench / podcheck)
  const fib::DefSpec want = fib::make_def(d.kind, static_cast<int>(d.consts["num_qo_heads"]), static_cast<int>(d.consts["num_kv_heads"]),
                                          static_cast<int>(d.consts["head_dim"]),
                                          static_cast<int>(d.consts.count("page_size") ? d.consts["page_size"] : 1), DType::float16,
                                          DType::float16, DType::float16, true);
  std::set<std::string> have, need, optional_in;
  for (auto it = j["inputs"].begin(); it != j["inputs"].end(); ++it) have.insert(it.key());
  for (const auto& t : want.inputs) (t.name.rfind("kv_last_page_len", 0) == 0 ? optional_in : need).insert(t.name);
  for (const auto& n : need)
    if (!have.count(n)) bad("input '" + n + "' expected in a " + std::string(fib::op_type_of(d.kind)) + " definition of this kind");
  for (const auto& n : have)
    if (!need.count(n) && !optional_in.count(n)) bad("input '" + n + "' is not one podcheck maps for this kind of definition");
  return d;
}

std::vector<fs::path> files_under(const fs::path& dir, const char* ext) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

FibImportResult import_fib(const std::string& dataset_dir, const FibImportOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dataset_dir, ec)) fail("'" + dataset_dir + "' is not a folder (expected a flashinfer-bench dataset)");
  const fs::path root(dataset_dir);
  std::map<std::string, Def> defs;
  std::map<std::string, int> ignored;
  for (const auto& p : files_under(root / "definitions", ".json")) {
    json j = json::parse(read_text_file(p), nullptr, false);
    if (j.is_discarded()) fail("dataset file '" + p.string() + "': not valid JSON");
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || !j.contains("op_type") || !j["op_type"].is_string())
      fail("dataset file '" + p.string() + "': not a definition (name and op_type expected)");
    const std::string name = j["name"];
    if (!options.definitions.empty() && std::find(options.definitions.begin(), options.definitions.end(), name) == options.definitions.end())
      continue;
    if (!fib::kind_of(name, j["op_type"])) {
      ignored[j["op_type"].get<std::string>()]++;
      continue;
    }
    if (defs.count(name)) fail("dataset file '" + p.string() + "': definition '" + name + "' is defined twice");
    defs.emplace(name, read_def(p, j));
  }
  for (const auto& want : options.definitions)
    if (!defs.count(want)) fail("definition '" + want + "' is not in '" + dataset_dir + "/definitions' (or not one podcheck reads)");
  FibImportResult r;
  std::map<std::string, std::shared_ptr<safetensors::File>> blobs;
  std::set<std::string> ids;
  const std::string root_s = root.string();
  int skipped_lines = 0;
  for (const auto& p : files_under(root / "workloads", ".jsonl")) {
    std::istringstream in(read_text_file(p));
    std::size_t lineno = 0;
    for (std::string line; std::getline(in, line);) {
      ++lineno;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json t = json::parse(line, nullptr, false);
      auto bad = [&](const std::string& what) { fail(fmt::format("dataset file '{}', line {}: {}", p.string(), lineno, what)); };
      if (t.is_discarded() || !t.is_object()) bad("not valid JSON");
      if (!t.contains("definition") || !t["definition"].is_string()) bad("no definition name");
      auto d = defs.find(t["definition"].get<std::string>());
      if (d == defs.end()) {
        ++skipped_lines;
        continue;
      }
      if (!t.contains("workload") || !t["workload"].is_object()) bad("no workload");
      const json& wl = t["workload"];
      if (!wl.contains("uuid") || !wl["uuid"].is_string() || wl["uuid"].get<std::string>().empty()) bad("workload without a uuid");
      Work w{d->second, p.string(), lineno, wl["uuid"], root_s, options.seed, {}, {}, {}, {}, &blobs};
      const json& pc = t.contains("podcheck") ? t["podcheck"] : json();
      if (pc.is_object() && pc.contains("seed") && pc["seed"].is_number_unsigned()) w.seed = pc["seed"].get<std::uint64_t>();
      w.axes.insert(d->second.consts.begin(), d->second.consts.end());
      if (!wl.contains("axes") || !wl["axes"].is_object()) w.fail("workload without axes");
      for (auto it = wl["axes"].begin(); it != wl["axes"].end(); ++it) {
        if (!d->second.vars.count(it.key()))
          w.fail("axis '" + it.key() + "' is not a var axis of the definition" + (d->second.consts.count(it.key()) ? " (it is const)" : ""));
        if (!it.value().is_number_integer() || it.value().get<std::int64_t>() < 0) w.fail("axis '" + it.key() + "' is not a non-negative integer");
        w.axes[it.key()] = it.value().get<std::int64_t>();
      }
      if (!wl.contains("inputs") || !wl["inputs"].is_object()) w.fail("workload without inputs");
      resolve_inputs(w, wl["inputs"]);
      if (pc.is_object() && pc.contains("exact_scalars") && pc["exact_scalars"].is_object())
        for (auto it = pc["exact_scalars"].begin(); it != pc["exact_scalars"].end(); ++it)
          if (w.scalars.count(it.key()) && it.value().is_number()) w.scalars[it.key()] = it.value().get<double>();
      check_constraints(w);
      FibCase fc;
      fc.kase = build(w, pc);
      fc.definition = d->first;
      fc.uuid = w.uuid;
      try {
        validate_case(fc.kase);
      } catch (const InvalidCase& e) {
        w.fail(std::string("the workload is not a valid case: ") + e.what());
      }
      if (!ids.insert(fc.kase.id).second) w.fail("case id '" + fc.kase.id + "' appears twice");
      r.cases.push_back(std::move(fc));
    }
  }
  if (!ignored.empty()) {
    std::string s = "ignored definitions podcheck does not read, by op_type:";
    for (const auto& [op, n] : ignored) s += fmt::format(" {} ({})", op, n);
    r.notes.push_back(s);
  }
  if (skipped_lines) r.notes.push_back(fmt::format("{} workload line(s) of those definitions skipped", skipped_lines));
  return r;
}

}  // namespace podcheck
