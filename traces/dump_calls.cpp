// Reading FlashInfer API-logging dumps: folders, metadata, capture order, argument binding (dump_calls.hpp).
#include "traces/dump_calls.hpp"

#include "fixtures/fixture_io.hpp"
#include "traces/text_input.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace podcheck::dump {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what) { throw FormatError(what); }

std::vector<std::uint8_t> no_bytes;

const std::regex& call_name_re() {
  static const std::regex re(R"(^\d{8}_\d{6}_\d{3}_pid\d+_.+_call\d+$)");
  return re;
}

void scan_call(const fs::path& dir, const std::string& name, std::vector<Folder>& out) {
  auto one = [&](const fs::path& d, const std::string& n) {
    Folder f;
    f.name = n;
    f.path = d.string();
    f.metadata_jsonl = read_text_file(d / "metadata.jsonl");
    f.has_pt = fs::exists(d / "inputs.pt") || fs::exists(d / "outputs.pt");
    out.push_back(std::move(f));
  };
  const fs::path flushes = dir / "graph_flushes";
  std::vector<std::string> snaps;
  std::error_code ec;
  if (fs::is_directory(flushes, ec))
    for (const auto& e : fs::directory_iterator(flushes))
      if (e.is_directory() && fs::exists(e.path() / "metadata.jsonl")) snaps.push_back(e.path().filename().string());
  std::sort(snaps.begin(), snaps.end());
  if (snaps.empty()) {
    one(dir, name);
    return;
  }
  // A graph-captured call: every replay is a snapshot; the folder's own files repeat the last one.
  for (const auto& s : snaps) one(flushes / s, name + "/graph_flushes/" + s);
}

// The record's key in session.jsonl: the call folder's name, plus "/graph_flushes/flush_K" for a snapshot.
std::string session_key(const std::string& dump_dir) {
  fs::path p(dump_dir);
  std::vector<std::string> parts;
  for (const auto& c : p) parts.push_back(c.string());
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (std::regex_match(parts[i], call_name_re())) {
      std::string k = parts[i];
      if (i + 2 < parts.size() && parts[i + 1] == "graph_flushes") k += "/graph_flushes/" + parts[i + 2];
      return k;
    }
  return "";
}

// Top-level parameter list of a Python signature string "(a, b: int = 1, *args, c=None, **kw) -> None".
struct SigParam {
  std::string name;
  std::string default_text;  // "" when none
  bool has_default = false;
  ParamKind kind = ParamKind::positional;
};

std::vector<SigParam> parse_signature(const std::string& s, bool* ok) {
  *ok = false;
  std::vector<SigParam> out;
  if (s.empty() || s[0] != '(') return out;
  int depth = 0;
  char quote = 0;
  std::size_t end = std::string::npos;
  std::vector<std::string> items;
  std::string cur;
  for (std::size_t i = 1; i < s.size(); ++i) {
    char ch = s[i];
    if (quote) {
      cur += ch;
      if (ch == '\\' && i + 1 < s.size()) cur += s[++i];
      else if (ch == quote) quote = 0;
      continue;
    }
    if (ch == '\'' || ch == '"') quote = ch;
    else if (ch == '(' || ch == '[' || ch == '{') ++depth;
    else if (ch == ']' || ch == '}') --depth;
    else if (ch == ')') {
      if (depth == 0) {
        end = i;
        break;
      }
      --depth;
    } else if (ch == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
      continue;
    }
    cur += ch;
  }
  if (end == std::string::npos) return out;
  if (!cur.empty() || !items.empty()) items.push_back(cur);
  bool kw_only = false;
  for (std::string it : items) {
    auto trim = [](std::string x) {
      x.erase(0, x.find_first_not_of(' '));
      x.erase(x.find_last_not_of(' ') + 1);
      return x;
    };
    it = trim(it);
    if (it.empty()) continue;
    if (it == "*") {
      kw_only = true;
      continue;
    }
    if (it == "/") continue;
    SigParam p;
    p.kind = kw_only ? ParamKind::keyword_only : ParamKind::positional;
    if (it.rfind("**", 0) == 0) {
      p.kind = ParamKind::var_keyword;
      it = it.substr(2);
    } else if (it[0] == '*') {
      p.kind = ParamKind::var_positional;
      kw_only = true;
      it = it.substr(1);
    }
    // name up to ':' or '='; default after the top-level '='
    std::size_t stop = it.find_first_of(":=");
    p.name = trim(it.substr(0, stop));
    int d = 0;
    char q = 0;
    for (std::size_t i = 0; i < it.size(); ++i) {
      char ch = it[i];
      if (q) {
        if (ch == q) q = 0;
        continue;
      }
      if (ch == '\'' || ch == '"') q = ch;
      else if (ch == '[' || ch == '(' || ch == '{') ++d;
      else if (ch == ']' || ch == ')' || ch == '}') --d;
      else if (ch == '=' && d == 0) {
        p.has_default = true;
        p.default_text = trim(it.substr(i + 1));
        break;
      }
    }
    out.push_back(std::move(p));
  }
  *ok = true;
  return out;
}

}  // namespace

