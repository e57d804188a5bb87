// The safetensors reader on bytes built by hand in the test (8-byte length, JSON, data), so the reader is
// checked against the format's definition rather than against our own writer; then the writer's output read
// back, and every kind of bad file refused with a message naming the file and the tensor key.
#include "fixtures/tests/format_test_util.hpp"
#include "testing/catch.hpp"
#include "traces/safetensors.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace podcheck;
using namespace podcheck::safetensors;
using podcheck::test::contains;

namespace {

std::vector<std::uint8_t> raw(const std::string& header, const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> out(8);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  out.resize(8 + header.size() + data.size());
  std::memcpy(out.data() + 8, header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + 8 + header.size(), data.data(), data.size());
  return out;
}

template <class T>
std::vector<std::uint8_t> le(std::initializer_list<T> v) {
  std::vector<std::uint8_t> out(v.size() * sizeof(T));
  std::size_t i = 0;
  for (T x : v) std::memcpy(out.data() + sizeof(T) * i++, &x, sizeof(T));
  return out;
}

std::string error_of(const std::vector<std::uint8_t>& bytes, const std::string& key = "") {
  try {
    File f(memory_source(bytes, "buf.safetensors"));
    if (!key.empty()) (void)to_tensor(f, key);
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("safetensors: a hand-built file reads back with its dtypes, shapes and bytes", "[traces][safetensors]") {
  // two tensors, written in the order b then a (offsets decide the order, not the JSON)
  std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},)"
      R"("b":{"dtype":"I32","shape":[],"data_offsets":[0,4]}})";
  auto data = le<std::int32_t>({-7});
  auto fa = le<float>({1.5f, -2.0f});
  data.insert(data.end(), fa.begin(), fa.end());
  const auto bytes = raw(header, data);  // memory_source does not own the bytes
  File f(memory_source(bytes, "x.safetensors"));
  REQUIRE(f.header().tensors.size() == 2);
  CHECK(f.header().tensors[0].key == "b");
  CHECK(f.header().metadata.at("format") == "pt");
  Tensor a = to_tensor(f, "a");
  CHECK(a.dtype == DType::float32);
  CHECK(a.shape == std::vector<std::int64_t>{2});
  CHECK(a.get(0) == 1.5);
  CHECK(a.get(1) == -2.0);
  CHECK(read_ints(f, "b") == std::vector<std::int64_t>{-7});
  CHECK(f.info("b").shape.empty());
  CHECK(f.info("b").numel() == 1);
}

TEST_CASE("safetensors: every dtype podcheck reads, through the writer and back", "[traces][safetensors]") {
  std::vector<WriteTensor> ts = {
      {"f16", Dtype::F16, {2}, le<std::uint16_t>({0x3C00, 0xC000})},        // 1, -2
      {"bf16", Dtype::BF16, {2}, le<std::uint16_t>({0x3F80, 0x7FC1})},      // 1, a NaN payload (kept)
      {"f32", Dtype::F32, {1}, le<float>({0.3f})},
      {"f64", Dtype::F64, {1}, le<double>({0.1})},
      {"e4m3", Dtype::F8_E4M3, {2}, {0x38, 0x7E}},                          // 1, 448
      {"e5m2", Dtype::F8_E5M2, {1}, {0x3C}},                                // 1
      {"i32", Dtype::I32, {2}, le<std::int32_t>({5, -1})},
      {"i64", Dtype::I64, {3}, le<std::int64_t>({0, 3, 2147483647})},
      {"u8", Dtype::U8, {2}, {0, 255}},
      {"flag", Dtype::BOOL, {3}, {1, 0, 1}},
      {"empty", Dtype::F16, {0, 4}, {}},
  };
  auto bytes = serialize(ts, {{"k", "v"}});
  File f(memory_source(bytes, "all.safetensors"));
  CHECK(f.header().header_bytes % 8 == 0);
  CHECK(to_tensor(f, "f16").get(1) == -2.0);
  Tensor bf = to_tensor(f, "bf16");
  CHECK(bf.dtype == DType::bfloat16);
  CHECK(bf.bits(1) == 0x7FC1u);
  CHECK(to_tensor(f, "f32").get(0) == static_cast<double>(0.3f));
  CHECK(to_tensor(f, "f64").get(0) == 0.1);
  CHECK(to_tensor(f, "e4m3").get(1) == 448.0);
  CHECK(to_tensor(f, "e5m2").get(0) == 1.0);
  CHECK(read_ints(f, "i32") == std::vector<std::int64_t>{5, -1});
  Tensor i64 = to_tensor(f, "i64");
  CHECK(i64.dtype == DType::int32);
  CHECK(i64.get(2) == 2147483647.0);
  CHECK(read_ints(f, "u8") == std::vector<std::int64_t>{0, 255});
  Tensor flag = to_tensor(f, "flag");
  CHECK(flag.dtype == DType::uint8);
  CHECK(read_ints(f, "flag") == std::vector<std::int64_t>{1, 0, 1});
  CHECK(to_tensor(f, "empty").numel() == 0);
  CHECK(f.header().metadata.at("k") == "v");
  CHECK(torch_dtype_name(Dtype::BF16) == "torch.bfloat16");
}

TEST_CASE("safetensors: rows of dimension 0 are read alone, in any order", "[traces][safetensors]") {
  std::vector<WriteTensor> ts = {{"pages", Dtype::I32, {5, 2}, le<std::int32_t>({0, 1, 10, 11, 20, 21, 30, 31, 40, 41})}};
  const auto bytes = serialize(ts);  // memory_source does not own the bytes
  File f(memory_source(bytes, "p.safetensors"));
  Tensor t = to_tensor(f, "pages", std::vector<std::int64_t>{3, 4, 1});
  CHECK(t.shape == std::vector<std::int64_t>{3, 2});
  CHECK(t.get(0) == 30);
  CHECK(t.get(2) == 40);
  CHECK(t.get(5) == 11);
  try {
    (void)f.read_rows("pages", {5});
    FAIL("row 5 read");
  } catch (const SafetensorsError& e) {
    CHECK(contains(e.what(), "tensor 'pages': row 5 out of range [0, 5)"));
  }
}

TEST_CASE("safetensors: bad files are refused naming the file and the tensor key", "[traces][safetensors]") {
  const std::string ok = R"({"q":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})";
  const std::vector<std::uint8_t> four = {0, 0x3C, 0, 0x3C};
  CHECK(error_of(raw(ok, four)).empty());

  CHECK(contains(error_of({1, 2, 3}), "file 'buf.safetensors': truncated: 3 bytes"));
  auto cut = raw(ok, four);
  cut.resize(20);
  CHECK(contains(error_of(cut), "truncated: the header says"));
  // a header whose offsets reach past the data (file truncated after the header, or a lying header)
  CHECK(contains(error_of(raw(ok, {0, 0x3C})), "tensor 'q': data_offsets [0,4] reach past the end of the data (2 bytes)"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[3],"data_offsets":[0,4]}})", four)),
            "tensor 'q': shape [3] of F16 needs 6 bytes but data_offsets [0,4] hold 4"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[-2],"data_offsets":[0,4]}})", four)),
            "tensor 'q': shape entry -2 is not a non-negative integer"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[2.0],"data_offsets":[0,4]}})", four)), "shape entry 2.0"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"I8","shape":[4],"data_offsets":[0,4]}})", four)),
            "tensor 'q': dtype 'I8' is not read by podcheck"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[2],"data_offsets":[4,0]}})", four)), "end before they begin"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[2]}})", four)), "tensor 'q': missing 'data_offsets'"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[2],"data_offsets":[0,4],"x":1}})", four)), "unknown field 'x'"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"q":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", four)),
            "repeats the key 'q'"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[1],"data_offsets":[0,2]},"r":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", four)),
            "overlaps"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[1],"data_offsets":[2,4]}})", four)), "tensor 'q': a gap of 2 bytes"));
  CHECK(contains(error_of(raw(R"({"q":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", four)), "2 bytes after the last tensor"));
  CHECK(contains(error_of(raw(R"({"q": nope})", four)), "header is not valid JSON"));
  CHECK(contains(error_of(raw(R"([1,2,3,4,5,6])", four)), "does not start with '{'"));
  CHECK(contains(error_of(raw(R"({"__metadata__":{"a":1}})", {})), "'__metadata__' entry 'a' is not a string"));
  // a header length far beyond the file
  auto huge = raw(ok, four);
  huge[5] = 0x10;
  CHECK(contains(error_of(huge), "exceeds the 100 MB limit"));
  CHECK(contains(error_of(raw(R"({"b":{"dtype":"BOOL","shape":[4],"data_offsets":[0,4]}})", {1, 0, 2, 1}), "b"),
            "tensor 'b': bool byte 2 at position 2"));
  CHECK(contains(error_of(raw(R"({"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", le<std::int64_t>({1ll << 40})), "i"),
            "tensor 'i': int64 value 1099511627776 at position 0 does not fit in int32"));
  CHECK(contains(error_of(raw(ok, four), "missing"), "tensor 'missing': not in the file"));
}

TEST_CASE("safetensors: files on disk, written through a temp file", "[traces][safetensors]") {
  auto dir = std::filesystem::temp_directory_path() / ("podcheck-st-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "t.safetensors").string();
  write_file(path, {{"x", Dtype::F32, {2}, le<float>({1.0f, 2.0f})}});
  File f = File::open(path);
  CHECK(to_tensor(f, "x").get(1) == 2.0);
  std::size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
  CHECK(n == 1);  // no temp file left
  {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "abc";
  }
  try {
    (void)File::open(path);
    FAIL("truncated file opened");
  } catch (const SafetensorsError& e) {
    CHECK(contains(e.what(), "file '" + path + "': truncated"));
  }
  try {
    (void)File::open((dir / "none.safetensors").string());
    FAIL("missing file opened");
  } catch (const SafetensorsError& e) {
    CHECK(contains(e.what(), "not a regular file"));
  }
  std::filesystem::remove_all(dir);
}
