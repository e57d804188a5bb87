// podcheck generate (generate.hpp).
#include "app/generate.hpp"

#include "app/errors.hpp"
#include "fixtures/atomic_file.hpp"
#include "fixtures/case_spec.hpp"
#include "fixtures/fixture_io.hpp"
#include "fixtures/sweep.hpp"
#include "reference/reference.hpp"

#include <fmt/core.h>

#include <chrono>

namespace podcheck::app {

int run_generate(const GenerateOptions& o) {
  if (o.tier.empty() == o.cases.empty()) throw UsageError("generate: give either --tier or --case (not both)");
  Shard shard;
  try {
    shard = parse_shard(o.shard);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  try {
    (void)check_output(o.output, o.force, /*allow_stream=*/false);  // before any work (fixtures/atomic_file.hpp)
  } catch (const OutputError& e) {
    throw UsageError(std::string("generate: ") + e.what());
  }

  std::vector<std::string> ids;
  try {
    if (!o.tier.empty()) {
      ids = list_tier(o.tier, shard);
    } else {
      for (std::size_t i = 0; i < o.cases.size(); ++i)
        if (shard.contains(i)) ids.push_back(case_id(parse_case_id(o.cases[i])));  // refuses non-canonical ids
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (ids.empty()) throw UsageError("generate: no case selected");

  double gbytes = 0;
  for (const auto& id : ids) gbytes += static_cast<double>(spec_input_bytes(parse_case_id(id))) * 1e-9;
  fmt::print(stderr, "generate: {} cases, ~{:.2f} GB of inputs -> {}\n", ids.size(), gbytes, o.output);
  if (gbytes > 16)
    fmt::print(stderr, "generate: warning: the whole file is held in memory; split big tiers with --shard k/n\n");

  std::vector<Fixture> fixtures;
  fixtures.reserve(ids.size());
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    Fixture f;
    try {
      f.kase = make_case(ids[i]);
      f.reference = reference_fast(f.kase);
    } catch (const InvalidCase& e) {
      throw UsageError(std::string("generate: ") + e.what());
    }
    fixtures.push_back(std::move(f));
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "[{}/{}] {} ({:.2f} s)\n", i + 1, ids.size(), ids[i], dt);
  }
  FixtureWriteOptions w;
  w.reference_dtype = o.float32 ? DType::float32 : DType::float64;
  w.force = o.force;
  try {
    write_fixtures(o.output, fixtures, w);
  } catch (const FormatError& e) {
    throw UsageError(e.what());
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(stderr, "generate: wrote {} cases to {} in {:.1f} s\n", ids.size(), o.output, total);
  return 0;
}

}  // namespace podcheck::app