void Call::fail(const std::string& what) const {
  throw FormatError("dump folder '" + display + "' (" + function + " call " + std::to_string(call_sequence) + "): " + what);
}
void Call::fail_file(const std::string& file, const std::string& what) const {
  throw FormatError("dump folder '" + display + "', file '" + file + "': " + what);
}

Root scan_root(const std::string& dir) {
  Root r;
  r.name = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail("'" + dir + "' is not a folder (expected a FlashInfer dump folder, FLASHINFER_DUMP_DIR)");
  const fs::path d(dir);
  if (fs::exists(d / "metadata.jsonl")) {  // one call folder
    fs::path parent = fs::absolute(d).parent_path();
    if (parent.filename() == "graph_flushes") fail("'" + dir + "' is a graph flush snapshot: give its call folder or the dump root");
    if (fs::exists(parent / "session.jsonl")) r.session_jsonl = read_text_file(parent / "session.jsonl");
    scan_call(d, fs::absolute(d).filename().string(), r.folders);
  } else {
    if (fs::exists(d / "session.jsonl")) r.session_jsonl = read_text_file(d / "session.jsonl");
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) {
      if (!e.is_directory()) continue;
      const std::string n = e.path().filename().string();
      if (fs::exists(e.path() / "metadata.jsonl")) names.push_back(n);
      else if (std::regex_match(n, call_name_re()))
        fail("dump folder '" + dir + "/" + n + "': missing metadata.jsonl (every call folder has one; the dump is damaged "
             "or was copied incompletely)");
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names) scan_call(d / n, n, r.folders);
  }
  if (r.folders.empty())
    fail("no FlashInfer dump calls under '" + dir +
         "' (expected <timestamp>_pid<P>_<function>_call<N>/metadata.jsonl folders, written with FLASHINFER_LOGLEVEL=10)");
  for (const auto& f : r.folders)
    if (f.has_pt)
      fail("dump folder '" + dir + "/" + f.name +
           "' holds inputs.pt / outputs.pt (torch.save format), which podcheck does not read: record with "
           "FLASHINFER_DUMP_SAFETENSORS=1 (and FLASHINFER_LOGLEVEL=10), or convert the dump with "
           "traces/tools/pt_to_safetensors.py (docs/CAPTURE.md)");
  return r;
}

