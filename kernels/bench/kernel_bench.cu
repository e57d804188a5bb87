// podcheck bench kernel (see kernel_bench.hpp): ceilings, then per mix: the case built from its id,
// uploaded once per rotation set, each kernel validated on it, then timed.
#include "kernels/bench/kernel_bench.hpp"
#include "kernels/bench/timeline_summary.hpp"
#include "kernels/host/cuda_check.hpp"
#include "kernels/host/device_case.hpp"
#include "kernels/host/kernel_runner.hpp"
#include "kernels/pod/pod_launch.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

namespace podcheck::kernels {

namespace {

#define CUBLAS_CHECK(call)                                                                       \
  do {                                                                                           \
    cublasStatus_t st_ = (call);                                                                 \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                            \
      throw CudaError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " #call ": " + \
                      cublasGetStatusString(st_));                                               \
  } while (0)

__global__ void fill_bf16(__nv_bfloat16* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n; i += (std::size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ (seed * 0x9E3779B9u) ^ (unsigned)(i >> 32);
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    const float u1 = (h & 0xFFFF) / 65536.f, u2 = (h >> 16) / 65536.f;
    p[i] = __float2bfloat16((u1 + u2 - 1.f) * 2.4f);  // mean 0, sd ~1
  }
}

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(std::size_t bytes) { CUDA_CHECK(cudaMalloc(&p, bytes)); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() {
    if (p) cudaFree(p);
  }
};

void fill(void* p, std::size_t elems, unsigned seed) {
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), elems, seed);
  CUDA_CHECK(cudaGetLastError());
}

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

// Median time of fn(rep) over reps after warm-up, with CUDA events on `stream` around each call.
template <class F>
double time_ms(cudaStream_t stream, int warmup, int reps, F&& fn) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) fn(i);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(a, stream));
    fn(warmup + i);
    CUDA_CHECK(cudaEventRecord(b, stream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t);
}

std::string scheduling_of(const pod_run_stats& st) {
  return "grid " + std::to_string(st.grid_ctas) + ", items p/d " + std::to_string(st.items_prefill) + "/" +
         std::to_string(st.items_decode) + ", splits p/d " + std::to_string(st.max_splits_prefill) + "/" +
         std::to_string(st.max_splits_decode);
}

// One kernel behind a uniform interface: ours through PreparedPod (planned once per problem, as before),
// a peer through its ABI (a port that plans inside run(), e.g. the FlashInfer port, caches its plan).
class Timed {
 public:
  virtual ~Timed() = default;
  // POD_OK, or the kernel's refusal (POD_NOT_SUPPORTED, POD_INVALID, ...) with its reason in `why`
  virtual pod_status prepare(const pod_problem& p, int set, int mode, std::string& why) = 0;
  virtual void launch(int set, int mode, cudaStream_t stream) = 0;
  virtual pod_run_stats stats(int set, int mode) const = 0;
  virtual std::string timeline(int /*set*/, int /*mode*/, cudaStream_t /*stream*/) { return ""; }  // ours only
  // (ours) pod_ws_kernel's split form: ", SMs p/d <prefill>/<decode> (decode: <which>; model ends: prefill <ms>,
  // decode <ms>)"; else ""
  virtual std::string split_form(int /*set*/, int /*mode*/, int /*sms*/) const { return ""; }
};

// PODCHECK_BENCH_SPANS=<file>: each timeline launch's raw spans appended to <file> (spans_csv, its header once per
// file). A file that cannot be written is an error.
void append_spans(const char* path, int mode, const PreparedPod& pod, const std::vector<ItemSpan>& spans) {
  std::FILE* f = std::fopen(path, "a");
  if (!f) throw std::runtime_error(std::string("PODCHECK_BENCH_SPANS: cannot open ") + path);
  const bool header = std::fseek(f, 0, SEEK_END) == 0 && std::ftell(f) == 0;
  const std::string csv = spans_csv(mode, spans, pod.plan(), header);
  const bool ok = std::fwrite(csv.data(), 1, csv.size(), f) == csv.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error(std::string("PODCHECK_BENCH_SPANS: cannot write ") + path);
}

