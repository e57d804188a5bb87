// The FlashInfer importer on small recordings that write_flashinfer_like.py writes in the three recorded
// layouts (tests never read the real recordings: they live outside the repository).
#include "fixtures/tests/format_test_util.hpp"
#include "traces/tests/trace_test_util.hpp"
#include "testing/catch.hpp"
#include "traces/import_flashinfer.hpp"
#include "traces/trace_io.hpp"

#include <cmath>
#include <map>

using namespace podcheck;
using podcheck::test::TempDir;
using podcheck::test::traces_by_id;

namespace {
const Expectation* expectation(const Trace& t, const std::string& profile) {
  for (const auto& e : t.expected)
    if (profile_name(e.profile) == profile) return &e;
  return nullptr;
}
}  // namespace

TEST_CASE("FlashInfer recordings in all three layouts import onto the case model", "[traces][import][python]") {
  TempDir tmp;
  REQUIRE(test::run_python(test::source_path("traces/tests/write_flashinfer_like.py") + " " + tmp.dir.string()) == 0);

  auto pod = traces_by_id(import_flashinfer(tmp.path("pod.h5")));
  REQUIRE(pod.size() == 3);
  const Trace& a = pod.at("fi_pod_f16_tiny_causal");
  const Case& c = a.kase;
  CHECK(c.kind() == "single");
  CHECK_FALSE(c.prefill->kv.paged);
  CHECK(c.decode->kv.paged);
  CHECK(c.num_qo_heads == 4);
  CHECK(c.lse_base == LseBase::base2);
  CHECK(c.prefill->params.mask_mode == MaskMode::causal);
  CHECK(c.decode->params.mask_mode == MaskMode::none);
  CHECK(c.prefill->params.sm_scale == static_cast<double>(0.3f));  // the float32 the kernel got
  CHECK(c.decode->params.sm_scale == static_cast<double>(0.2f));
  CHECK(c.prefill->params.window_left == -1);
  CHECK(c.decode->params.window_left == 2);
  CHECK(c.decode->kv.pages.page_size == 4);
  CHECK(c.decode->kv.pages.indices == std::vector<std::int32_t>{3, 1, 0});
  CHECK(c.decode->kv_len(0) == 5);
  CHECK(c.seed == 99);
  CHECK(a.observed.out_p.has_value());
  CHECK(a.observed.lse_d.has_value());
  CHECK(a.provenance.kernel_version == "flashinfer@0123abc");
  CHECK(a.provenance.device == "NVIDIA H200 (sm_90, 132 SMs)");
  CHECK(a.provenance.driver == "580.159.04");
  CHECK(a.provenance.date == "2026-11-29T13:37:16Z");
  CHECK(a.provenance.scheduling.at("plan_info_d") == "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14");
  CHECK(a.provenance.scheduling.count("unknown_new_field") == 0);
  for (const char* p : {"intended", "flashinfer", "flashinfer-pod"}) {
    REQUIRE(expectation(a, p) != nullptr);
    CHECK(expectation(a, p)->status == validation::Status::passed);
  }

  const Case& cm = pod.at("fi_pod_f16_tiny_custom").kase;
  CHECK(cm.prefill->params.mask_mode == MaskMode::custom);
  CHECK(cm.prefill->params.custom_mask.size() == 2);  // ceil(3*5/8)
  CHECK(cm.prefill->params.custom_mask_indptr == std::vector<std::int64_t>{0, 2});

  const Trace& defect = pod.at("fi_pod_defect_tiny_g32");
  int nan_out = 0;
  for (std::int64_t i = 0; i < defect.observed.out_d->numel(); ++i) nan_out += std::isnan(defect.observed.out_d->get(i));
  CHECK(nan_out == 2 * 16 * 8);  // sentinels kept
  for (const char* p : {"intended", "flashinfer", "flashinfer-pod"}) {
    REQUIRE(expectation(defect, p) != nullptr);
    CHECK(expectation(defect, p)->status == validation::Status::incorrect);
    CHECK(expectation(defect, p)->diagnosis == "never written");
  }

  auto batch = import_flashinfer(tmp.path("batch_pod.h5"));
  REQUIRE(batch.size() == 1);
  const Case& b = batch[0].kase;
  CHECK(b.id == "fi_batchpod_bf16_tiny_batch_hnd");
  CHECK(b.kind() == "batch");
  CHECK(b.prefill->kv.layout == Layout::HND);
  CHECK(b.decode->kv.layout == Layout::HND);
  CHECK(b.prefill->params.window_left == 3);  // window_left applies to both sides
  CHECK(b.decode->params.window_left == 3);
  CHECK(b.prefill->qo_indptr == std::vector<std::int32_t>{0, 3, 4});
  CHECK(b.prefill->kv_len(0) == 4);
  CHECK(b.decode->kv_len(0) == 3);
  CHECK(batch[0].provenance.scheduling.at("num_colocated_ctas") == "2");

  auto feat = traces_by_id(import_flashinfer(tmp.path("features.h5")));
  REQUIRE(feat.size() == 2);
  const Trace& al = feat.at("fi_prefill_f16_tiny_alibi_softcap30");
  CHECK(al.kase.kind() == "prefill");
  CHECK_FALSE(al.kase.decode.has_value());
  const SideParams& ap = al.kase.prefill->params;
  CHECK(ap.pos_encoding == PosEncoding::alibi);
  CHECK(ap.alibi_slopes == std::vector<double>{0.5, 0.25, 0.125, 0.0625});
  CHECK(ap.logits_soft_cap == 30.0);
  CHECK(al.kase.prefill->kv.layout == Layout::HND);
  REQUIRE(al.observed.out_p.has_value());
  CHECK_FALSE(al.observed.out_d.has_value());
  REQUIRE(expectation(al, "intended") != nullptr);
  CHECK(expectation(al, "intended")->status == validation::Status::incorrect);
  CHECK(expectation(al, "intended")->diagnosis == "sm_scale applied twice");
  CHECK(expectation(al, "flashinfer")->status == validation::Status::passed);
  const Trace& dr = feat.at("fi_decode_f16_tiny_decode_rope");
  CHECK(dr.kase.kind() == "decode");
  CHECK(dr.kase.decode->qo_indptr == std::vector<std::int32_t>{0, 1, 2});
  CHECK(dr.kase.decode->params.pos_encoding == PosEncoding::rope_llama);
  CHECK(dr.kase.decode->params.rope_scale == 2.0);
  CHECK(dr.kase.decode->params.rope_theta == 5e5);
  CHECK(dr.observed.lse_d.has_value());

  // imported traces survive the trace format
  std::vector<Trace> all;
  for (auto& [id, t] : pod) all.push_back(t);
  all.push_back(batch[0]);
  for (auto& [id, t] : feat) all.push_back(t);
  std::string out = tmp.path("imported.h5");
  write_traces(out, all);
  auto back = traces_by_id(read_traces(out));
  REQUIRE(back.size() == 6);
  CHECK(back.at("fi_pod_defect_tiny_g32").observed.out_d->bytes == defect.observed.out_d->bytes);
  CHECK(back.at("fi_prefill_f16_tiny_alibi_softcap30").kase.prefill->params.alibi_slopes == ap.alibi_slopes);

  // a missing required attribute is named
  CHECK_THROWS_WITH(import_flashinfer(tmp.path("pod_missing_attr.h5")),
                    HasSubstring("pod_missing_attr.h5") && HasSubstring("f16_tiny_no_heads") &&
                        HasSubstring("missing attribute 'num_kv_heads'"));
  // read isolated, group by group: the same traces, and the bad group's error with its name
  for (const char* f : {"pod.h5", "batch_pod.h5", "features.h5"}) {
    CAPTURE(f);
    FileRead<Trace> r = import_flashinfer_file(tmp.path(f));
    REQUIRE(r.ok());
    std::vector<Trace> direct = import_flashinfer(tmp.path(f));
    REQUIRE(r.cases.size() == direct.size());
    for (std::size_t i = 0; i < direct.size(); ++i) {
      REQUIRE(r.cases[i].ok());
      CHECK(r.cases[i].value->kase.id == direct[i].kase.id);
      CHECK(r.cases[i].value->observed.out(SideKind::decode).has_value() == direct[i].observed.out(SideKind::decode).has_value());
      CHECK(r.cases[i].value->expected == direct[i].expected);
      CHECK(r.cases[i].value->provenance.scheduling == direct[i].provenance.scheduling);
    }
  }
  FileRead<Trace> bad = import_flashinfer_file(tmp.path("pod_missing_attr.h5"));
  REQUIRE(bad.ok());
  REQUIRE(bad.failed_cases() == 1);
  for (const auto& c : bad.cases)
    if (!c.ok()) {
      CHECK(c.id == "f16_tiny_no_heads");
      CHECK(c.error.find("missing attribute 'num_kv_heads'") != std::string::npos);
    }
}