nlohmann::json parse_metadata(const std::string& text, const std::string& where) {
  std::string last;
  std::size_t lineno = 0, last_no = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    last = line;
    last_no = lineno;
  }
  if (last.empty()) fail(where + ": empty (no metadata record)");
  nlohmann::json j = nlohmann::json::parse(last, nullptr, false);
  if (j.is_discarded()) fail(where + ": line " + std::to_string(last_no) + " is not valid JSON");
  if (!j.is_object()) fail(where + ": line " + std::to_string(last_no) + " is not a JSON object");
  auto need = [&](const char* k, nlohmann::json::value_t t1, nlohmann::json::value_t t2) {
    if (!j.contains(k)) fail(where + ": missing field '" + k + "'");
    if (j[k].type() != t1 && j[k].type() != t2) fail(where + ": field '" + std::string(k) + "' has the wrong type");
  };
  using T = nlohmann::json::value_t;
  need("function_name", T::string, T::string);
  need("call_sequence", T::number_unsigned, T::number_integer);
  need("timestamp", T::string, T::string);
  need("process_id", T::number_unsigned, T::number_integer);
  need("execution_status", T::string, T::string);
  need("input_metadata", T::object, T::object);
  need("tensor_details", T::object, T::object);
  need("function_signature", T::string, T::string);
  if (j.contains("tensor_format") && j["tensor_format"] != "safetensors")
    fail(where + ": tensor_format is " + j["tensor_format"].dump() +
         "; podcheck reads dumps written with FLASHINFER_DUMP_SAFETENSORS=1 (or converted with traces/tools/pt_to_safetensors.py)");
  if (j.contains("self_id") && !j["self_id"].is_number_integer())
    fail(where + ": field 'self_id' is not an integer");
  return j;
}

std::vector<Call> read_calls(const Root& root) {
  std::vector<Call> calls;
  for (const Folder& f : root.folders) {
    Call c;
    c.root = root.name;
    c.folder = f.name;
    c.display = root.name + "/" + f.name;
    c.record = parse_metadata(f.metadata_jsonl, "dump folder '" + c.display + "', file 'metadata.jsonl'");
    c.function = c.record["function_name"].get<std::string>();
    auto dot = c.function.rfind('.');
    if (dot != std::string::npos) {
      c.klass = c.function.substr(0, dot);
      c.method = c.function.substr(dot + 1);
    } else {
      c.method = c.function;
    }
    c.call_sequence = c.record["call_sequence"].get<std::int64_t>();
    c.process_id = c.record["process_id"].get<std::int64_t>();
    if (c.record.contains("self_id")) c.self_id = std::to_string(c.record["self_id"].get<std::int64_t>());
    c.timestamp = c.record["timestamp"].get<std::string>();
    c.status = c.record["execution_status"].get<std::string>();
    if (auto p = f.name.find("/graph_flushes/flush_"); p != std::string::npos) {
      try {
        c.flush = std::stoi(f.name.substr(p + 21));
      } catch (const std::exception&) {
        c.fail("cannot read the flush index of '" + f.name + "'");
      }
    }
    auto open = [&](const char* file, const std::optional<std::vector<std::uint8_t>>& mem) -> std::shared_ptr<safetensors::File> {
      try {
        if (!f.path.empty()) {
          fs::path p = fs::path(f.path) / file;
          if (!fs::exists(p)) return nullptr;
          return std::make_shared<safetensors::File>(safetensors::open_file(p.string()));
        }
        if (!mem) return nullptr;
        return std::make_shared<safetensors::File>(safetensors::memory_source(*mem, c.display + "/" + file));
      } catch (const safetensors::SafetensorsError& e) {
        c.fail_file(file, e.what());
      }
    };
    c.inputs = open("inputs.safetensors", f.inputs);
    c.outputs = open("outputs.safetensors", f.outputs);
    // tensor_details must describe the files' tensors (a mismatch means a damaged or mixed-up dump)
    const auto& det = c.record["tensor_details"];
    for (auto it = det.begin(); it != det.end(); ++it) {
      const bool out = it.key().rfind("result", 0) == 0;
      const auto& file = out ? c.outputs : c.inputs;
      const char* fname = out ? "outputs.safetensors" : "inputs.safetensors";
      if (!file) continue;  // absent files are reported where a tensor is needed
      const auto* info = file->header().find(it.key());
      if (!info) c.fail_file(fname, "tensor '" + it.key() + "' listed in metadata tensor_details is not in the file");
      const auto& v = it.value();
      if (!v.is_object() || !v.contains("shape") || !v["shape"].is_array() || !v.contains("dtype") || !v["dtype"].is_string())
        c.fail_file("metadata.jsonl", "tensor_details of '" + it.key() + "' lacks shape or dtype");
      std::vector<std::int64_t> shape;
      for (const auto& d : v["shape"]) {
        if (!d.is_number_integer()) c.fail_file("metadata.jsonl", "tensor_details of '" + it.key() + "': shape is not integers");
        shape.push_back(d.get<std::int64_t>());
      }
      if (shape != info->shape || v["dtype"].get<std::string>() != safetensors::torch_dtype_name(info->dtype))
        c.fail_file(fname, "tensor '" + it.key() + "': mismatched shapes: metadata says " + v["shape"].dump() + " " +
                               v["dtype"].get<std::string>() + ", the file holds " + info->shape_string() + " " +
                               std::string(safetensors::torch_dtype_name(info->dtype)));
    }
    calls.push_back(std::move(c));
  }
  // capture order: session.jsonl where it knows the folder, then the rest by (timestamp, pid, folder)
  std::map<std::string, std::size_t> first_seen;
  {
    std::istringstream in(root.session_jsonl);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("dump_dir") || !j["dump_dir"].is_string()) continue;
      std::string k = session_key(j["dump_dir"].get<std::string>());
      if (!k.empty()) first_seen.emplace(k, n++);
    }
  }
  std::stable_sort(calls.begin(), calls.end(), [&](const Call& a, const Call& b) {
    auto ia = first_seen.find(a.folder), ib = first_seen.find(b.folder);
    const bool ka = ia != first_seen.end(), kb = ib != first_seen.end();
    if (ka && kb) return ia->second < ib->second;
    if (ka != kb) return ka;
    if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
    if (a.process_id != b.process_id) return a.process_id < b.process_id;
    return a.folder < b.folder;
  });
  for (std::size_t i = 0; i < calls.size(); ++i) calls[i].order = i;
  return calls;
}

