// The committed real FlashInfer API-logging dumps (traces/captures/fi_dumps, written by FlashInfer's own
// api_logging.py on the GPU machine, traces/tools/capture_flashinfer_dumps.py; outputs by PyTorch SDPA): they
// import, every call passes, and the copy with one wrong head in one layer fails at that call, layer and head
// and is the first failing call. Skipped (never passed) while the folder is not committed.
#include "fixtures/fixture_io.hpp"
#include "testing/catch.hpp"
#include "traces/flashinfer_dump.hpp"

#include <filesystem>
#include <map>

using namespace podcheck;
namespace fs = std::filesystem;
namespace v = podcheck::validation;

namespace {

const fs::path kDir = fs::path(PODCHECK_SOURCE_DIR) / "traces/captures/fi_dumps";

void need_captures() {
  if (!fs::exists(kDir / "pod_layers")) PODCHECK_SKIP("traces/captures/fi_dumps not committed yet (made on the GPU machine)");
}

std::vector<v::CaseResult> judge_all(const std::vector<Trace>& ts) {
  std::vector<v::CaseResult> rs;
  for (const auto& t : ts) {
    v::JudgeOptions o;
    rs.push_back(v::judge(t.kase, t.observed, t.run, o));
    rs.back().id = t.kase.id;
  }
  return rs;
}

std::map<std::string, int> kinds(const std::vector<Trace>& ts) {
  std::map<std::string, int> m;
  for (const auto& t : ts) m[dump_call_info(t)->function]++;
  return m;
}

}  // namespace

TEST_CASE("real FlashInfer dumps: every scenario imports and every call passes", "[traces][dump][captures]") {
  need_captures();
  std::map<std::string, std::map<std::string, int>> expect = {
      {"pod_layers", {{"PODWithPagedKVCacheWrapper.run", 4}}},
      {"batch_pod", {{"BatchPODWithPagedKVCacheWrapper.run", 2}}},
      {"serving", {{"BatchPrefillWithPagedKVCacheWrapper.run", 3}, {"BatchDecodeWithPagedKVCacheWrapper.run", 6}}},
      {"prefill", {{"single_prefill_with_kv_cache", 3}}},
      {"graph", {{"BatchDecodeWithPagedKVCacheWrapper.run", 3}}},
      {"pt_converted", {{"PODWithPagedKVCacheWrapper.run", 1}}},
  };
  for (const auto& [scenario, counts] : expect) {
    CAPTURE(scenario);
    auto r = import_flashinfer_dump({(kDir / scenario).string()});
    CHECK(kinds(r.traces) == counts);
    auto results = judge_all(r.traces);
    for (std::size_t i = 0; i < results.size(); ++i) {
      CAPTURE(results[i].id);
      CHECK(results[i].status == v::Status::passed);
    }
    CHECK_FALSE(summarize_dump_replay(r.traces, results).first_failure.has_value());
    if (scenario == "serving")  // __init__ was excluded: the layout came from the caches' shapes
      for (const auto& t : r.traces) CHECK(t.provenance.scheduling.at("fi_dump.layout_source").find("cache shape") == 0);
    if (scenario == "graph") {
      int flushes = 0;
      for (const auto& t : r.traces) flushes += dump_call_info(t)->flush > 0;
      CHECK(flushes == 2);
    }
  }
  // the same capture in torch.save format is refused with what to do
  if (fs::exists(kDir / "pt_raw")) {
    try {
      (void)import_flashinfer_dump({(kDir / "pt_raw").string()});
      FAIL("a .pt dump imported");
    } catch (const FormatError& e) {
      CHECK(std::string(e.what()).find("FLASHINFER_DUMP_SAFETENSORS=1") != std::string::npos);
    }
  }
}

TEST_CASE("real FlashInfer dumps: one wrong head in layer 2 fails at that call, layer and head", "[traces][dump][captures]") {
  need_captures();
  auto r = import_flashinfer_dump({(kDir / "pod_layers_wrong_head").string()});
  auto results = judge_all(r.traces);
  DumpReplaySummary s = summarize_dump_replay(r.traces, results);
  REQUIRE(s.first_failure);
  const auto& first = s.calls[*s.first_failure];
  CHECK(first.info.function == "PODWithPagedKVCacheWrapper.run");
  CHECK(first.info.call_sequence == 3);
  CHECK(first.info.layer == 2);
  REQUIRE(first.result);
  const auto* h = first.result->headline();
  REQUIRE(h);
  CHECK(h->name == "out_d");
  REQUIRE(h->worst);
  CHECK(h->worst->head == 3);
  int failing = 0;
  for (const auto& c : s.calls) failing += c.failed;
  CHECK(failing == 1);
}
