// The committed golden traces (traces/golden/flashinfer/, imported from FlashInfer recordings on an H200)
// read back through every reader check, with the counts and parameters the recordings document.
#include "testing/catch.hpp"
#include "traces/trace_io.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

using namespace podcheck;

TEST_CASE("golden FlashInfer traces: 30 single POD + 8 BatchPOD + 12 feature cases", "[traces][golden]") {
  std::string dir = std::string(PODCHECK_SOURCE_DIR) + "/traces/golden/flashinfer";
  std::map<std::string, int> kinds;
  std::map<std::string, Trace> by_id;
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".h5") continue;
    ++files;
    REQUIRE(is_trace_file(e.path().string()));
    for (Trace& t : read_traces(e.path().string())) {
      std::string prefix = t.kase.id.substr(0, t.kase.id.find('_', 3) + 1);
      kinds[prefix]++;
      by_id.emplace(t.kase.id, std::move(t));
    }
  }
  CHECK(files == 5);
  CHECK(kinds["fi_pod_"] == 30);
  CHECK(kinds["fi_batchpod_"] == 8);
  CHECK(kinds["fi_prefill_"] + kinds["fi_decode_"] == 12);
  REQUIRE(by_id.size() == 50);

  int expected_failures = 0;
  for (const auto& [id, t] : by_id) {
    CAPTURE(id);
    const Case& c = t.kase;
    CHECK(c.lse_base == LseBase::base2);
    CHECK(t.provenance.kernel_version == "flashinfer@fb28d7242b3506a2348265962041acc1fb56cca4");
    CHECK(t.provenance.driver == "580.159.04");
    CHECK(t.provenance.device.rfind("NVIDIA H200", 0) == 0);
    for (SideKind k : {SideKind::prefill, SideKind::decode}) {
      const Side* s = c.side(k);
      if (!s) {
        CHECK_FALSE(t.observed.out(k).has_value());
        continue;
      }
      REQUIRE(t.observed.out(k).has_value());
      REQUIRE(t.observed.lse(k).has_value());
      REQUIRE(s->params.sm_scale.has_value());
      // the float32 sm_scale the kernel got: exactly a float, within 1e-6 of the nominal value or custom
      CHECK(static_cast<double>(static_cast<float>(*s->params.sm_scale)) == *s->params.sm_scale);
      CHECK(*s->params.sm_scale > 0.04);
      CHECK(*s->params.sm_scale < 0.2);
    }
    if (c.kind() == "single") {
      CHECK_FALSE(c.prefill->kv.paged);
      CHECK(c.decode->kv.paged);
    }
    if (c.kind() == "batch") CHECK(c.prefill->kv.paged);
    for (const auto& e : t.expected) expected_failures += e.status != validation::Status::passed;
  }
  // the recorded defect (3 profiles) and the ALiBi + soft cap quirk (intended only)
  CHECK(expected_failures == 4);
  const Trace& defect = by_id.at("fi_pod_defect_f16_h128_q64k64_causal_g32_B17");
  int nan_heads = 0;
  const Tensor& out_d = *defect.observed.out_d;
  for (std::int64_t r = 0; r < out_d.shape[0]; ++r)
    for (int h = 0; h < 32; ++h) nan_heads += std::isnan(out_d.get((r * 32 + h) * 128)) ? 1 : 0;
  CHECK(nan_heads == 17 * 16);  // heads 16-31 of every decode row never written
  const Trace& q = by_id.at("fi_prefill_f16_h128_alibi_softcap30_causal_q37k100_gqa4");
  CHECK(q.kase.prefill->params.pos_encoding == PosEncoding::alibi);
  CHECK(q.kase.prefill->params.logits_soft_cap == 30.0);
  CHECK(q.kase.prefill->params.alibi_slopes.size() == 4);
  const Trace& w = by_id.at("fi_batchpod_f16_h128_gqa4_causal_swa20_ps16_nhd");
  CHECK(w.kase.prefill->params.window_left == 20);
  CHECK(w.kase.decode->params.window_left == 20);
}

// Not run by ctest (hidden tag): the cost of the isolated reader on the committed golden traces, printed.
// traces_tests "[.isolation-cost]"
TEST_CASE("isolated vs in-process read of the golden traces", "[.isolation-cost]") {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(PODCHECK_SOURCE_DIR) + "/traces/golden"))
    if (e.path().extension() == ".h5") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::uintmax_t bytes = 0;
  for (const auto& f : files) bytes += std::filesystem::file_size(f);
  for (ReadMode mode : {ReadMode::in_process, ReadMode::isolated, ReadMode::in_process, ReadMode::isolated}) {
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t cases = 0;
    for (const auto& f : files) {
      FileRead<Trace> r = read_trace_file(f, {mode, nullptr});
      REQUIRE(r.ok());
      for (const auto& c : r.cases) REQUIRE(c.ok());
      cases += r.cases.size();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-10s %zu files, %.1f MB, %zu cases: %.3f s\n", mode == ReadMode::isolated ? "isolated" : "in-process",
                files.size(), bytes / 1e6, cases, s);
  }
}