nlohmann::json default_value(const char* repr) {
  if (!repr) return nullptr;
  std::string s(repr);
  if (s == "None") return nullptr;
  if (s == "True") return true;
  if (s == "False") return false;
  if (s.size() >= 2 && (s[0] == '\'' || s[0] == '"')) return s.substr(1, s.size() - 2);
  auto j = nlohmann::json::parse(s, nullptr, false);
  return j.is_discarded() ? nlohmann::json(s) : j;
}

Args::Args(const Call& call, const Signature& sig) : call_(call) {
  const auto& rec = call.record;
  bool ok = false;
  auto recorded = parse_signature(rec["function_signature"].get<std::string>(), &ok);
  if (!ok) call.fail_file("metadata.jsonl", "function_signature " + rec["function_signature"].dump() + " cannot be read");
  // The recorded signature must be the one podcheck maps (FlashInfer fb28d7242b35).
  auto where = [&](std::size_t i) { return "parameter " + std::to_string(i) + " of the recorded signature"; };
  if (recorded.size() != sig.params.size())
    call.fail_file("metadata.jsonl", "the recorded signature of " + call.function + " has " + std::to_string(recorded.size()) +
                                         " parameters, FlashInfer fb28d7242b35's has " + std::to_string(sig.params.size()) +
                                         ": podcheck maps the arguments by that version's signature");
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    const Param& p = sig.params[i];
    const SigParam& r = recorded[i];
    if (r.name != p.name || r.kind != p.kind)
      call.fail_file("metadata.jsonl", where(i) + " is '" + r.name + "', FlashInfer fb28d7242b35 has '" + p.name + "'");
    const bool want_default = p.default_repr != nullptr;
    if (r.has_default != want_default || (want_default && r.default_text != p.default_repr))
      call.fail_file("metadata.jsonl", where(i) + " ('" + r.name + "') has default '" + r.default_text +
                                           "', FlashInfer fb28d7242b35 has '" + (p.default_repr ? p.default_repr : "") + "'");
  }

  for (const auto* list : {&sig.params, &sig.forwarded})
    for (const Param& p : *list)
      if (p.kind == ParamKind::positional || p.kind == ParamKind::keyword_only) {
        Value d;
        d.kind = Value::absent_default;
        d.j = default_value(p.default_repr);
        values_[p.name] = d;
      }
  std::set<std::string> given;

  std::set<std::string> tensor_keys;
  if (call.inputs)
    for (const auto& t : call.inputs->header().tensors) tensor_keys.insert(t.key);
  const auto& meta = rec["input_metadata"];
  auto value_of = [&](const std::string& key) -> std::optional<Value> {
    Value v;
    if (tensor_keys.count(key)) {
      v.kind = Value::tensor;
      v.key = key;
      return v;
    }
    if (!meta.contains(key)) return std::nullopt;
    const auto& m = meta[key];
    if (m.is_object() && m.value("type", "") == "tuple" && m.contains("items") && m["items"].is_array()) {
      bool all_tensors = !m["items"].empty();
      for (const auto& it : m["items"]) all_tensors &= it.is_object() && it.value("type", "") == "torch.Tensor";
      if (all_tensors) {
        v.kind = Value::tuple_of_tensors;
        for (std::size_t j = 0; j < m["items"].size(); ++j) {
          std::string k = key + "__" + std::to_string(j);
          if (!tensor_keys.count(k))
            call.fail_file("inputs.safetensors", "tensor '" + k + "' (member " + std::to_string(j) + " of " + key + ") is not in the file");
          v.members.push_back(k);
        }
        return v;
      }
    }
    if (m.is_object() && m.value("type", "") == "torch.Tensor")
      call.fail_file("inputs.safetensors", "tensor '" + key + "' is recorded in input_metadata but not in the file");
    v.kind = Value::json;
    v.j = m;
    return v;
  };
  // positional: arg_0 .. arg_N (the highest index recorded anywhere)
  int max_arg = -1;
  auto scan = [&](const std::string& k) {
    if (k.rfind("arg_", 0) != 0) return;
    std::string num = k.substr(4, k.find("__") == std::string::npos ? std::string::npos : k.find("__") - 4);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) return;
    max_arg = std::max(max_arg, std::stoi(num));
  };
  for (const auto& k : tensor_keys) scan(k);
  for (auto it = meta.begin(); it != meta.end(); ++it) scan(it.key());
  std::size_t pi = 0;
  std::size_t legacy_i = 0;
  for (int i = 0; i <= max_arg; ++i) {
    std::string key = "arg_" + std::to_string(i);
    auto v = value_of(key);
    if (!v) call.fail_file("metadata.jsonl", "positional argument " + std::to_string(i) + " is recorded neither in input_metadata nor in inputs.safetensors");
    while (pi < sig.params.size() && sig.params[pi].kind != ParamKind::positional && sig.params[pi].kind != ParamKind::var_positional) ++pi;
    if (pi < sig.params.size() && sig.params[pi].kind == ParamKind::positional) {
      values_[sig.params[pi].name] = *v;
      given.insert(sig.params[pi].name);
      ++pi;
    } else if (pi < sig.params.size() && sig.params[pi].kind == ParamKind::var_positional) {
      if (legacy_i < sig.legacy.size()) {
        values_[sig.legacy[legacy_i]] = *v;
        given.insert(sig.legacy[legacy_i++]);
      } else {
        extra_.push_back(key);
      }
    } else {
      call.fail_file("metadata.jsonl", "positional argument " + std::to_string(i) + " has no parameter in " + call.function + "'s signature");
    }
  }
  // keywords: kwarg_<name>
  std::set<std::string> kw;
  for (const auto& k : tensor_keys)
    if (k.rfind("kwarg_", 0) == 0 && k.find("__") == std::string::npos) kw.insert(k.substr(6));
  for (auto it = meta.begin(); it != meta.end(); ++it)
    if (it.key().rfind("kwarg_", 0) == 0) kw.insert(it.key().substr(6));
  for (const auto& name : kw) {
    auto it = values_.find(name);
    if (it == values_.end()) call.fail_file("metadata.jsonl", "keyword argument '" + name + "' is not a parameter of " + call.function);
    if (given.count(name)) call.fail_file("metadata.jsonl", "argument '" + name + "' given both by position and by keyword");
    it->second = *value_of("kwarg_" + name);
    given.insert(name);
  }
}

