// safetensors reader and writer (traces/safetensors.hpp).
#include "traces/safetensors.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace podcheck::safetensors {

namespace {

constexpr std::uint64_t kMaxHeader = 100'000'000;

struct DtypeRow {
  Dtype d;
  const char* name;
  std::size_t size;
  const char* torch;
};
constexpr DtypeRow kDtypes[] = {
    {Dtype::F16, "F16", 2, "torch.float16"},          {Dtype::BF16, "BF16", 2, "torch.bfloat16"},
    {Dtype::F32, "F32", 4, "torch.float32"},          {Dtype::F64, "F64", 8, "torch.float64"},
    {Dtype::F8_E4M3, "F8_E4M3", 1, "torch.float8_e4m3fn"}, {Dtype::F8_E5M2, "F8_E5M2", 1, "torch.float8_e5m2"},
    {Dtype::I32, "I32", 4, "torch.int32"},            {Dtype::I64, "I64", 8, "torch.int64"},
    {Dtype::U8, "U8", 1, "torch.uint8"},              {Dtype::BOOL, "BOOL", 1, "torch.bool"},
};

const DtypeRow& row(Dtype d) {
  for (const auto& r : kDtypes)
    if (r.d == d) return r;
  return kDtypes[0];
}

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw SafetensorsError("safetensors file '" + file + "': " + what);
}
[[noreturn]] void fail_key(const std::string& file, const std::string& key, const std::string& what) {
  throw SafetensorsError("safetensors file '" + file + "', tensor '" + key + "': " + what);
}

class FileSource final : public Source {
 public:
  explicit FileSource(const std::string& path) : Source(path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) fail(path, "not a regular file (or missing)");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      ::close(fd_);
      fail(path, std::string("cannot stat: ") + std::strerror(errno));
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~FileSource() override {
    if (fd_ >= 0) ::close(fd_);
  }
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, std::size_t n, std::uint8_t* out) const override {
    if (offset > size_ || n > size_ - offset) fail(name_, "read past the end of the file");
    std::size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) fail(name_, r == 0 ? "file shrank while reading" : std::string("read error: ") + std::strerror(errno));
      done += static_cast<std::size_t>(r);
    }
  }

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

class MemorySource final : public Source {
 public:
  MemorySource(std::span<const std::uint8_t> b, std::string name) : Source(std::move(name)), b_(b) {}
  std::uint64_t size() const override { return b_.size(); }
  void read(std::uint64_t offset, std::size_t n, std::uint8_t* out) const override {
    if (offset > b_.size() || n > b_.size() - offset) fail(name_, "read past the end of the buffer");
    if (n) std::memcpy(out, b_.data() + offset, n);
  }

 private:
  std::span<const std::uint8_t> b_;
};

std::optional<Dtype> dtype_from(const std::string& s) {
  for (const auto& r : kDtypes)
    if (s == r.name) return r.d;
  return std::nullopt;
}

// Non-negative JSON integer (refuses floats, negatives, booleans).
std::optional<std::uint64_t> as_uint(const nlohmann::json& j) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_number_integer()) {
    auto v = j.get<std::int64_t>();
    if (v >= 0) return static_cast<std::uint64_t>(v);
  }
  return std::nullopt;
}

}  // namespace

std::string_view dtype_name(Dtype d) { return row(d).name; }
std::size_t dtype_size(Dtype d) { return row(d).size; }
std::string_view torch_dtype_name(Dtype d) { return row(d).torch; }

