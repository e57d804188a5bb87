// The validation engine on FlashInfer's real H200 outputs (traces/golden/flashinfer, committed): every
// good case passes, the two known defects get the verdict and diagnosis they deserve, POD's ignored options
// are judged per profile, and faults planted in an otherwise good trace give the right verdict and location.
#include "testing/catch.hpp"

#include "app/replay.hpp"
#include "app/report.hpp"
#include "traces/trace_io.hpp"
#include "validation/tests/helpers.hpp"

#include <cmath>
#include <filesystem>
#include <string>

using namespace podcheck;
using namespace podcheck::validation;
using namespace podcheck::app;
using podcheck::testhelp::tensor;

namespace {

const std::string kGolden = std::string(PODCHECK_SOURCE_DIR) + "/traces/golden/flashinfer";
const std::string kPod1 = kGolden + "/flashinfer_pod_1.h5";
const std::string kPod3 = kGolden + "/flashinfer_pod_3.h5";
const std::string kFeatures = kGolden + "/flashinfer_features.h5";
// A small good single-POD case: causal prefill 7x33, 8 heads, 17 paged decodes (page 16).
const std::string kGoodId = "fi_pod_f16_h128_q7k33_causal_mha8_B17_ps16";

void require_golden() {
  if (!std::filesystem::exists(kPod1)) PODCHECK_SKIP("traces/golden/flashinfer not present in this checkout");
}

CaseResult judged(const Case& c, const KernelOutputs& o, Profile p = Profile::intended) {
  JudgeOptions jo;
  jo.profile = p;
  return judge(c, o, RunRecord{}, jo);
}

bool mentions(const CaseResult& r, const std::string& phrase) {
  for (const auto& d : r.diagnosis)
    if (d.find(phrase) != std::string::npos) return true;
  return false;
}

std::string text(const CaseResult& r) {
  std::string s = console_line(r) + "\n";
  for (const auto& l : console_details(r)) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("golden FlashInfer traces: every verdict matches its expectation", "[app][golden]") {
  require_golden();
  ReplayOptions ro;
  ro.artifacts.enabled = false;
  // progress counts traces (cases), and every verdict of a case judged under several profiles carries that case's
  // number: "trace 214/108" was printed when it counted verdicts against a total of cases
  std::vector<std::pair<int, int>> seen;
  ro.progress = [&](const CaseResult&, int done, int total) { seen.emplace_back(done, total); };
  const auto results = replay_files(trace_files_under(kGolden), ro);
  REQUIRE(results.size() >= 50);
  REQUIRE(seen.size() == results.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CAPTURE(i, seen[i].first, seen[i].second);
    CHECK(seen[i].first >= 1);
    CHECK(seen[i].first <= seen[i].second);
    if (i > 0) CHECK((seen[i].first == seen[i - 1].first || seen[i].first == seen[i - 1].first + 1));
  }
  CHECK(seen.back().first == seen.back().second);
  CHECK(static_cast<int>(results.size()) > seen.back().second);  // some cases are judged under several profiles
  int xfail = 0, ok = 0;
  for (const auto& r : results) {
    CAPTURE(text(r));
    CHECK(r.verdict != Verdict::fail);
    CHECK(r.verdict != Verdict::skip);
    xfail += r.verdict == Verdict::xfail;
    ok += r.verdict == Verdict::ok;
    // No good case passes with less than a 1.5x margin on any tensor.
    if (r.status == Status::passed)
      for (const auto& t : r.tensors) CHECK(t.tol_used < 1.0 / 1.5);
  }
  CHECK(xfail >= 2);
  CHECK(ok >= 48);
}

TEST_CASE("golden GQA-32 defect: incorrect, never-written heads 16-31 named, under every profile", "[app][golden]") {
  require_golden();
  const Trace t = read_trace(kPod3, "fi_pod_defect_f16_h128_q64k64_causal_g32_B17");
  for (Profile p : {Profile::intended, Profile::flashinfer, Profile::flashinfer_pod}) {
    const CaseResult r = judged(t.kase, t.observed, p);
    CAPTURE(text(r));
    CHECK(r.status == Status::incorrect);
    CHECK(mentions(r, "never written"));
    CHECK(mentions(r, "out_d heads 16-31 of every group of 32"));
    CHECK(mentions(r, "lse_d heads 16-31 of every group of 32"));
    CHECK(tensor(r, "out_p").passed());  // its prefill side is right
    CHECK(tensor(r, "out_d").nan + tensor(r, "out_d").unwritten == 17 * 16 * 128);
    REQUIRE(tensor(r, "out_d").worst);
    CHECK(tensor(r, "out_d").worst->head == 16);
  }
  // Group 16 is handled: the probe passes.
  const Trace probe = read_trace(kPod3, "fi_pod_probe_f16_h128_q33k77_g16_B17");
  CHECK(judged(probe.kase, probe.observed).status == Status::passed);
}

TEST_CASE("golden ALiBi + soft cap: incorrect under intended (sm_scale applied twice), passes under flashinfer",
          "[app][golden]") {
  require_golden();
  const Trace t = read_trace(kFeatures, "fi_prefill_f16_h128_alibi_softcap30_causal_q37k100_gqa4");
  const CaseResult intended = judged(t.kase, t.observed, Profile::intended);
  CAPTURE(text(intended));
  CHECK(intended.status == Status::incorrect);
  CHECK(mentions(intended, "sm_scale applied twice"));
  const CaseResult fi = judged(t.kase, t.observed, Profile::flashinfer);
  CAPTURE(text(fi));
  CHECK(fi.status == Status::passed);
}

TEST_CASE("golden POD case asking for options POD ignores: judged per profile", "[app][golden]") {
  require_golden();
  const Trace good = read_trace(kPod1, kGoodId);
  SECTION("RoPE on both sides") {
    Case asked = good.kase;
    asked.prefill->params.pos_encoding = PosEncoding::rope_llama;
    asked.decode->params.pos_encoding = PosEncoding::rope_llama;
    const CaseResult pod = judged(asked, good.observed, Profile::flashinfer_pod);
    CAPTURE(text(pod));
    CHECK(pod.status == Status::passed);
    const CaseResult intended = judged(asked, good.observed, Profile::intended);
    CAPTURE(text(intended));
    CHECK(intended.status == Status::incorrect);
    CHECK(mentions(intended, "prefill: RoPE not applied"));
    CHECK(mentions(intended, "decode: RoPE not applied"));
  }
  SECTION("soft cap on the prefill side") {
    Case asked = good.kase;
    asked.prefill->params.logits_soft_cap = 2.0;
    CHECK(judged(asked, good.observed, Profile::flashinfer_pod).status == Status::passed);
    const CaseResult intended = judged(asked, good.observed, Profile::intended);
    CAPTURE(text(intended));
    CHECK(intended.status == Status::incorrect);
    CHECK(mentions(intended, "prefill: soft cap not applied"));
  }
  SECTION("a custom mask on the decode side") {
    Case asked = good.kase;
    Side& d = *asked.decode;
    d.params.mask_mode = MaskMode::custom;
    d.params.custom_mask_indptr = {0};
    for (int r = 0; r < d.num_requests(); ++r) {
      const std::int64_t L = d.kv_len(r);
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>((L + 7) / 8), 0xFF);
      if (L > 1) bytes[0] &= 0xFE;  // hide key 0 from every request that has more than one key
      d.params.custom_mask.insert(d.params.custom_mask.end(), bytes.begin(), bytes.end());
      d.params.custom_mask_indptr.push_back(static_cast<std::int64_t>(d.params.custom_mask.size()));
    }
    CHECK(judged(asked, good.observed, Profile::flashinfer_pod).status == Status::passed);
    const CaseResult intended = judged(asked, good.observed, Profile::intended);
    CAPTURE(text(intended));
    CHECK(intended.status == Status::incorrect);
    CHECK(mentions(intended, "decode: custom mask ignored"));
  }
  SECTION("a profile never excuses unwritten elements") {
    Case asked = good.kase;
    asked.prefill->params.pos_encoding = PosEncoding::rope_llama;
    KernelOutputs obs = good.observed;
    obs.out_p->set_bits(5, kPoisonF16);
    const CaseResult pod = judged(asked, obs, Profile::flashinfer_pod);
    CHECK(pod.status == Status::incorrect);
    CHECK(tensor(pod, "out_p").unwritten == 1);
  }
}

TEST_CASE("faults planted in a good golden trace: verdict and location", "[app][golden]") {
  require_golden();
  const Trace good = read_trace(kPod1, kGoodId);
  const Case& c = good.kase;
  const int H = c.num_qo_heads, D = c.head_dim;
  REQUIRE(judged(c, good.observed).status == Status::passed);

  SECTION("one element off") {
    KernelOutputs o = good.observed;
    const std::int64_t k = testhelp::out_index(c, 4, 3, 77);  // prefill row 4, head 3, dim 77
    o.out_p->set(k, o.out_p->get(k) + 0.03);
    const CaseResult r = judged(c, o);
    CAPTURE(text(r));
    CHECK(r.status == Status::incorrect);
    const auto& t = tensor(r, "out_p");
    CHECK(t.over_tol == 1);
    REQUIRE(t.worst);
    CHECK((t.worst->side == SideKind::prefill && t.worst->row == 4 && t.worst->head == 3 && t.worst->dim == 77));
    CHECK(t.worst->kv.find("keys 0..30") != std::string::npos);  // causal: row 4 of 7 over 33 keys
    CHECK(mentions(r, "a single element"));
  }
  SECTION("one head off") {
    KernelOutputs o = good.observed;
    for (std::int64_t row = 0; row < c.decode->num_rows(); ++row)
      for (int d = 0; d < D; ++d) {
        const auto k = testhelp::out_index(c, row, 5, d);
        o.out_d->set(k, o.out_d->get(k) * 0.9);
      }
    const CaseResult r = judged(c, o);
    CAPTURE(text(r));
    CHECK(r.status == Status::incorrect);
    CHECK(tensor(r, "out_d").worst->head == 5);
    CHECK(mentions(r, "out_d head(s) 5"));
  }
  SECTION("one request's pages shuffled") {
    // A case whose decode requests span several pages of 5 with a partial last page.
    const Trace t2 = read_trace(kPod1, "fi_pod_f16_h128_q7k33_causal_gqa7_B17_ps5");
    const Case& c2 = t2.kase;
    const int H2 = c2.num_qo_heads, D2 = c2.head_dim;
    REQUIRE(judged(c2, t2.observed).status == Status::passed);
    const auto& pt = c2.decode->kv.pages;
    int req = -1;
    for (int r = 0; r < c2.decode->num_requests() && req < 0; ++r)
      if (pt.indptr[r + 1] - pt.indptr[r] >= 2 && pt.last_page_len[r] < pt.page_size) req = r;
    REQUIRE(req >= 0);
    Case shuffled = c2;
    auto& sp = shuffled.decode->kv.pages;
    std::swap(sp.indices[sp.indptr[req]], sp.indices[sp.indptr[req + 1] - 1]);
    const auto wrong = testhelp::rounded_reference(shuffled);
    KernelOutputs o = t2.observed;
    for (int h = 0; h < H2; ++h) {
      for (int d = 0; d < D2; ++d) o.out_d->set((req * H2 + h) * D2 + d, wrong.out_d->get((req * H2 + h) * D2 + d));
      o.lse_d->set(req * H2 + h, wrong.lse_d->get(req * H2 + h));
    }
    const CaseResult r = judged(c2, o);
    CAPTURE(text(r), req);
    CHECK(r.status == Status::incorrect);
    REQUIRE(tensor(r, "out_d").worst);
    CHECK(tensor(r, "out_d").worst->request == req);
    CHECK(tensor(r, "out_d").worst->kv.find("pages [") != std::string::npos);
    CHECK(mentions(r, "confined to decode request " + std::to_string(req)));
  }
  SECTION("LSE in base e") {
    KernelOutputs o = good.observed;
    for (auto* l : {&*o.lse_p, &*o.lse_d})
      for (std::int64_t i = 0; i < l->numel(); ++i) l->set(i, l->get(i) * std::log(2.0));
    const CaseResult r = judged(c, o);
    CAPTURE(text(r));
    CHECK(r.status == Status::incorrect);
    CHECK(tensor(r, "out_p").passed());
    CHECK(tensor(r, "out_d").passed());
    CHECK(mentions(r, "matches the reference with: LSE in base e"));
  }
  SECTION("v_scale applied twice") {
    Case scaled = c;
    scaled.decode->params.v_scale = 0.5;  // the kernel's output times 0.5 is the right answer (exact in fp16)
    KernelOutputs o = good.observed;
    for (std::int64_t i = 0; i < o.out_d->numel(); ++i) o.out_d->set(i, o.out_d->get(i) * 0.25);
    const CaseResult r = judged(scaled, o);
    CAPTURE(text(r));
    CHECK(r.status == Status::incorrect);
    CHECK(mentions(r, "decode: v_scale applied twice"));
    KernelOutputs once = good.observed;
    for (std::int64_t i = 0; i < once.out_d->numel(); ++i) once.out_d->set(i, once.out_d->get(i) * 0.5);
    CHECK(judged(scaled, once).status == Status::passed);
  }
  SECTION("a computed NaN and an unwritten element") {
    KernelOutputs o = good.observed;
    o.out_d->set_bits(testhelp::out_index(c, 9, 2, 1), 0x7E00u);
    o.lse_p->set_bits(6 * H + 7, kPoisonF32);
    const CaseResult r = judged(c, o);
    CAPTURE(text(r));
    CHECK(r.status == Status::incorrect);
    CHECK(tensor(r, "out_d").nan == 1);
    CHECK(tensor(r, "out_d").worst->request == 9);
    CHECK(tensor(r, "out_d").worst->head == 2);
    CHECK(tensor(r, "out_d").worst->dim == 1);
    CHECK(tensor(r, "lse_p").unwritten == 1);
    CHECK(tensor(r, "lse_p").worst->row == 6);
    CHECK(tensor(r, "lse_p").worst->head == 7);
  }
  SECTION("a whole request missing") {
    KernelOutputs o = good.observed;
    for (int h = 0; h < H; ++h) {
      for (int d = 0; d < D; ++d) o.out_d->set_bits((11 * H + h) * D + d, kPoisonF16);
      o.lse_d->set_bits(11 * H + h, kPoisonF32);
    }
    const CaseResult r = judged(c, o);
    CAPTURE(text(r));
    CHECK(r.status == Status::incorrect);
    CHECK(mentions(r, "out_d request(s) 11 entirely (whole request missing)"));
  }
}
