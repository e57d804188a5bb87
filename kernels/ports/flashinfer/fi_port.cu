// podcheck's kernel ABI on FlashInfer's kernels (fb28d7242b35): which FlashInfer entry point a
// pod_problem goes to, what its Python wrapper would do to the parameters on the way (docs/PORTS.md has
// the table), FlashInfer's plan() through scheduler.cuh's PrefillPlan, the workspaces, and the four
// exported entry points. The kernels themselves are compiled in the generated instance files
// (fi_launch.cuh); a combination that was not compiled is reported not supported, naming it.
#include "kernels/ports/flashinfer/fi_dispatch.cuh"  // first: replaces DISPATCH_NUM_MMA_KV
#include "kernels/ports/flashinfer/fi_job.hpp"

#include <flashinfer/attention/scheduler.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace podcheck_fi {

// ---------------------------------------------------------------------------------------------------------
// launcher table (filled by the instance files' static initialisers when the library is loaded)

namespace {
std::map<std::string, LaunchFn>& table() {
  static std::map<std::string, LaunchFn> t;
  return t;
}
}  // namespace

void register_launcher(const char* key, LaunchFn fn) { table()[key] = fn; }
LaunchFn find_launcher(const std::string& key) {
  const auto it = table().find(key);
  return it == table().end() ? nullptr : it->second;
}
std::vector<std::string> launcher_keys() {
  std::vector<std::string> k;
  for (const auto& [name, fn] : table()) k.push_back(name);
  return k;
}

// ---------------------------------------------------------------------------------------------------------
// workspaces and plans

namespace {

constexpr std::size_t kFloatWorkspace = std::size_t(128) << 20;  // per side (BatchPOD: one 256 MiB buffer, halved)
constexpr std::size_t kIntWorkspace = std::size_t(8) << 20;      // the wrappers' 8 MiB int / pinned buffers
constexpr std::size_t kTmpBytes = std::size_t(32) << 20;         // pod.py / prefill.py cached tmp buffers

struct PlanKey {
  std::vector<std::int32_t> qo, kv;
  std::vector<std::int64_t> scalars;
  bool operator==(const PlanKey& o) const { return qo == o.qo && kv == o.kv && scalars == o.scalars; }
};

struct SlotState {
  void* float_buf = nullptr;
  void* int_buf = nullptr;
  void* pinned = nullptr;
  bool planned = false;
  PlanKey key;
  Planned plan;
};

struct Workspaces {
  SlotState slot[4];
  void* pod_tmp = nullptr;
  void* prefill_tmp = nullptr;
  int* sched = nullptr;
  std::int32_t* mask_indptr = nullptr;
  std::size_t mask_indptr_cap = 0;
};

Workspaces& ws() {
  static Workspaces w;
  return w;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

SlotState& slot_state(Slot s) {
  SlotState& st = ws().slot[static_cast<int>(s)];
  if (!st.float_buf) {
    check(cudaMalloc(&st.float_buf, kFloatWorkspace), "cudaMalloc float workspace");
    check(cudaMalloc(&st.int_buf, kIntWorkspace), "cudaMalloc int workspace");
    check(cudaMallocHost(&st.pinned, kIntWorkspace), "cudaMallocHost page-locked workspace");
  }
  return st;
}

}  // namespace

// The wrappers' plan(): PrefillPlan with causal False, fixed_split_size -1, split-KV allowed, no CUDA
// graph, the side's window and (BatchPOD's prefill) the colocated decode CTAs. Re-planned only when
// what the plan reads changes (the wrappers plan once and run many times; so does the benchmark).
Planned plan_side(Slot slot, const SideJob& s, const Job& job, int kv_dtype_bytes, std::int64_t colocated,
                  void* stream) {
  SlotState& st = slot_state(slot);
  PlanKey key;
  key.qo.assign(s.qo_indptr_host, s.qo_indptr_host + s.num_requests + 1);
  key.kv.assign(s.kv_indptr_host, s.kv_indptr_host + s.num_requests + 1);
  key.scalars = {job.num_qo_heads, job.num_kv_heads, job.head_dim, s.page_size, s.window_left, kv_dtype_bytes, colocated};
  if (st.planned && st.key == key) return st.plan;
  // The page-locked buffer is rewritten now and copied on `stream` by the plan: no earlier copy or
  // kernel may still be using this slot.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before plan");
  flashinfer::PrefillPlanInfo info;
  const cudaError_t e = flashinfer::PrefillPlan<std::int32_t>(
      st.float_buf, kFloatWorkspace, st.int_buf, st.pinned, kIntWorkspace, info, key.qo.data(), key.kv.data(),
      static_cast<std::uint32_t>(key.qo.back()), static_cast<std::uint32_t>(s.num_requests),
      static_cast<std::uint32_t>(job.num_qo_heads), static_cast<std::uint32_t>(job.num_kv_heads),
      static_cast<std::uint32_t>(job.head_dim), static_cast<std::uint32_t>(job.head_dim),
      static_cast<std::uint32_t>(s.page_size), /*enable_cuda_graph=*/false, /*sizeof_dtype_o=*/2, s.window_left,
      /*fixed_split_size=*/-1, /*disable_split_kv=*/false, colocated, /*uniform_q_len=*/0,
      static_cast<cudaStream_t>(stream), static_cast<std::uint32_t>(kv_dtype_bytes));
  check(e, "FlashInfer PrefillPlan");
  st.key = std::move(key);
  st.plan = Planned{info.ToVector(), st.int_buf, st.float_buf};
  st.planned = true;
  return st.plan;
}

void* pod_tmp_buffer() {
  if (!ws().pod_tmp) check(cudaMalloc(&ws().pod_tmp, kTmpBytes), "cudaMalloc pod tmp");
  return ws().pod_tmp;
}
void* prefill_tmp_buffer() {
  if (!ws().prefill_tmp) check(cudaMalloc(&ws().prefill_tmp, kTmpBytes), "cudaMalloc prefill tmp");
  return ws().prefill_tmp;
}
int* sm_aware_sched_buffer() {
  if (!ws().sched) {
    int dev = 0, sms = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    check(cudaMalloc(&ws().sched, sizeof(int) * (sms + 2)), "cudaMalloc sm_aware_sched");
  }
  return ws().sched;
}

// ---------------------------------------------------------------------------------------------------------
// small kernels of the wrappers' Python side

namespace {

// `out *= v_scale` on a 16-bit tensor: PyTorch multiplies in float and rounds once to the tensor's dtype.
template <class T>
__global__ void scale_output(T* out, std::int64_t n, float v) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = T(float(out[i]) * v);
}

__global__ void narrow_indptr(const std::int64_t* in, std::int32_t* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = std::int32_t(in[i]);
}

}  // namespace

}  // namespace podcheck_fi