const Value& Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error("dump importer: " + call_.function + " has no parameter '" + name + "'");
  return it->second;
}

namespace {
std::string kind_text(const Value& v) {
  switch (v.kind) {
    case Value::tensor: return "a tensor";
    case Value::tuple_of_tensors: return "a tuple of tensors";
    default: {
      if (!v.j.is_object() || !v.j.contains("type") || !v.j["type"].is_string()) return v.j.dump();
      std::string s = "a ";
      s += v.j["type"].get<std::string>();
      return s;
    }
  }
}
}  // namespace

std::optional<double> Args::number(const std::string& name) const {
  const Value& v = get(name);
  if (v.is_none()) return std::nullopt;
  if ((v.kind == Value::json || v.kind == Value::absent_default) && v.j.is_number() && !v.j.is_boolean()) return v.j.get<double>();
  call_.fail_file("metadata.jsonl", "argument '" + name + "' is " + kind_text(v) + ", expected a number");
}

std::optional<std::int64_t> Args::integer(const std::string& name) const {
  const Value& v = get(name);
  if (v.is_none()) return std::nullopt;
  if ((v.kind == Value::json || v.kind == Value::absent_default) && v.j.is_number_integer() && !v.j.is_boolean())
    return v.j.get<std::int64_t>();
  call_.fail_file("metadata.jsonl", "argument '" + name + "' is " + kind_text(v) + ", expected an integer");
}

