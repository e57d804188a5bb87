// flashinfer-bench datasets: import of the committed real definitions and workloads (traces/captures/fib, from
// flashinfer-bench ecafa9c2; blobs made by traces/tools/make_fib_blobs.py), their axes and constraints checked;
// export then import gives the same case digest; bad datasets refused naming file, workload and input.
#include "fixtures/case_digest.hpp"
#include "fixtures/fixture_io.hpp"
#include "fixtures/sweep.hpp"
#include "fixtures/tests/format_test_util.hpp"
#include "testing/catch.hpp"
#include "traces/fib.hpp"

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
using podcheck::test::write_file;
namespace fs = std::filesystem;

namespace {

const std::string kData = test::source_path("traces/captures/fib");

std::map<std::string, FibCase> by_uuid(std::vector<FibCase> cs) {
  std::map<std::string, FibCase> m;
  for (auto& c : cs) m.emplace(c.uuid.substr(0, 8), std::move(c));
  return m;
}

std::string error_of(const std::string& dir) {
  try {
    (void)import_fib(dir);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

void replace_in(const fs::path& p, const std::string& a, const std::string& b) {
  std::string s = slurp_file(p);
  auto at = s.find(a);
  REQUIRE(at != std::string::npos);
  s.replace(at, a.size(), b);
  write_file(p, s);
}

}  // namespace

TEST_CASE("fib: flashinfer-bench's own definitions and workloads import as one-sided cases", "[traces][fib]") {
  FibImportResult r = import_fib(kData);
  REQUIRE(r.cases.size() == 9);
  auto m = by_uuid(r.cases);
  const FibCase& d = m.at("62aad293");
  CHECK(d.definition == "gqa_paged_decode_h32_kv8_d128_ps1");
  CHECK(d.kase.id == "fib_gqa_paged_decode_h32_kv8_d128_ps1_62aad293-0e5f-440f-84b5-f2de59b14f6f");
  CHECK(d.kase.kind() == "decode");
  CHECK(d.kase.dtype_q == DType::bfloat16);
  CHECK(d.kase.num_qo_heads == 32);
  CHECK(d.kase.decode->kv.num_pages() == 11);  // num_pages axis
  CHECK(d.kase.decode->kv_len(0) == 10);       // num_kv_indices pages of one token
  CHECK(d.kase.decode->params.mask_mode == MaskMode::none);
  CHECK(*d.kase.decode->params.sm_scale == static_cast<double>(static_cast<float>(0.0883883461356163)));
  // written as 0.08838834764831843 in double: the float32 the definition declares is the same
  CHECK(*m.at("be0e9c07").kase.decode->params.sm_scale == *d.kase.decode->params.sm_scale);
  CHECK(d.kase.distribution == "fib-random");
  CHECK(d.kase.seed == 0);
  const Case& p = m.at("fc772d69").kase;
  CHECK(p.kind() == "prefill");
  CHECK(p.prefill->params.mask_mode == MaskMode::causal);
  CHECK(p.prefill->num_rows() == 34);
  CHECK(p.prefill->kv_len(0) == 1);  // 34 rows over one key: 33 rows see nothing (0 / -inf)
  const Case& rg = m.at("f7a038e9").kase;
  CHECK_FALSE(rg.prefill->kv.paged);  // one ragged request: dense K/V
  CHECK(rg.prefill->kv_len(0) == 7);
  const Case& rb = m.at("2068cdff").kase;
  CHECK(rb.prefill->kv.paged);  // two requests: pages of one token
  CHECK(rb.prefill->num_requests() == 2);
  CHECK(rb.prefill->kv.pages.page_size == 1);
  CHECK(rb.prefill->kv_len(0) + rb.prefill->kv_len(1) == 81);
  for (const auto& c : r.cases) CHECK_NOTHROW(validate_case(c.kase));

  // random inputs: podcheck's generator, reproducible, keyed by the seed
  FibImportOptions o;
  o.seed = 7;
  auto again = by_uuid(import_fib(kData).cases), seeded = by_uuid(import_fib(kData, o).cases);
  CHECK(case_digest(again.at("62aad293").kase) == case_digest(d.kase));
  CHECK(case_digest(seeded.at("62aad293").kase) != case_digest(d.kase));
  CHECK(seeded.at("62aad293").kase.seed == 7);
  o.definitions = {"gqa_ragged_prefill_causal_h32_kv8_d128"};
  CHECK(import_fib(kData, o).cases.size() == 3);
  // an imported case exports under its definition and uuid
  FibWorkload w = fib_workload_of(d.kase);
  CHECK(w.definition == "gqa_paged_decode_h32_kv8_d128_ps1");
  CHECK(w.uuid == "62aad293-0e5f-440f-84b5-f2de59b14f6f");
}

TEST_CASE("fib: bad datasets are refused naming the file, the workload and the input", "[traces][fib]") {
  TempDir tmp;
  fs::copy(kData, tmp.dir / "ds", fs::copy_options::recursive);
  const fs::path ds = tmp.dir / "ds";
  const fs::path pre = ds / "workloads/gqa_paged/gqa_paged_prefill_causal_h32_kv8_d128_ps1.jsonl";
  const fs::path dec = ds / "workloads/gqa_paged/gqa_paged_decode_h32_kv8_d128_ps1.jsonl";
  SECTION("a constraint that does not hold") {
    replace_in(pre, R"("total_q": 34)", R"("total_q": 35)");
    std::string e = error_of(ds.string());
    CHECK(contains(e, "gqa_paged_prefill_causal_h32_kv8_d128_ps1.jsonl', line 1, workload 'fc772d69-9b89-4dd5-b125-76b9cc673c85'"));
    CHECK(contains(e, "constraint 'total_q == qo_indptr[-1].item()' does not hold (35 == 34)"));
  }
  SECTION("a missing blob") {
    fs::remove_all(ds / "blob/workloads/gqa_paged/gqa_paged_decode_h32_kv8_d128_ps1");
    std::string e = error_of(ds.string());
    CHECK(contains(e, "gqa_paged_decode_h32_kv8_d128_ps1.jsonl', line 1, workload 'be0e9c07-d051-424b-ad4b-eac7cadf8a8e'"));
    CHECK(contains(e, "input 'kv_indices': safetensors file '" + (ds / "blob/workloads/gqa_paged").string()));
    CHECK(contains(e, "not a regular file"));
  }
  SECTION("a blob of the wrong shape") {
    replace_in(dec, R"("num_kv_indices": 10)", R"("num_kv_indices": 9)");
    CHECK(contains(error_of(ds.string()), "input 'kv_indices' (file './blob/workloads/gqa_paged/gqa_paged_decode_h32_kv8_d128_ps1/"));
    CHECK(contains(error_of(ds.string()), "shape [10] where the axes give [9]"));
  }
  SECTION("an axis the definition does not have") {
    replace_in(dec, R"("batch_size": 1,)", R"("batch_size": 1, "page_size": 1,)");
    CHECK(contains(error_of(ds.string()), "axis 'page_size' is not a var axis of the definition (it is const)"));
  }
  SECTION("random index arrays") {
    std::string s = slurp_file(dec);
    auto at = s.find(R"("kv_indptr": {"type": "safetensors")");
    REQUIRE(at != std::string::npos);
    auto end = s.find('}', at);
    s.replace(at, end - at + 1, R"("kv_indptr": {"type": "random"})");
    write_file(dec, s);
    CHECK(contains(error_of(ds.string()), "input 'kv_indptr' is of type random: podcheck cannot make up index arrays"));
  }
  SECTION("a definition whose inputs are not the ones podcheck maps") {
    replace_in(ds / "definitions/gqa_paged/gqa_paged_decode_h32_kv8_d128_ps1.json", R"("kv_indices": {)", R"("kv_pages": {)");
    CHECK(contains(error_of(ds.string()), "input 'kv_indices' expected"));
  }
}

TEST_CASE("fib: export then import gives the same case digest", "[traces][fib]") {
  // cases of every kind that flashinfer-bench definitions (and the proposed pod ones) express
  std::map<std::string, int> per_kind;
  std::vector<Case> cases;
  std::vector<std::string> refused;
  auto want = [&](const std::string& kind) { return per_kind[kind] < 4; };
  auto take = [&](Case c, const std::string& kind) {
    try {
      (void)fib_workload_json(c);
    } catch (const std::invalid_argument& e) {
      refused.push_back(e.what());
      return;
    }
    ++per_kind[kind];
    cases.push_back(std::move(c));
  };
  for (const auto& id : list_tier("selfcheck")) {
    const std::string prefix = id.substr(0, id.find('_'));
    const std::string kind = prefix == "pod" ? "single" : prefix == "bpod" ? "batch" : prefix == "prefill" ? "prefill_paged" : prefix;
    if (want(kind)) take(make_case(id), kind);
    if (prefix == "pod" && id.find("causal") != std::string::npos && want("prefill_dense")) {
      Case c = make_case(id);  // its causal dense prefill alone: the ragged definition
      c.decode.reset();
      c.id = "dense_" + c.id;
      take(std::move(c), "prefill_dense");
    }
  }
  CHECK(per_kind["single"] == 4);
  CHECK(per_kind["batch"] == 4);
  CHECK(per_kind["decode"] == 4);
  CHECK(per_kind["prefill_paged"] == 4);
  CHECK(per_kind["prefill_dense"] == 4);
  TempDir tmp;
  const std::string dir = tmp.path("out");
  FibExportResult ex = export_fib(cases, dir);
  std::map<std::string, std::string> noted;
  for (const auto& n : ex.notes) noted[n.substr(6, n.find("':") - 6)] = n;
  auto back = import_fib(dir).cases;
  REQUIRE(back.size() == cases.size());
  std::map<std::string, const Case*> by_id;
  for (const auto& b : back) by_id[b.kase.id] = &b.kase;
  int exact = 0;
  for (const auto& c : cases) {
    CAPTURE(c.id);
    REQUIRE(by_id.count(c.id));
    if (noted.count(c.id)) {  // a conversion the export says about (HND -> NHD, stacked -> split, ...)
      CHECK(case_digest(*by_id[c.id]) != case_digest(c));
      continue;
    }
    CHECK(case_digest(*by_id[c.id]) == case_digest(c));
    ++exact;
  }
  CHECK(exact >= 12);
  // the definitions written are those the cases need, named as flashinfer-bench names them
  std::size_t defs = 0;
  for (const auto& f : ex.files) defs += f.rfind("definitions/", 0) == 0;
  CHECK(defs >= 4);
  CHECK(fs::exists(fs::path(dir) / "definitions/pod"));
  CHECK(fs::exists(fs::path(dir) / "definitions/gqa_paged"));
  // the references are Python with a top-level run (checked by the system python's ast)
  for (const auto& f : ex.files) {
    if (f.rfind("definitions/", 0) != 0) continue;
    CAPTURE(f);
    const std::string py = "-c \"import ast, json, sys; d = json.load(open(sys.argv[1])); "
                           "m = ast.parse(d['reference']); "
                           "sys.exit(0 if any(isinstance(n, ast.FunctionDef) and n.name == 'run' for n in m.body) else 1)\" " +
                           (fs::path(dir) / f).string();
    CHECK(test::run_python(py) == 0);
  }
  // a second export into the same folder is refused
  CHECK_THROWS_AS(export_fib(cases, dir), std::invalid_argument);
}

TEST_CASE("fib: cases no flashinfer-bench definition expresses are refused by name", "[traces][fib]") {
  auto refusal = [](const Case& c) -> std::string {
    try {
      (void)fib_workload_json(c);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  Case c = make_case("decode_f16_h32kv4d128_ps1_nhd(bs_d=1,kv_d=15,seed=0)");
  CHECK(refusal(c).empty());
  c.decode->params.pos_encoding = PosEncoding::rope_llama;
  CHECK(contains(refusal(c), "decode: pos encoding ROPE_LLAMA"));
  c.decode->params.pos_encoding = PosEncoding::none;
  c.decode->params.window_left = 3;
  CHECK(contains(refusal(c), "window_left 3"));
  c.decode->params.window_left = -1;
  c.lse_base = LseBase::base_e;
  CHECK(contains(refusal(c), "LSE base e"));
}
