// `bench kernel --mix`: names, sets and case ids resolve to mixes before any GPU work; anything else is a
// usage error that names the value (no GPU needed).
#include "app/bench_kernel.hpp"
#include "app/errors.hpp"
#include "testing/catch.hpp"

#include <string>
#include <vector>

using namespace podcheck;

namespace {
std::vector<std::string> names(const std::vector<kernels::BenchMix>& m) {
  std::vector<std::string> out;
  for (const auto& x : m) out.push_back(x.name);
  return out;
}
}  // namespace

TEST_CASE("bench mixes: sets, names and case ids resolve in order, without duplicates", "[app][bench]") {
  CHECK(app::resolve_mixes({}).empty());  // the bench then times the standard set
  CHECK(names(app::resolve_mixes({"standard"})) == names(kernels::bench_mixes()));
  CHECK(names(app::resolve_mixes({"serving"})) == names(kernels::bench_serving_mixes()));
  // a first word selects one mix; order is kept; a mix named twice is timed once
  const auto picked = app::resolve_mixes({"A-e4m3", "B", "A-e4m3", "Sd"});
  REQUIRE(picked.size() == 3);
  CHECK(picked[0].name == "A-e4m3 (A, fp8 e4m3 KV)");
  CHECK(picked[1].name.rfind("B ", 0) == 0);
  CHECK(picked[2].name.rfind("Sd ", 0) == 0);
  // a canonical POD / BatchPOD id is its own mix
  const std::string id = "pod_bf16_h32kv8d128_ps16_nhd(qo_p=64,kv_p=64,causal,bs_d=2,kv_d=64,seed=0)";
  const auto own = app::resolve_mixes({id});
  REQUIRE(own.size() == 1);
  CHECK(own[0].id == id);
}

TEST_CASE("bench mixes: what cannot be timed is refused, naming the value", "[app][bench]") {
  auto refused = [](const std::string& v) {
    try {
      app::resolve_mixes({"A", v});
    } catch (const app::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(refused("nonsense"), HasSubstring("--mix 'nonsense'"));
  CHECK_THAT(refused("decode_bf16_h32kv8d128_ps16_nhd(bs_d=128,kv_d=2048,seed=0)"), HasSubstring("both sides"));
  CHECK_THAT(refused("prefill_bf16_h32kv8d128_ps16_nhd(qo_p=64,kv_p=64,causal,seed=0)"), HasSubstring("both sides"));
  CHECK_THAT(refused("pod_bf16_h32kv8d128_ps16_nhd(qo_p=64,kv_p=32,causal,bs_d=2,kv_d=64,seed=0)"),
             HasSubstring("kv_len_p >= qo_len_p"));  // spec_problem's reason
}