bool Args::boolean(const std::string& name) const {
  const Value& v = get(name);
  if ((v.kind == Value::json || v.kind == Value::absent_default) && v.j.is_boolean()) return v.j.get<bool>();
  // Python truthiness of what FlashInfer tests with `if x:` (ints, None)
  if ((v.kind == Value::json || v.kind == Value::absent_default) && v.j.is_null()) return false;
  if ((v.kind == Value::json || v.kind == Value::absent_default) && v.j.is_number_integer()) return v.j.get<std::int64_t>() != 0;
  call_.fail_file("metadata.jsonl", "argument '" + name + "' is " + kind_text(v) + ", expected a bool");
}

std::optional<std::string> Args::text(const std::string& name) const {
  const Value& v = get(name);
  if (v.is_none()) return std::nullopt;
  if (v.kind == Value::json || v.kind == Value::absent_default) {
    if (v.j.is_string()) return v.j.get<std::string>();
    if (v.j.is_object() && v.j.value("type", "") == "torch.dtype" && v.j.contains("value") && v.j["value"].is_string()) {
      std::string s = v.j["value"].get<std::string>();
      return s.rfind("torch.", 0) == 0 ? s.substr(6) : s;
    }
  }
  call_.fail_file("metadata.jsonl", "argument '" + name + "' is " + kind_text(v) + ", expected a string");
}

std::string Args::given_summary() const {
  std::string out;
  for (const auto& [name, v] : values_) {
    if (v.kind == Value::absent_default || name == "self") continue;
    std::string val;
    if (v.kind == Value::tensor) {
      val = "<tensor " + v.key + ">";
    } else if (v.kind == Value::tuple_of_tensors) {
      val = "<tuple of " + std::to_string(v.members.size()) + " tensors>";
    } else if (v.j.is_object()) {
      const std::string type = v.j.value("type", std::string("object"));
      val = type == "torch.dtype" ? v.j.value("value", std::string("?")) : "<" + type + ">";
    } else {
      val = v.j.dump();
    }
    if (!out.empty()) out += ", ";
    out += name;
    out += "=";
    out += val;
  }
  return out;
}

}  // namespace podcheck::dump