// ---------------------------------------------------------------------------------------------------------
// the ABI

namespace {

using podcheck_fi::Family;
using podcheck_fi::Job;
using podcheck_fi::SideJob;

thread_local std::string g_last_error;
std::mutex g_mutex;

pod_status fail(pod_status st, std::string why) {
  g_last_error = std::move(why);
  return st;
}

const char* dtype_key(int t) {
  switch (t) {
    case POD_DTYPE_F16: return "f16";
    case POD_DTYPE_BF16: return "bf16";
    case POD_DTYPE_E4M3: return "e4m3";
    case POD_DTYPE_E5M2: return "e5m2";
    case POD_DTYPE_F32: return "f32";
  }
  return "?";
}
const char* mask_key(int m) { return m == POD_MASK_CAUSAL ? "causal" : m == POD_MASK_CUSTOM ? "custom" : "none"; }
const char* pos_key(int p) { return p == POD_POS_ROPE_LLAMA ? "rope" : p == POD_POS_ALIBI ? "alibi" : "none"; }

std::int64_t kv_len_of(const pod_kv& kv, int r) {
  const int pages = kv.indptr_host[r + 1] - kv.indptr_host[r];
  return pages == 0 ? 0 : std::int64_t(pages - 1) * kv.page_size + kv.last_page_len_host[r];
}

// The ABI side as the kernels see it, before any wrapper rule.
void copy_side(const pod_side& in, SideJob& s) {
  s.present = true;
  s.num_requests = in.num_requests;
  s.qo_indptr = in.qo_indptr;
  s.qo_indptr_host = in.qo_indptr_host;
  s.rows = in.qo_indptr_host[in.num_requests];
  s.q = in.q;
  s.q_stride_row = in.q_stride_row;
  s.q_stride_head = in.q_stride_head;
  s.k = in.kv.k;
  s.v = in.kv.v;
  s.k_stride_page = in.kv.k_stride_page;
  s.k_stride_slot = in.kv.k_stride_slot;
  s.k_stride_head = in.kv.k_stride_head;
  s.v_stride_page = in.kv.v_stride_page;
  s.v_stride_slot = in.kv.v_stride_slot;
  s.v_stride_head = in.kv.v_stride_head;
  s.page_size = in.kv.page_size;
  s.kv_indptr = in.kv.indptr;
  s.kv_indices = in.kv.indices;
  s.last_page_len = in.kv.last_page_len;
  s.kv_indptr_host = in.kv.indptr_host;
  s.last_page_len_host = in.kv.last_page_len_host;
  s.kv_len_dense = in.num_requests == 1 ? kv_len_of(in.kv, 0) : 0;
  s.mask_mode = in.mask_mode;
  s.custom_mask = in.custom_mask;
  s.window_left = in.window_left;
  s.sm_scale = in.sm_scale;
  s.rope_rcp_scale = static_cast<float>(1.0 / in.rope_scale);
  s.rope_rcp_theta = static_cast<float>(1.0 / in.rope_theta);
  s.alibi_slopes = in.alibi_slopes;
  s.o = in.o;
  s.lse = in.lse;
}

bool dense(const pod_side& s) { return s.num_requests == 1 && s.kv.k_stride_page == 0 && s.kv.v_stride_page == 0; }
bool same_kv_strides(const pod_side& s) {
  return s.kv.k_stride_page == s.kv.v_stride_page && s.kv.k_stride_slot == s.kv.v_stride_slot &&
         s.kv.k_stride_head == s.kv.v_stride_head;
}
bool one_row_per_request(const pod_side& s) {
  for (int r = 0; r <= s.num_requests; ++r)
    if (s.qo_indptr_host[r] != r) return false;
  return true;
}
float fold(float sm, float a, float b) { return static_cast<float>(double(sm) * double(a) * double(b)); }

struct Classified {
  Job job;
  std::string key;
  int custom_side = -1;  // 0 prefill, 1 decode side of job.prefill when a mask indptr must be narrowed
  const std::int64_t* mask_indptr64 = nullptr;
};

// Decides the FlashInfer entry point and applies the wrapper's rules. POD_OK, or NOT_SUPPORTED / INVALID
// with the reason in g_last_error.
pod_status classify(const pod_problem* pr, Classified& c) {
  if (!pr) return fail(POD_INVALID, "null problem");
  if (pr->abi_version != POD_ABI_VERSION) return fail(POD_INVALID, "ABI version mismatch");
  int dev = 0, major = 0, smem = 0, optin = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) ||
      cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) {
    cudaGetLastError();
    return fail(POD_NOT_SUPPORTED, "no usable CUDA device");
  }
  if (smem != podcheck_fi::kSmemPerSm || optin != podcheck_fi::kSmemPerBlockOptin)
    return fail(POD_NOT_SUPPORTED, "this build compiled the kernel variants FlashInfer selects with 233472 B of shared "
                                   "memory per SM and 232448 B per block (H100/H200); this GPU has " +
                                       std::to_string(smem) + " / " + std::to_string(optin));
  const int H = pr->num_qo_heads, Hkv = pr->num_kv_heads, D = pr->head_dim;
  if (H <= 0 || Hkv <= 0 || H % Hkv != 0) return fail(POD_INVALID, "num_qo_heads must be a multiple of num_kv_heads");
  if (pr->dtype_q != POD_DTYPE_F16 && pr->dtype_q != POD_DTYPE_BF16)
    return fail(POD_NOT_SUPPORTED, std::string("query dtype ") + dtype_key(pr->dtype_q) +
                                       ": FlashInfer's FA2 kernels take fp16/bf16 queries (SPEC 6.1)");
  if (pr->dtype_o != pr->dtype_q)
    return fail(POD_NOT_SUPPORTED, "output dtype must equal the query dtype (out = empty_like(q))");
  if (pr->dtype_kv != pr->dtype_q && pr->dtype_kv != POD_DTYPE_E4M3 && pr->dtype_kv != POD_DTYPE_E5M2)
    return fail(POD_NOT_SUPPORTED, "a 16-bit KV dtype must equal the query dtype (one DTypeQ/DTypeKV/DTypeO triple)");
  if (pr->kv_chunk_tokens != 0)
    return fail(POD_NOT_SUPPORTED, "forced KV chunk sizes: FlashInfer's POD wrappers have no such option");
  const bool has_p = pr->prefill.present && pr->only_side != 2, has_d = pr->decode.present && pr->only_side != 1;
  if (!has_p && !has_d) return fail(POD_INVALID, "no side to run");
  for (const pod_side* s : {&pr->prefill, &pr->decode}) {
    if (!s->present) continue;
    if (s->o_stride_row != std::int64_t(H) * D || s->o_stride_head != D || (s->lse && s->lse_stride_row != H))
      return fail(POD_NOT_SUPPORTED, "FlashInfer writes contiguous outputs [rows, H_qo, D] and LSE [rows, H_qo]");
    if (s->q_stride_row > INT32_MAX || s->kv.k_stride_page > UINT32_MAX || s->kv.v_stride_page > UINT32_MAX)
      return fail(POD_NOT_SUPPORTED, "strides beyond FlashInfer's 32-bit stride fields");
  }
  Job& job = c.job;
  job.num_qo_heads = H;
  job.num_kv_heads = Hkv;
  job.head_dim = D;
  job.enable_pdl = major >= 9;  // device_support_pdl: compute capability >= 9
  job.stats = pr->stats;
  const bool fp8 = pr->dtype_kv == POD_DTYPE_E4M3 || pr->dtype_kv == POD_DTYPE_E5M2;
  const std::string dtypes = std::string(dtype_key(pr->dtype_q)) + "/" + dtype_key(pr->dtype_kv) + ":d" + std::to_string(D);

  if (has_p && has_d) {
    const pod_side& P = pr->prefill;
    const pod_side& Dd = pr->decode;
    if (P.pos_encoding == POD_POS_ALIBI || Dd.pos_encoding == POD_POS_ALIBI)
      return fail(POD_NOT_SUPPORTED,
                  "ALiBi: FlashInfer's POD module does not build (the kernel template instantiates "
                  "DefaultAttention<..., use_alibi=true> while the binding calls <..., false>; SPEC 4.1)");
    if (!same_kv_strides(Dd)) return fail(POD_NOT_SUPPORTED, "decode K and V strides differ (csrc/pod.cu checks them equal)");
    copy_side(P, job.prefill);
    copy_side(Dd, job.decode);
    // Both wrappers: no pos encoding (kNone), no soft cap, decode NON_CAUSAL without a mask, no scales on
    // the prefill side, sm_scale_d *= q_scale * k_scale, out_d *= v_scale afterwards.
    for (SideJob* s : {&job.prefill, &job.decode}) s->logits_soft_cap = 0;
    job.decode.mask_mode = POD_MASK_NONE;
    job.decode.custom_mask = nullptr;
    job.decode.sm_scale = fold(Dd.sm_scale, Dd.q_scale, Dd.k_scale);
    job.decode.v_scale_after = Dd.v_scale;
    if (dense(P)) {
      job.family = Family::pod;
      if (P.mask_mode == POD_MASK_CAUSAL && job.prefill.kv_len_dense < job.prefill.rows)
        return fail(POD_NOT_SUPPORTED, "causal single prefill with kv_len < qo_len: FlashInfer raises (pod.cuh)");
      if (!one_row_per_request(Dd))
        return fail(POD_NOT_SUPPORTED, "PODWithPagedKVCacheWrapper decodes one query token per request");
      if (P.mask_mode == POD_MASK_CUSTOM && P.custom_mask_indptr == nullptr)
        return fail(POD_INVALID, "custom mask without indptr");
      c.key = "pod:" + dtypes + ":" + mask_key(P.mask_mode) + ":w" + (P.window_left >= 0 ? "1" : "0") +
              (Dd.window_left != -1 ? "1" : "0") + ":none:cap0";
    } else {
      job.family = Family::batch_pod;
      if (P.mask_mode == POD_MASK_CUSTOM)
        return fail(POD_NOT_SUPPORTED,
                    "BatchPOD prefill custom mask: broken upstream (whole-tensor packbits, null mask_indptr; SPEC 2.5)");
      if (P.window_left != Dd.window_left)
        return fail(POD_NOT_SUPPORTED, "BatchPOD plans one window_left for both sides (prefill " +
                                           std::to_string(P.window_left) + ", decode " + std::to_string(Dd.window_left) + ")");
      if (P.kv.page_size != Dd.kv.page_size)
        return fail(POD_NOT_SUPPORTED, "BatchPOD plans one page_size for both sides");
      if (!same_kv_strides(P)) return fail(POD_NOT_SUPPORTED, "prefill K and V strides differ (csrc/batch_pod.cu)");
      if (job.prefill.rows == 0 || job.decode.rows == 0)
        return fail(POD_NOT_SUPPORTED, "BatchPOD with an empty side divides by zero in its CTA scheduler (SPEC 11.8)");
      c.key = "bpod:" + dtypes + ":" + mask_key(P.mask_mode) + ":w" + (P.window_left >= 0 ? "1" : "0") + "0:none:cap0";
    }
    // the prefill side gets no scales: sm_scale as given (pod.py: sm_scale_p / plan sm_scale)
    if (job.prefill.mask_mode == POD_MASK_CUSTOM) job.prefill.mask_indptr = nullptr;  // single request: offset 0
    return POD_OK;
  }

  // One side alone: FlashInfer's standalone wrappers honour RoPE, ALiBi and the soft cap.
  const pod_side& S = has_p ? pr->prefill : pr->decode;
  copy_side(S, job.prefill);
  SideJob& s = job.prefill;
  s.logits_soft_cap = S.logits_soft_cap;
  if (S.pos_encoding == POD_POS_ROPE_LLAMA && fp8)
    return fail(POD_NOT_SUPPORTED, "RoPE with fp8 KV is an invalid FA2 configuration (prefill.cuh KernelTraits)");
  s.v_scale_after = S.v_scale;
  std::string mask = mask_key(S.mask_mode);
  if (has_p && dense(S)) {
    // single_prefill_with_kv_cache: sm_scale *= k_scale only (prefill.py), v_scale afterwards
    job.family = Family::single_prefill;
    s.sm_scale = fold(S.sm_scale, 1.0f, S.k_scale);
    if (S.mask_mode == POD_MASK_CAUSAL && s.kv_len_dense < s.rows)
      return fail(POD_NOT_SUPPORTED, "causal single prefill with kv_len < qo_len: FlashInfer raises (prefill.cuh)");
    c.key = "single_prefill:";
  } else {
    job.family = Family::batch_prefill;
    s.sm_scale = fold(S.sm_scale, S.q_scale, S.k_scale);
    if (!same_kv_strides(S)) return fail(POD_NOT_SUPPORTED, "K and V strides differ");
    if (!has_p) {
      // BatchDecodeWithPagedKVCacheWrapper(use_tensor_cores=True): no mask argument, one token per request
      job.one_sided_decode = true;
      if (S.mask_mode == POD_MASK_CUSTOM)
        return fail(POD_NOT_SUPPORTED, "decode custom mask: BatchDecodeWithPagedKVCacheWrapper takes no mask");
      if (!one_row_per_request(S))
        return fail(POD_NOT_SUPPORTED, "BatchDecodeWithPagedKVCacheWrapper decodes one query token per request");
      s.mask_mode = POD_MASK_NONE;
      mask = "none";
    } else if (S.mask_mode == POD_MASK_CUSTOM) {
      if (!S.custom_mask_indptr) return fail(POD_INVALID, "custom mask without indptr");
      c.custom_side = 0;
      c.mask_indptr64 = S.custom_mask_indptr;
    }
    c.key = "batch_prefill:";
  }
  c.key += dtypes + ":" + mask + ":w" + (S.window_left >= 0 ? "1" : "0") + "0:" + pos_key(S.pos_encoding) +
           ":cap" + (S.logits_soft_cap > 0 ? "1" : "0");
  if (S.pos_encoding != POD_POS_ALIBI) s.alibi_slopes = nullptr;
  return POD_OK;
}