std::int64_t TensorInfo::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string TensorInfo::shape_string() const {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const TensorInfo* Header::find(const std::string& key) const {
  for (const auto& t : tensors)
    if (t.key == key) return &t;
  return nullptr;
}

std::unique_ptr<Source> open_file(const std::string& path) { return std::make_unique<FileSource>(path); }
std::unique_ptr<Source> memory_source(std::span<const std::uint8_t> bytes, std::string name) {
  return std::make_unique<MemorySource>(bytes, std::move(name));
}

Header parse_header(const Source& src) {
  const std::string& file = src.name();
  const std::uint64_t size = src.size();
  if (size < 8) fail(file, "truncated: " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  std::uint8_t lenb[8];
  src.read(0, 8, lenb);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | lenb[i];
  Header h;
  h.header_bytes = n;
  if (n > kMaxHeader) fail(file, "header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n > size - 8)
    fail(file, "truncated: the header says " + std::to_string(n) + " bytes of JSON but only " +
                   std::to_string(size - 8) + " follow the length");
  if (n < 2) fail(file, "header of " + std::to_string(n) + " bytes cannot hold a JSON object");
  h.data_start = 8 + n;
  std::string text(static_cast<std::size_t>(n), '\0');
  src.read(8, static_cast<std::size_t>(n), reinterpret_cast<std::uint8_t*>(text.data()));
  if (text[0] != '{') fail(file, "header does not start with '{'");

  // Parse, refusing duplicate keys at any depth (a JSON parser would keep the last one silently).
  std::vector<std::set<std::string>> open_objects;
  std::string dup;
  auto cb = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) open_objects.emplace_back();
    else if (ev == E::object_end && !open_objects.empty()) open_objects.pop_back();
    else if (ev == E::key && !open_objects.empty() && parsed.is_string()) {
      auto k = parsed.get<std::string>();
      if (!open_objects.back().insert(k).second && dup.empty()) dup = k;
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end(), cb);
  } catch (const nlohmann::json::exception& e) {
    fail(file, std::string("header is not valid JSON: ") + e.what());
  }
  if (!dup.empty()) fail(file, "header repeats the key '" + dup + "'");
  if (!j.is_object()) fail(file, "header is not a JSON object");

  const std::uint64_t data_size = size - h.data_start;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const auto& v = it.value();
    if (key == "__metadata__") {
      if (!v.is_object()) fail(file, "'__metadata__' is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) fail(file, "'__metadata__' entry '" + m.key() + "' is not a string");
        h.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) fail_key(file, key, "entry is not an object");
    for (auto f = v.begin(); f != v.end(); ++f)
      if (f.key() != "dtype" && f.key() != "shape" && f.key() != "data_offsets")
        fail_key(file, key, "unknown field '" + f.key() + "'");
    if (!v.contains("dtype") || !v["dtype"].is_string()) fail_key(file, key, "missing or non-string 'dtype'");
    if (!v.contains("shape") || !v["shape"].is_array()) fail_key(file, key, "missing or non-array 'shape'");
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
      fail_key(file, key, "missing 'data_offsets' [begin, end]");
    TensorInfo t;
    t.key = key;
    std::string ds = v["dtype"].get<std::string>();
    auto d = dtype_from(ds);
    if (!d)
      fail_key(file, key, "dtype '" + ds + "' is not read by podcheck (F16, BF16, F32, F64, F8_E4M3, F8_E5M2, I32, I64, U8, BOOL)");
    t.dtype = *d;
    // numel * item size, refusing anything that overflows 2^62 on the way
    constexpr std::uint64_t kLimit = std::uint64_t{1} << 62;
    std::uint64_t numel = 1;
    for (const auto& e : v["shape"]) {
      auto dim = as_uint(e);
      if (!dim) fail_key(file, key, "shape entry " + e.dump() + " is not a non-negative integer");
      if (*dim >= kLimit || (*dim != 0 && numel > kLimit / *dim)) fail_key(file, key, "shape " + v["shape"].dump() + " overflows");
      numel *= *dim;
      t.shape.push_back(static_cast<std::int64_t>(*dim));
    }
    auto b = as_uint(v["data_offsets"][0]), en = as_uint(v["data_offsets"][1]);
    if (!b || !en) fail_key(file, key, "data_offsets " + v["data_offsets"].dump() + " are not non-negative integers");
    if (*b > *en) fail_key(file, key, "data_offsets " + v["data_offsets"].dump() + " end before they begin");
    if (*en > data_size)
      fail_key(file, key, "data_offsets " + v["data_offsets"].dump() + " reach past the end of the data (" +
                              std::to_string(data_size) + " bytes): truncated or lying header");
    const std::uint64_t bytes = numel * dtype_size(t.dtype);
    if (*en - *b != bytes)
      fail_key(file, key, "shape " + t.shape_string() + " of " + ds + " needs " + std::to_string(bytes) +
                              " bytes but data_offsets " + v["data_offsets"].dump() + " hold " + std::to_string(*en - *b));
    t.begin = *b;
    t.end = *en;
    h.tensors.push_back(std::move(t));
  }
  std::stable_sort(h.tensors.begin(), h.tensors.end(),
                   [](const TensorInfo& a, const TensorInfo& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
  std::uint64_t at = 0;
  for (const auto& t : h.tensors) {
    if (t.begin != at)
      fail_key(file, t.key, t.begin < at ? "data overlaps the previous tensor's (offset " + std::to_string(t.begin) + " < " + std::to_string(at) + ")"
                                         : "a gap of " + std::to_string(t.begin - at) + " bytes precedes its data (offset " + std::to_string(t.begin) + ")");
    at = t.end;
  }
  if (at != data_size)
    fail(file, std::to_string(data_size - at) + " bytes after the last tensor belong to no tensor");
  return h;
}

File::File(std::unique_ptr<Source> src) : src_(std::move(src)), header_(parse_header(*src_)) {}

const TensorInfo& File::info(const std::string& key) const {
  const TensorInfo* t = header_.find(key);
  if (!t) fail_key(name(), key, "not in the file");
  return *t;
}

std::vector<std::uint8_t> File::read_bytes(const std::string& key) const {
  const TensorInfo& t = info(key);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(t.nbytes()));
  src_->read(header_.data_start + t.begin, out.size(), out.data());
  return out;
}

std::vector<std::uint8_t> File::read_rows(const std::string& key, const std::vector<std::int64_t>& rows) const {
  const TensorInfo& t = info(key);
  if (t.shape.empty()) fail_key(name(), key, "a scalar has no rows");
  const std::int64_t n0 = t.shape[0];
  const std::uint64_t row_bytes = n0 > 0 ? t.nbytes() / static_cast<std::uint64_t>(n0) : 0;
  std::vector<std::uint8_t> out(rows.size() * row_bytes);
  std::size_t i = 0;
  while (i < rows.size()) {
    if (rows[i] < 0 || rows[i] >= n0)
      fail_key(name(), key, "row " + std::to_string(rows[i]) + " out of range [0, " + std::to_string(n0) + ")");
    std::size_t j = i + 1;  // coalesce a run of consecutive rows into one read
    while (j < rows.size() && rows[j] == rows[j - 1] + 1 && rows[j] < n0) ++j;
    src_->read(header_.data_start + t.begin + static_cast<std::uint64_t>(rows[i]) * row_bytes,
               static_cast<std::size_t>((j - i) * row_bytes), out.data() + i * row_bytes);
    i = j;
  }
  return out;
}

namespace {

std::optional<DType> model_dtype(Dtype d) {
  switch (d) {
    case Dtype::F16: return DType::float16;
    case Dtype::BF16: return DType::bfloat16;
    case Dtype::F32: return DType::float32;
    case Dtype::F64: return DType::float64;
    case Dtype::F8_E4M3: return DType::float8_e4m3fn;
    case Dtype::F8_E5M2: return DType::float8_e5m2;
    case Dtype::I32: return DType::int32;
    case Dtype::U8: return DType::uint8;
    case Dtype::BOOL: return DType::uint8;
    case Dtype::I64: return DType::int32;
  }
  return std::nullopt;
}

}  // namespace

Tensor to_tensor(const File& f, const std::string& key, const std::optional<std::vector<std::int64_t>>& rows) {
  const TensorInfo& info = f.info(key);
  std::vector<std::uint8_t> raw = rows ? f.read_rows(key, *rows) : f.read_bytes(key);
  Tensor t;
  t.dtype = *model_dtype(info.dtype);
  t.shape = info.shape;
  if (rows) t.shape[0] = static_cast<std::int64_t>(rows->size());
  if (info.dtype == Dtype::I64) {
    const std::size_t n = raw.size() / 8;
    t.bytes.resize(n * 4);
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t v;
      std::memcpy(&v, raw.data() + 8 * i, 8);
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
        fail_key(f.name(), key, "int64 value " + std::to_string(v) + " at position " + std::to_string(i) + " does not fit in int32");
      auto w = static_cast<std::int32_t>(v);
      std::memcpy(t.bytes.data() + 4 * i, &w, 4);
    }
    return t;
  }
  if (info.dtype == Dtype::BOOL)
    for (std::size_t i = 0; i < raw.size(); ++i)
      if (raw[i] > 1) fail_key(f.name(), key, "bool byte " + std::to_string(raw[i]) + " at position " + std::to_string(i) + " is neither 0 nor 1");
  t.bytes = std::move(raw);
  return t;
}

std::vector<std::int64_t> read_ints(const File& f, const std::string& key) {
  const TensorInfo& info = f.info(key);
  std::vector<std::uint8_t> raw = f.read_bytes(key);
  std::vector<std::int64_t> v;
  switch (info.dtype) {
    case Dtype::I32:
      v.resize(raw.size() / 4);
      for (std::size_t i = 0; i < v.size(); ++i) {
        std::int32_t x;
        std::memcpy(&x, raw.data() + 4 * i, 4);
        v[i] = x;
      }
      return v;
    case Dtype::I64:
      v.resize(raw.size() / 8);
      for (std::size_t i = 0; i < v.size(); ++i) std::memcpy(&v[i], raw.data() + 8 * i, 8);
      return v;
    case Dtype::U8:
    case Dtype::BOOL:
      for (auto b : raw) v.push_back(b);
      return v;
    default:
      fail_key(f.name(), key, "expected an integer tensor (I32, I64, U8, BOOL), found " + std::string(dtype_name(info.dtype)));
  }
}

std::vector<double> read_doubles(const File& f, const std::string& key) {
  const TensorInfo& info = f.info(key);
  if (info.dtype == Dtype::I32 || info.dtype == Dtype::I64 || info.dtype == Dtype::U8 || info.dtype == Dtype::BOOL)
    fail_key(f.name(), key, "expected a floating-point tensor, found " + std::string(dtype_name(info.dtype)));
  return to_tensor(f, key).to_doubles();
}

Dtype dtype_for(DType t) {
  switch (t) {
    case DType::float16: return Dtype::F16;
    case DType::bfloat16: return Dtype::BF16;
    case DType::float8_e4m3fn: return Dtype::F8_E4M3;
    case DType::float8_e5m2: return Dtype::F8_E5M2;
    case DType::float32: return Dtype::F32;
    case DType::float64: return Dtype::F64;
    case DType::int32: return Dtype::I32;
    case DType::uint8: return Dtype::U8;
  }
  return Dtype::U8;
}

WriteTensor from_tensor(std::string key, const Tensor& t) {
  return WriteTensor{std::move(key), dtype_for(t.dtype), t.shape, t.bytes};
}

std::vector<std::uint8_t> serialize(const std::vector<WriteTensor>& tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::json h = nlohmann::json::object();
  std::uint64_t at = 0;
  std::set<std::string> keys;
  for (const auto& t : tensors) {
    if (t.key == "__metadata__" || !keys.insert(t.key).second)
      throw SafetensorsError("safetensors writer: key '" + t.key + "' is reserved or repeated");
    std::uint64_t numel = 1;
    for (auto d : t.shape) numel *= static_cast<std::uint64_t>(d);
    if (numel * dtype_size(t.dtype) != t.bytes.size())
      throw SafetensorsError("safetensors writer: tensor '" + t.key + "' has " + std::to_string(t.bytes.size()) +
                             " bytes for " + std::to_string(numel) + " elements of " + std::string(dtype_name(t.dtype)));
    h[t.key] = {{"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}, {"data_offsets", {at, at + t.bytes.size()}}};
    at += t.bytes.size();
  }
  if (!metadata.empty()) h["__metadata__"] = metadata;
  std::string text = h.dump();
  while (text.size() % 8) text.push_back(' ');  // the reference implementation pads to 8 bytes
  std::vector<std::uint8_t> out(8 + text.size() + at);
  std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::size_t off = 8 + text.size();
  for (const auto& t : tensors) {
    if (!t.bytes.empty()) std::memcpy(out.data() + off, t.bytes.data(), t.bytes.size());
    off += t.bytes.size();
  }
  return out;
}

void write_file(const std::string& path, const std::vector<WriteTensor>& tensors, const std::map<std::string, std::string>& metadata) {
  std::vector<std::uint8_t> bytes = serialize(tensors, metadata);
  std::filesystem::path p(path);
  std::string tmpl = (p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path()).string() + "/." +
                     p.filename().string() + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw SafetensorsError("cannot create a temp file next to '" + path + "': " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw SafetensorsError("cannot write '" + path + "': " + std::strerror(errno));
    }
    done += static_cast<std::size_t>(w);
  }
  ::fchmod(fd, 0644);
  ::close(fd);
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    ::unlink(tmpl.c_str());
    throw SafetensorsError("cannot rename onto '" + path + "': " + std::strerror(errno));
  }
}

}  // namespace podcheck::safetensors