class Ours : public Timed {
 public:
  pod_status prepare(const pod_problem& p, int set, int mode, std::string& why) override {
    const pod_status st = podcheck_kernel_supports(&p);
    if (st != POD_OK) {
      why = podcheck_kernel_last_error();
      return st;
    }
    prepared_[{set, mode}] = std::make_unique<PreparedPod>(p);
    return POD_OK;
  }
  void launch(int set, int mode, cudaStream_t stream) override { prepared_.at({set, mode})->launch(stream); }
  pod_run_stats stats(int set, int mode) const override { return prepared_.at({set, mode})->stats(); }
  // PODCHECK_BENCH_TIMELINE_REPEAT=1: each timeline launch run twice back to back and the second one's spans kept, a
  // launch that finds in L2 what the one before it left there (its code, its inputs) where the default's first one
  // follows other work (notebook step 39: what the first wave of items waits on)
  std::string timeline(int set, int mode, cudaStream_t stream) override {
    const PreparedPod& pod = *prepared_.at({set, mode});
    if (const char* r = std::getenv("PODCHECK_BENCH_TIMELINE_REPEAT"); r && std::string(r) == "1")
      (void)pod.launch_timeline(stream);
    const std::vector<ItemSpan> spans = pod.launch_timeline(stream);
    if (const char* path = std::getenv("PODCHECK_BENCH_SPANS"); path && *path) append_spans(path, mode, pod, spans);
    return describe_timeline(summarize_timeline(spans));
  }
  std::string split_form(int set, int mode, int sms) const override {
    const PreparedPod& pod = *prepared_.at({set, mode});
    const int p = pod.split_prefill_sms();
    if (p == 0) return "";
    const SplitEnds e = pod.split_model();
    char ends[96];
    std::snprintf(ends, sizeof ends, "; model ends: prefill %.3f, decode %.3f ms", e.prefill_us / 1e3, e.decode_us / 1e3);
    return ", SMs p/d " + std::to_string(p) + "/" + std::to_string(sms - p) + " (decode: " + pod.split_decode() + ends +
           ")";
  }

 private:
  std::map<std::pair<int, int>, std::unique_ptr<PreparedPod>> prepared_;
};

class Peer : public Timed {
 public:
  explicit Peer(const KernelHandle& h) : vt_(h.vtable()) {}
  pod_status prepare(const pod_problem& p, int set, int mode, std::string& why) override {
    pod_problem& q = problems_[{set, mode}];
    q = p;
    q.stats = &stats_[{set, mode}];
    const pod_status st = vt_.supports(&q);
    if (st != POD_OK) why = vt_.last_error();
    return st;
  }
  void launch(int set, int mode, cudaStream_t stream) override {
    const pod_status st = vt_.run(&problems_.at({set, mode}), stream);
    if (st != POD_OK) throw std::runtime_error(std::string("peer kernel: ") + vt_.last_error());
  }
  pod_run_stats stats(int set, int mode) const override { return stats_.at({set, mode}); }

 private:
  pod_kernel_vtable vt_;
  std::map<std::pair<int, int>, pod_problem> problems_;
  std::map<std::pair<int, int>, pod_run_stats> stats_;
};

// Validation on set 0 (fused; then prefill alone and decode alone into one output set), then timings.
KernelTimes bench_one(Timed& k, const Case& c, std::vector<std::unique_ptr<DeviceCase>>& sets, const BenchOptions& o,
                      bool peer, cudaStream_t stream) {
  KernelTimes t;
  const bool both = c.prefill && c.decode;
  const std::vector<int> modes = both ? std::vector<int>{0, 1, 2} : std::vector<int>{0};
  for (std::size_t s = 0; s < sets.size(); ++s)
    for (int m : modes) {
      pod_problem p = sets[s]->problem();
      p.only_side = m;
      std::string why;
      if (const pod_status st = k.prepare(p, int(s), m, why); st != POD_OK) {
        // only a kernel that says it does not support the case is "unsupported"; any other refusal of a valid
        // case (POD_INVALID, ...) is a failure
        t.unsupported = st == POD_NOT_SUPPORTED;
        t.failure = (t.unsupported ? "not supported: " : "refused (status " + std::to_string(int(st)) + "): ") + why;
        return t;
      }
    }
  auto check_run = [&](const std::vector<int>& run_modes, const char* what) -> bool {
    DeviceCase& dc = *sets[0];
    dc.poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int m : run_modes) k.launch(0, m, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGetLastError());
    if (const std::string g = dc.check_guards(); !g.empty()) {
      t.failure = std::string(what) + ": out-of-bounds writes: " + g;
      return false;
    }
    if (const std::string why = o.hooks.validate(c, dc.download(), peer); !why.empty()) {
      t.failure = std::string(what) + ": " + why;
      return false;
    }
    return true;
  };
  if (!check_run({0}, "fused launch")) return t;
  if (both && !check_run({1, 2}, "prefill alone + decode alone")) return t;
  t.scheduling = scheduling_of(k.stats(0, 0)) + k.split_form(0, 0, k.stats(0, 0).grid_ctas);
  const int n = int(sets.size());
  for (int m : modes) {
    const double ms = time_ms(stream, o.warmup, o.reps, [&](int i) { k.launch(i % n, m, stream); });
    (m == 0 ? t.fused_ms : m == 1 ? t.prefill_ms : t.decode_ms) = ms;
  }
  t.timeline = k.timeline(0, 0, stream);  // after the timings: its atomics are not in them
  // PODCHECK_BENCH_TIMELINES=all: each side alone's timeline too (a side alone is planned on its own: its split,
  // grid and items differ from the fused launch's)
  if (const char* v = std::getenv("PODCHECK_BENCH_TIMELINES"); both && v && std::string(v) == "all")
    for (int m : {1, 2})
      if (const std::string tl = k.timeline(0, m, stream); !tl.empty())
        t.timeline += std::string("    ") + (m == 1 ? "prefill alone (" : "decode alone (") + scheduling_of(k.stats(0, m)) +
                      ") " + tl;
  t.ran = true;
  return t;
}

}  // namespace

