// A reader of safetensors files (the format FlashInfer's API logging and flashinfer-bench write), of our own:
// an 8-byte little-endian header length N, N bytes of JSON, then the raw little-endian tensor bytes.
//
// The header is checked in full before any tensor byte is read: a JSON object (no duplicate keys), an optional
// "__metadata__" object of strings, and for every other key {"dtype", "shape", "data_offsets"} with a known
// dtype, non-negative dimensions, numel * item size == end - begin (no overflow), and offsets that tile the
// data section exactly (sorted, no gap, no overlap, ending at the end of the file), as the format requires.
// Tensors are then read one at a time (a dump of a whole KV pool is never loaded at once), whole or as a set
// of rows of dimension 0. A Source is a file (read with pread) or a buffer in memory (for fuzzing and tests).
// Every error is a SafetensorsError whose message names the file and, where one is involved, the tensor key.
#pragma once

#include "reference/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace podcheck::safetensors {

struct SafetensorsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The element types podcheck reads (the safetensors names). Others (I8, I16, U16, U32, U64, F8_E8M0, F4,
// F6_*, ...) are refused with a message naming the dtype and the key.
enum class Dtype : std::uint8_t { F16, BF16, F32, F64, F8_E4M3, F8_E5M2, I32, I64, U8, BOOL };

std::string_view dtype_name(Dtype d);   // "F16", ...
std::size_t dtype_size(Dtype d);        // bytes per element
// The torch name FlashInfer's metadata uses for the dtype: "torch.float16", ..., "torch.bool".
std::string_view torch_dtype_name(Dtype d);

struct TensorInfo {
  std::string key;
  Dtype dtype = Dtype::F32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte offsets into the data section

  std::int64_t numel() const;
  std::uint64_t nbytes() const { return end - begin; }
  std::string shape_string() const;  // "[2, 3]"
};

struct Header {
  std::uint64_t header_bytes = 0;          // N
  std::uint64_t data_start = 0;            // 8 + N
  std::map<std::string, std::string> metadata;  // "__metadata__"
  std::vector<TensorInfo> tensors;         // in the order of their data offsets
  const TensorInfo* find(const std::string& key) const;
};

// Where the bytes come from.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  // Reads exactly n bytes at offset into out; throws SafetensorsError (naming the file) when it cannot.
  virtual void read(std::uint64_t offset, std::size_t n, std::uint8_t* out) const = 0;
  const std::string& name() const { return name_; }

 protected:
  explicit Source(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

std::unique_ptr<Source> open_file(const std::string& path);
// The buffer must outlive the source.
std::unique_ptr<Source> memory_source(std::span<const std::uint8_t> bytes, std::string name);

// Parses and checks the header against the source's size. Largest header accepted: 100 MB.
Header parse_header(const Source& src);

// A safetensors file opened for reading.
class File {
 public:
  explicit File(std::unique_ptr<Source> src);
  static File open(const std::string& path) { return File(open_file(path)); }

  const Header& header() const { return header_; }
  const std::string& name() const { return src_->name(); }
  bool has(const std::string& key) const { return header_.find(key) != nullptr; }
  // Throws naming the file and key when the key is absent.
  const TensorInfo& info(const std::string& key) const;
  // All bytes of a tensor.
  std::vector<std::uint8_t> read_bytes(const std::string& key) const;
  // Rows of dimension 0 (each row = product of the other dims elements), in the order given; each index is
  // checked against shape[0].
  std::vector<std::uint8_t> read_rows(const std::string& key, const std::vector<std::int64_t>& rows) const;

 private:
  std::unique_ptr<Source> src_;
  Header header_;
};

// Conversions onto the case model's tensors (reference/tensor.hpp). F16, BF16, F32, F64, F8_E4M3, F8_E5M2,
// U8 keep their bytes; I32 as int32; I64 as int32 when every value fits (else an error naming the key and
// the value); BOOL as uint8 0/1 (any other byte is an error). `rows`, when given, selects rows of dim 0.
Tensor to_tensor(const File& f, const std::string& key, const std::optional<std::vector<std::int64_t>>& rows = {});
// Integer tensors (I32, I64, U8, BOOL) as int64 values.
std::vector<std::int64_t> read_ints(const File& f, const std::string& key);
// Floating tensors as doubles (exact decode).
std::vector<double> read_doubles(const File& f, const std::string& key);

// Writer (used by podcheck export fib and by tests). Tensors are written in the order given; keys must be
// unique and not "__metadata__". Writes to a temp file in the same folder and renames it onto path.
struct WriteTensor {
  std::string key;
  Dtype dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;  // numel * dtype_size
};
std::vector<std::uint8_t> serialize(const std::vector<WriteTensor>& tensors,
                                    const std::map<std::string, std::string>& metadata = {});
void write_file(const std::string& path, const std::vector<WriteTensor>& tensors,
                const std::map<std::string, std::string>& metadata = {});
// The safetensors dtype that stores a case-model dtype (float16 -> F16, int32 -> I32, uint8 -> U8, ...).
Dtype dtype_for(DType t);
WriteTensor from_tensor(std::string key, const Tensor& t);

}  // namespace podcheck::safetensors
