// The FlashInfer dump importer on dumps that write_fi_dumps.py writes in the layout of FlashInfer's API logging
// (outputs computed there with numpy in float64, independently of podcheck's reference): options carried
// over as FlashInfer resolves them, plan/run pairing, layouts, page compaction, CUDA-graph flushes, the
// verdicts replay gives (passing, and failing at the one call, layer and head an edit planted), and every
// kind of bad dump refused with the folder, file and tensor key.
#include "fixtures/case_digest.hpp"
#include "fixtures/fixture_io.hpp"
#include "fixtures/tests/format_test_util.hpp"
#include "traces/tests/trace_test_util.hpp"
#include "testing/catch.hpp"
#include "traces/flashinfer_dump.hpp"
#include "traces/trace_io.hpp"
#include "reference/profile.hpp"
#include "reference/reference.hpp"
#include "validation/compare.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace podcheck;
using podcheck::test::TempDir;
using podcheck::test::contains;
using podcheck::test::slurp_file;
using podcheck::test::traces_by_id;
using podcheck::test::write_file;
namespace fs = std::filesystem;

namespace {

struct Dumps {
  TempDir tmp;
  Dumps() {
    REQUIRE(test::run_python(test::source_path("traces/tests/write_fi_dumps.py") + " " + tmp.dir.string()) == 0);
  }
  std::string root(const std::string& n) const { return tmp.path(n); }
  // The call folder of root n whose name contains `part`.
  fs::path folder(const std::string& n, const std::string& part) const {
    for (const auto& e : fs::directory_iterator(tmp.dir / n))
      if (e.is_directory() && e.path().filename().string().find(part) != std::string::npos) return e.path();
    FAIL("no folder " << part << " in " << n);
    return {};
  }
};

validation::CaseResult judged(const Trace& t) {
  validation::JudgeOptions o;
  return validation::judge(t.kase, t.observed, t.run, o);
}

std::string error_of(const std::vector<std::string>& dirs, const DumpImportOptions& o = {}) {
  try {
    (void)import_flashinfer_dump(dirs, o);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}


// Rewrites the last record of a metadata.jsonl.
template <class F>
void edit_record(const fs::path& folder, F&& f) {
  std::istringstream in(slurp_file(folder / "metadata.jsonl"));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  auto j = nlohmann::json::parse(lines.back());
  f(j);
  lines.back() = j.dump();
  std::string out;
  for (auto& l : lines) out += l + "\n";
  write_file(folder / "metadata.jsonl", out);
}

}  // namespace

TEST_CASE("FlashInfer dumps: POD runs and standalone prefills, options as FlashInfer resolves them", "[traces][dump][python]") {
  Dumps d;
  DumpImportResult r = import_flashinfer_dump({d.root("pod_session")});
  REQUIRE(r.traces.size() == 5);
  auto m = traces_by_id(r.traces);
  const Trace& l0 = m.at("fi_dump_PODWithPagedKVCacheWrapper.run_call0001");
  const Case& c = l0.kase;
  CHECK(c.kind() == "single");
  CHECK(c.num_qo_heads == 4);
  CHECK(c.num_kv_heads == 2);
  CHECK(c.head_dim == 16);
  CHECK(c.prefill->params.mask_mode == MaskMode::causal);
  CHECK(*c.prefill->params.sm_scale == static_cast<double>(static_cast<float>(0.25)));
  CHECK(c.decode->params.mask_mode == MaskMode::none);
  CHECK(c.decode->params.window_left == 5);  // from plan
  // the stacked pool of 12 pages: only the 6 the page table reaches, renumbered in order
  REQUIRE(c.decode->kv.stacked());
  CHECK(c.decode->kv.num_pages() == 6);
  CHECK(c.decode->kv.pages.indices == std::vector<std::int32_t>{4, 1, 2, 0, 5, 3});
  CHECK(c.decode->kv_len(0) == 7);
  CHECK(c.decode->kv_len(2) == 9);
  CHECK(l0.observed.out_p.has_value());
  CHECK(l0.observed.out_d.has_value());
  CHECK_FALSE(l0.observed.lse_p.has_value());  // single POD never returns LSE
  CHECK(l0.provenance.kernel_name == "flashinfer-pod");
  CHECK(l0.provenance.scheduling.at("fi_dump.pages") == "paged_kv_cache_d: 6 of 12 pages kept");
  CHECK(contains(l0.provenance.scheduling.at("fi_dump.layout_source"), "__init__"));
  auto info = dump_call_info(l0);
  REQUIRE(info);
  CHECK(info->function == "PODWithPagedKVCacheWrapper.run");
  CHECK(info->call_sequence == 1);
  CHECK(info->process_id == 1111);
  CHECK(info->wrapper == 0);
  CHECK(info->layer == 0);
  CHECK(info->order == 2);  // __init__, plan, run
  CHECK(contains(info->plan, "PODWithPagedKVCacheWrapper.plan_call0001"));
  CHECK(info->versions == "flashinfer=<unavailable>, python=3.12.3, torch=2.11.0+cu130");
  CHECK(l0.provenance.date == "2026-01-02T10:30:00.021");

  const Case& c1 = m.at("fi_dump_PODWithPagedKVCacheWrapper.run_call0002").kase;
  // run's sm_scale_d=0.5 is ignored; the plan's default 1/4 folds q_scale 0.5 and k_scale 3
  CHECK(*c1.decode->params.sm_scale == static_cast<double>(static_cast<float>(0.25 * 0.5 * 3.0)));
  CHECK(c1.decode->params.v_scale == 0.75);
  CHECK(c1.prefill->params.q_scale == 1.0);
  CHECK(contains(m.at("fi_dump_PODWithPagedKVCacheWrapper.run_call0002").provenance.scheduling.at("fi_dump.ignored_by_flashinfer"),
            "sm_scale_d"));
  CHECK(dump_call_info(m.at("fi_dump_PODWithPagedKVCacheWrapper.run_call0002"))->layer == 1);
  const Case& c2 = m.at("fi_dump_PODWithPagedKVCacheWrapper.run_call0003").kase;
  CHECK(c2.prefill->kv.layout == Layout::HND);
  CHECK(*c2.prefill->params.sm_scale == static_cast<double>(0.3f));

  const Trace& s1 = m.at("fi_dump_single_prefill_with_kv_cache_call0001");
  CHECK(s1.kase.kind() == "prefill");
  CHECK(s1.kase.prefill->kv.layout == Layout::HND);
  CHECK(s1.kase.prefill->params.mask_mode == MaskMode::custom);
  CHECK(s1.kase.prefill->params.custom_mask.size() == 5);  // ceil(5 * 8 / 8)
  CHECK(s1.observed.lse_p.has_value());
  CHECK_FALSE(dump_call_info(s1)->wrapper >= 0);
  const Case& s2 = m.at("fi_dump_single_prefill_with_kv_cache_call0002").kase;
  CHECK(s2.prefill->params.mask_mode == MaskMode::causal);  // causal given by position (arg 9)
  CHECK(s2.prefill->params.window_left == 4);
  CHECK(s2.prefill->params.logits_soft_cap == 20.0);

  for (const auto& t : r.traces) {
    CAPTURE(t.kase.id);
    auto res = judged(t);
    CHECK(res.status == validation::Status::passed);
  }
  // the same dump held in memory imports to the same cases
  std::vector<DumpFolderInMemory> mem;
  for (const auto& e : fs::directory_iterator(d.tmp.dir / "pod_session")) {
    if (!e.is_directory()) continue;
    DumpFolderInMemory f;
    f.name = e.path().filename().string();
    f.metadata_jsonl = slurp_file(e.path() / "metadata.jsonl");
    auto bytes = [&](const char* n) -> std::optional<std::vector<std::uint8_t>> {
      if (!fs::exists(e.path() / n)) return std::nullopt;
      std::string s = slurp_file(e.path() / n);
      return std::vector<std::uint8_t>(s.begin(), s.end());
    };
    f.inputs = bytes("inputs.safetensors");
    f.outputs = bytes("outputs.safetensors");
    mem.push_back(std::move(f));
  }
  auto rm = traces_by_id(import_flashinfer_dump_memory("pod_session", slurp_file(d.tmp.dir / "pod_session" / "session.jsonl"), mem).traces);
  REQUIRE(rm.size() == 5);
  for (const auto& [id, t] : m) CHECK(case_digest(rm.at(id).kase) == case_digest(t.kase));
}

TEST_CASE("FlashInfer dumps: a serving stack's prefill and decode wrappers without __init__", "[traces][dump][python]") {
  Dumps d;
  auto m = traces_by_id(import_flashinfer_dump({d.root("serving")}).traces);
  REQUIRE(m.size() == 4);
  const Trace& p1 = m.at("fi_dump_BatchPrefillWithPagedKVCacheWrapper.run_call0002");
  const Case& p = p1.kase;
  CHECK(p.kind() == "prefill");
  CHECK(p.prefill->qo_indptr == std::vector<std::int32_t>{0, 4, 5, 11});  // int64 in the dump
  CHECK(p.prefill->params.mask_mode == MaskMode::causal);
  CHECK(*p.prefill->params.sm_scale == static_cast<double>(0.2f));
  CHECK(p.prefill->params.v_scale == 0.5);
  CHECK(p.prefill->kv.layout == Layout::NHD);
  CHECK(contains(p1.provenance.scheduling.at("fi_dump.layout_source"), "cache shape"));
  CHECK(p1.observed.lse_p.has_value());
  CHECK(dump_call_info(p1)->layer == 1);
  const Trace& d0 = m.at("fi_dump_BatchDecodeWithPagedKVCacheWrapper.run_call0001");
  CHECK(d0.kase.kind() == "decode");
  CHECK(d0.kase.dtype_q == DType::bfloat16);
  CHECK(d0.kase.decode->kv.layout == Layout::HND);
  CHECK(d0.kase.decode->kv.stacked());
  CHECK(d0.kase.decode->params.window_left == 2);          // deprecated positional plan argument
  CHECK(d0.kase.decode->params.logits_soft_cap == 30.0);
  CHECK(dump_call_info(d0)->wrapper == 1);
  for (const auto& [id, t] : m) {
    CAPTURE(id);
    CHECK(judged(t).status == validation::Status::passed);
  }
}

TEST_CASE("FlashInfer dumps: BatchPOD, every option from plan, LSE nested as the code returns it", "[traces][dump][python]") {
  Dumps d;
  auto m = traces_by_id(import_flashinfer_dump({d.root("batch_pod")}).traces);
  REQUIRE(m.size() == 2);
  const Trace& r1 = m.at("fi_dump_BatchPODWithPagedKVCacheWrapper.run_call0001");
  const Case& c = r1.kase;
  CHECK(c.kind() == "batch");
  CHECK(c.prefill->kv.layout == Layout::HND);  // from __init__'s keyword kv_layout
  CHECK(c.decode->kv.layout == Layout::HND);
  CHECK(c.prefill->params.window_left == 6);
  CHECK(c.decode->params.window_left == 6);
  CHECK(c.prefill->params.mask_mode == MaskMode::causal);
  CHECK(c.decode->params.mask_mode == MaskMode::none);
  CHECK(*c.prefill->params.sm_scale == static_cast<double>(0.21f));
  REQUIRE(r1.observed.lse_p.has_value());
  REQUIRE(r1.observed.lse_d.has_value());
  CHECK(r1.observed.lse_p->shape == std::vector<std::int64_t>{8, 4});  // ((out_p, out_d), (lse_p, lse_d))
  CHECK(r1.observed.out_d->shape == std::vector<std::int64_t>{3, 4, 16});
  const Case& c2 = m.at("fi_dump_BatchPODWithPagedKVCacheWrapper.run_call0002").kase;
  CHECK(*c2.decode->params.sm_scale == static_cast<double>(static_cast<float>(0.21 * 2.0)));  // k_scale: decode only
  CHECK(*c2.prefill->params.sm_scale == static_cast<double>(0.21f));
  CHECK(c2.decode->params.v_scale == 0.5);
  for (const auto& [id, t] : m) {
    CAPTURE(id);
    CHECK(judged(t).status == validation::Status::passed);
  }
}

TEST_CASE("FlashInfer dumps: CUDA-graph flushes, each replay paired with the plan before it", "[traces][dump][python]") {
  Dumps d;
  auto m = traces_by_id(import_flashinfer_dump({d.root("graph")}).traces);
  REQUIRE(m.size() == 3);
  const Trace& f1 = m.at("fi_dump_BatchDecodeWithPagedKVCacheWrapper.run_call0002_flush0001");
  const Trace& f2 = m.at("fi_dump_BatchDecodeWithPagedKVCacheWrapper.run_call0002_flush0002");
  CHECK(m.count("fi_dump_BatchDecodeWithPagedKVCacheWrapper.run_call0001") == 1);
  CHECK(f1.kase.decode->kv_len(1) == 3);
  CHECK(f2.kase.decode->kv_len(1) == 1);  // plan 2 (last_page_len [4, 1]) came before the second replay
  CHECK(dump_call_info(f2)->flush == 2);
  CHECK(contains(dump_call_info(f2)->plan, "plan_call0002"));
  for (const auto& [id, t] : m) {
    CAPTURE(id);
    CHECK(judged(t).status == validation::Status::passed);
  }
}

TEST_CASE("FlashInfer dumps: one wrong head in one layer fails at that call, layer and head", "[traces][dump][python]") {
  Dumps d;
  fs::path run2 = d.folder("pod_session", "PODWithPagedKVCacheWrapper.run_call0002");
  REQUIRE(test::run_python(test::source_path("traces/tools/edit_dump_head.py") + " " + run2.string() +
                           " --tensor result_1 --head 2 --add 0.25 > /dev/null") == 0);
  auto traces = import_flashinfer_dump({d.root("pod_session")}).traces;
  std::vector<validation::CaseResult> results;
  for (const auto& t : traces) {
    results.push_back(judged(t));
    results.back().id = t.kase.id;
    results.back().verdict = validation::plain_verdict(results.back().status);
  }
  for (std::size_t i = 0; i < traces.size(); ++i) {
    CAPTURE(traces[i].kase.id);
    const bool planted = traces[i].kase.id == "fi_dump_PODWithPagedKVCacheWrapper.run_call0002";
    CHECK((results[i].status == validation::Status::incorrect) == planted);
    if (!planted) continue;
    for (const auto& t : results[i].tensors) {
      CAPTURE(t.name);
      CHECK(t.failed() == (t.name == "out_d"));
    }
    // every failing element sits in head 2 of out_d
    const Trace& tr = traces[i];
    const auto* h = results[i].headline();
    REQUIRE(h);
    CHECK(h->name == "out_d");
    REQUIRE(h->worst);
    CHECK(h->worst->head == 2);
    const Tensor& out = *tr.observed.out_d;
    PodResult ref = reference_fast(apply_profile(Profile::intended, tr.kase).kase);
    std::int64_t bad_other = 0, bad_head = 0;
    for (std::int64_t e = 0; e < out.numel(); ++e) {
      const int head = static_cast<int>((e / tr.kase.head_dim) % tr.kase.num_qo_heads);
      const bool off = std::abs(out.get(e) - ref.decode->out[static_cast<std::size_t>(e)]) > 0.1;
      (head == 2 ? bad_head : bad_other) += off;
    }
    CHECK(bad_head == 3 * 16);
    CHECK(bad_other == 0);
  }
  DumpReplaySummary s = summarize_dump_replay(traces, results);
  REQUIRE(s.first_failure);
  const auto& first = s.calls[*s.first_failure];
  CHECK(first.id == "fi_dump_PODWithPagedKVCacheWrapper.run_call0002");
  CHECK(first.info.layer == 1);
  CHECK(first.info.wrapper == 0);
  REQUIRE(s.wrappers.size() == 2);  // the POD wrapper, then the free functions
  CHECK(s.wrappers[0].calls.size() == 3);
  auto lines = format_dump_summary(s);
  REQUIRE(lines.size() == 3);
  CHECK(contains(lines[0], "first failing call: #3 PODWithPagedKVCacheWrapper.run call 2 (wrapper 0, layer 1): out_d worst at"));
  CHECK(contains(lines[0], "head 2"));
  CHECK(contains(lines[1], "layer 0 [OK] layer 1 [FAIL] layer 2 [OK]"));
}

TEST_CASE("FlashInfer dumps: the layout comes from __init__, --kv-layout or the shape, and the case says which", "[traces][dump][python]") {
  Dumps d;
  CHECK(contains(error_of({d.root("ambiguous")}), "page_size = num_kv_heads = 2, so its shape does not tell NHD from HND; pass --kv-layout"));
  DumpImportOptions o;
  o.kv_layout = Layout::HND;
  auto ts = import_flashinfer_dump({d.root("ambiguous")}, o).traces;
  REQUIRE(ts.size() == 1);
  CHECK(ts[0].kase.decode->kv.layout == Layout::HND);
  CHECK(ts[0].provenance.scheduling.at("fi_dump.layout_source") == "--kv-layout");
  CHECK(judged(ts[0]).status == validation::Status::passed);
  o.kv_layout = Layout::NHD;  // the wrong one: reads the cache transposed, and the verdict says so
  CHECK(judged(import_flashinfer_dump({d.root("ambiguous")}, o).traces[0]).status == validation::Status::incorrect);
}

TEST_CASE("FlashInfer dumps: bad dumps are refused naming the folder, the file and the tensor key", "[traces][dump][python]") {
  Dumps d;
  const std::string root = d.root("pod_session");
  const fs::path run1 = d.folder("pod_session", "PODWithPagedKVCacheWrapper.run_call0001");
  const fs::path plan = d.folder("pod_session", "PODWithPagedKVCacheWrapper.plan_call0001");
  const std::string run1n = run1.filename().string();
  CHECK(error_of({root}).empty());

  SECTION("pt dumps") {
    std::string e = error_of({d.root("pt_dump")});
    CHECK(contains(e, "inputs.pt / outputs.pt (torch.save format)"));
    CHECK(contains(e, "FLASHINFER_DUMP_SAFETENSORS=1"));
    CHECK(contains(e, "traces/tools/pt_to_safetensors.py"));
  }
  SECTION("missing metadata") {
    fs::remove(run1 / "metadata.jsonl");
    CHECK(contains(error_of({root}), "dump folder '" + root + "/" + run1n + "': missing metadata.jsonl"));
  }
  SECTION("empty metadata") {
    write_file(run1 / "metadata.jsonl", "\n");
    CHECK(contains(error_of({root}), run1n + "', file 'metadata.jsonl': empty"));
  }
  SECTION("metadata without a field") {
    edit_record(run1, [](nlohmann::json& j) { j.erase("function_signature"); });
    CHECK(contains(error_of({root}), run1n + "', file 'metadata.jsonl': missing field 'function_signature'"));
  }
  SECTION("truncated safetensors") {
    std::string b = slurp_file(run1 / "inputs.safetensors");
    write_file(run1 / "inputs.safetensors", b.substr(0, b.size() / 2));
    std::string e = error_of({root});
    CHECK(contains(e, run1n + "', file 'inputs.safetensors'"));
    CHECK(contains(e, "reach past the end of the data"));
  }
  SECTION("lying safetensors header") {
    std::string b = slurp_file(run1 / "inputs.safetensors");
    auto at = b.find("\"shape\":[7,4,16]");
    REQUIRE(at != std::string::npos);
    b.replace(at, 16, "\"shape\":[7,4,17]");
    write_file(run1 / "inputs.safetensors", b);
    std::string e = error_of({root});
    CHECK(contains(e, run1n + "', file 'inputs.safetensors'"));
    CHECK(contains(e, "tensor 'arg_1': shape [7, 4, 17] of F16 needs"));
  }
  SECTION("metadata and file disagree") {
    edit_record(run1, [](nlohmann::json& j) { j["tensor_details"]["arg_4"]["shape"][0] = 4; });
    CHECK(contains(error_of({root}), run1n + "', file 'inputs.safetensors': tensor 'arg_4': mismatched shapes: metadata says [4,"));
  }
  SECTION("a run with no plan") {
    fs::remove_all(plan);
    std::string e = error_of({root});
    CHECK(contains(e, run1n));
    CHECK(contains(e, "a run with no plan: no PODWithPagedKVCacheWrapper.plan of the same wrapper (pid 1111"));
  }
  SECTION("a tensor of the wrong shape for the plan") {
    edit_record(plan, [](nlohmann::json& j) { j["input_metadata"]["arg_4"] = 8; });  // num_qo_heads
    std::string e = error_of({root});
    CHECK(contains(e, run1n + "', file 'inputs.safetensors': tensor 'arg_1' (q_p): mismatched shapes: plan"));
  }
  SECTION("a page index beyond the cache") {
    std::string b = slurp_file(plan / "inputs.safetensors");
    // indices [9, 2, 5, 0, 11, 7] (int32) -> the first becomes 99
    const std::string nine("\x09\x00\x00\x00\x02\x00\x00\x00", 8);
    auto at = b.find(nine);
    REQUIRE(at != std::string::npos);
    b[at] = 99;
    write_file(plan / "inputs.safetensors", b);
    CHECK(contains(error_of({root}), "tensor 'arg_5' (paged_kv_cache_d): page index 99 at position 0"));
  }
  SECTION("another FlashInfer's signature") {
    edit_record(run1, [](nlohmann::json& j) {
      std::string s = j["function_signature"];
      s.replace(s.find("causal_p"), 8, "causal_x");
      j["function_signature"] = s;
    });
    CHECK(contains(error_of({root}), "parameter 8 of the recorded signature is 'causal_x', FlashInfer fb28d7242b35 has 'causal_p'"));
  }
}