BenchReport run_kernel_bench(const BenchOptions& o) {
  // a spans file that cannot be written fails the run before the GPU is touched, not after the first mix's timings
  if (const char* path = std::getenv("PODCHECK_BENCH_SPANS"); path && *path) {
    std::FILE* f = std::fopen(path, "a");
    if (!f || std::fclose(f) != 0) throw std::runtime_error(std::string("PODCHECK_BENCH_SPANS: cannot open ") + path);
  }
  if (!o.hooks.make_case || !o.hooks.validate)
    throw std::runtime_error("bench kernel: make_case and validate hooks are required (cases are validated before timing)");
  BenchReport rep;
  rep.device = device_description();
  rep.version = build_version();
  for (const char* knob : kTuningKnobs)
    if (const char* v = std::getenv(knob); v && *v) rep.tuning += std::string(rep.tuning.empty() ? "" : " ") + knob + "=" + v;
  std::optional<KernelHandle> peer_lib;
  if (!o.peer.empty()) {
    peer_lib.emplace(KernelHandle::load(o.peer));
    rep.peer_name = peer_lib->name() + " " + peer_lib->version();
  }
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  int l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  // A blocking stream (ordered with the legacy default stream), as PyTorch's default stream is: FlashInfer's
  // single POD clears its scheduler counters with cudaMemset on the legacy stream (SPEC 11.14).
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));

  {  // ceiling 1: device-to-device copy of 2 GiB (bytes read + written)
    const std::size_t bytes = std::size_t(2) << 30;
    DevBuf src(bytes), dst(bytes);
    fill(src.p, bytes / 2, 7);
    CUDA_CHECK(cudaDeviceSynchronize());
    const double ms = time_ms(stream, 3, 10, [&](int) {
      CUDA_CHECK(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice, stream));
    });
    rep.copy_tbps = 2.0 * bytes / (ms * 1e-3) / 1e12;
  }
  {  // ceiling 2: cuBLAS bf16 GEMM 8192^3, fp32 accumulate, random inputs
    const int n = 8192;
    DevBuf a(std::size_t(n) * n * 2), b(std::size_t(n) * n * 2), c(std::size_t(n) * n * 2);
    fill(a.p, std::size_t(n) * n, 11);
    fill(b.p, std::size_t(n) * n, 12);
    CUDA_CHECK(cudaDeviceSynchronize());
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, stream));
    const float alpha = 1.f, beta = 0.f;
    const double ms = time_ms(stream, 3, 10, [&](int) {
      CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.p, CUDA_R_16BF, n, b.p, CUDA_R_16BF, n,
                                &beta, c.p, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    });
    cublasDestroy(h);
    rep.gemm_tflops = 2.0 * n * double(n) * n / (ms * 1e-3) / 1e12;
  }

  for (const BenchMix& mix : o.mixes.empty() ? bench_mixes() : o.mixes) {
    BenchRow row;
    row.mix = mix;
    const Case c = o.hooks.make_case(mix.id);
    set_work(c, row);
    row.rotation_sets = std::clamp(int(std::ceil(4.0 * l2 / row.bytes)), 2, 8);
    std::vector<std::unique_ptr<DeviceCase>> sets;
    for (int i = 0; i < row.rotation_sets; ++i) sets.push_back(std::make_unique<DeviceCase>(c));
    {
      Ours ours;
      row.ours = bench_one(ours, c, sets, o, false, stream);
    }
    if (peer_lib) {
      Peer peer(*peer_lib);
      row.peer = bench_one(peer, c, sets, o, true, stream);
    }
    rep.rows.push_back(std::move(row));
  }
  cudaStreamDestroy(stream);
  return rep;
}

}  // namespace podcheck::kernels