pod_status find(const Classified& c, podcheck_fi::LaunchFn& fn) {
  fn = podcheck_fi::find_launcher(c.key);
  if (fn) return POD_OK;
  return fail(POD_NOT_SUPPORTED, "FlashInfer instantiation '" + c.key +
                                     "' is not compiled into this build (kernels/ports/flashinfer/instances.cmake)");
}

template <class T>
cudaError_t scale(void* out, std::int64_t n, float v, cudaStream_t st) {
  if (n == 0) return cudaSuccess;
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + 255) / 256, 4096));
  podcheck_fi::scale_output<T><<<blocks, 256, 0, st>>>(static_cast<T*>(out), n, v);
  return cudaGetLastError();
}

}  // namespace

#define PODCHECK_FI_EXPORT __attribute__((visibility("default")))

extern "C" {

PODCHECK_FI_EXPORT const pod_kernel_info* podcheck_kernel_info(void) {
  static const pod_kernel_info info = {POD_ABI_VERSION, "flashinfer-port", "fb28d7242b35",
                                       "FlashInfer's POD, BatchPOD, single-prefill and batch-prefill (FA2) kernels "
                                       "behind podcheck's ABI, set up as FlashInfer's Python wrappers set them up"};
  return &info;
}

PODCHECK_FI_EXPORT const char* podcheck_kernel_last_error(void) { return g_last_error.c_str(); }

PODCHECK_FI_EXPORT pod_status podcheck_kernel_supports(const pod_problem* problem) {
  g_last_error.clear();
  Classified c;
  if (const pod_status st = classify(problem, c); st != POD_OK) return st;
  podcheck_fi::LaunchFn fn;
  return find(c, fn);
}

PODCHECK_FI_EXPORT pod_status podcheck_kernel_run(const pod_problem* problem, void* stream) {
  g_last_error.clear();
  std::lock_guard<std::mutex> lock(g_mutex);
  Classified c;
  if (const pod_status st = classify(problem, c); st != POD_OK) return st;
  podcheck_fi::LaunchFn fn;
  if (const pod_status st = find(c, fn); st != POD_OK) return st;
  if (problem->stats) *problem->stats = pod_run_stats{};
  const auto st = static_cast<cudaStream_t>(stream);
  try {
    auto& w = podcheck_fi::ws();
    if (c.custom_side >= 0) {  // segment byte offsets, int64 in the ABI, int32 in FlashInfer's params
      const int n = c.job.prefill.num_requests + 1;
      if (w.mask_indptr_cap < std::size_t(n)) {
        cudaFree(w.mask_indptr);
        podcheck_fi::check(cudaMalloc(&w.mask_indptr, sizeof(std::int32_t) * n), "cudaMalloc mask indptr");
        w.mask_indptr_cap = n;
      }
      podcheck_fi::narrow_indptr<<<1, 256, 0, st>>>(c.mask_indptr64, w.mask_indptr, n);
      podcheck_fi::check(cudaGetLastError(), "mask indptr conversion");
      c.job.prefill.mask_indptr = w.mask_indptr;
    }
    const int e = fn(c.job, stream);
    if (e != cudaSuccess)
      return fail(POD_CUDA_ERROR, std::string("FlashInfer launch: ") + cudaGetErrorString(static_cast<cudaError_t>(e)));
    podcheck_fi::check(cudaGetLastError(), "FlashInfer launch");
    // the wrappers' `out *= v_scale` (decode side of POD; the output of a standalone call)
    const SideJob& vs = c.job.family == Family::pod || c.job.family == Family::batch_pod ? c.job.decode : c.job.prefill;
    if (vs.v_scale_after != 1.0f) {
      const std::int64_t n = vs.rows * problem->num_qo_heads * problem->head_dim;
      podcheck_fi::check(problem->dtype_q == POD_DTYPE_F16 ? scale<half>(vs.o, n, vs.v_scale_after, st)
                                                          : scale<__nv_bfloat16>(vs.o, n, vs.v_scale_after, st),
                         "out *= v_scale");
    }
  } catch (const std::exception& e) {
    return fail(POD_CUDA_ERROR, std::string("FlashInfer: ") + e.what());
  }
  return POD_OK;
}

}  // extern "C"
