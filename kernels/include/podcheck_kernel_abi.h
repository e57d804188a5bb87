/* podcheck kernel ABI, version 2: how podcheck hands one POD problem to a kernel.
 *
 * Plain C so that any port (another library, another language) can implement it. A port is a shared
 * library exporting the four entry points below; `podcheck run --kernel-lib path.so` loads it with dlopen.
 * podcheck's own CUDA kernel ("podcheck-cuda") implements the same entry points and is linked in.
 *
 * One pod_problem = a prefill side and a decode side (either may be absent), each a batch of requests:
 * query rows ragged by qo_indptr attending to KV tokens reached through a CSR page table. A dense
 * single-request prefill is expressed as one page holding the whole sequence (page_size >= kv_len,
 * kv_indices = {0}, page stride 0). All tensor pointers are DEVICE pointers; strides are in ELEMENTS.
 * The *_host arrays are host copies of the index arrays, for planning (like FlashInfer's plan()).
 *
 * Semantics (SPEC.md §2-§4 of podcheck): logit s = (sm_scale*q_scale*k_scale) * <q, k>, plus
 * alibi_slopes[h] * (j - i) with ALiBi (i the query row within its request), then cap * tanh(s / cap) with a
 * soft cap; mask (causal bottom-right aligned: j <= i + L - Q; window: j >= i + L - Q - window_left; custom:
 * bit i*L+j of the request's packed segment, little bit order), softmax, O = v_scale * softmax . V; LSE of
 * the logits in base 2 (or e); a row with no visible key gives O = 0 and LSE = -inf. Query head h reads KV
 * head h / (H_qo / H_kv). RoPE-LLaMA rotates q at position i + L - Q and k at position j before the product:
 * dims t and t + D/2 by the angle pos * rope_theta^(-2t/D) / rope_scale.
 *
 * Version 2 added rope_scale, rope_theta and alibi_slopes to pod_side (version 1 had no way to pass them).
 */
#ifndef PODCHECK_KERNEL_ABI_H
#define PODCHECK_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POD_ABI_VERSION 2u

typedef enum pod_dtype {
  POD_DTYPE_F16 = 0,
  POD_DTYPE_BF16 = 1,
  POD_DTYPE_E4M3 = 2, /* float8_e4m3fn */
  POD_DTYPE_E5M2 = 3, /* float8_e5m2 */
  POD_DTYPE_F32 = 4
} pod_dtype;

typedef enum pod_mask_mode { POD_MASK_NONE = 0, POD_MASK_CAUSAL = 1, POD_MASK_CUSTOM = 2 } pod_mask_mode;
typedef enum pod_pos_encoding { POD_POS_NONE = 0, POD_POS_ROPE_LLAMA = 1, POD_POS_ALIBI = 2 } pod_pos_encoding;

typedef enum pod_status {
  POD_OK = 0,
  POD_NOT_SUPPORTED = 1, /* a valid problem this kernel does not compute; nothing was launched */
  POD_INVALID = 2,       /* the problem description is inconsistent */
  POD_CUDA_ERROR = 3     /* a CUDA call failed; podcheck_kernel_last_error() says which */
} pod_status;

/* KV storage of one side: element (page, slot, kv_head, d) of K is at
 * k[page*k_stride_page + slot*k_stride_slot + kv_head*k_stride_head + d] (d contiguous); V likewise. */
typedef struct pod_kv {
  const void* k;
  const void* v;
  int64_t k_stride_page, k_stride_slot, k_stride_head;
  int64_t v_stride_page, v_stride_slot, v_stride_head;
  int32_t page_size;                /* >= 1 */
  const int32_t* indptr;            /* device, num_requests + 1 */
  const int32_t* indices;           /* device, indptr[num_requests] */
  const int32_t* last_page_len;     /* device, num_requests, each in [1, page_size] */
  const int32_t* indptr_host;       /* host copies of indptr and last_page_len (planning) */
  const int32_t* last_page_len_host;
} pod_kv;

typedef struct pod_side {
  int32_t present; /* 0: this side is absent */
  int32_t num_requests;
  const int32_t* qo_indptr;      /* device, num_requests + 1 */
  const int32_t* qo_indptr_host; /* host copy */
  const void* q;                 /* [rows, H_qo, D] */
  int64_t q_stride_row, q_stride_head;
  pod_kv kv;
  /* parameters */
  int32_t mask_mode;                      /* pod_mask_mode */
  const uint8_t* custom_mask;             /* device, packed bits (CUSTOM only) */
  const int64_t* custom_mask_indptr;      /* device, byte offset of request r's segment, num_requests + 1 */
  int32_t window_left;                    /* -1: off */
  float sm_scale;                         /* already resolved (default 1/sqrt(D) filled by the caller) */
  float q_scale, k_scale, v_scale;
  float logits_soft_cap;                  /* 0: off */
  int32_t pos_encoding;                   /* pod_pos_encoding */
  double rope_scale, rope_theta;          /* ROPE_LLAMA: both > 0 */
  const float* alibi_slopes;              /* ALIBI: device, [H_qo], slope per query head (the caller resolves
                                             defaults such as FlashInfer's); NULL otherwise */
  /* outputs */
  void* o; /* [rows, H_qo, D], dtype_o */
  int64_t o_stride_row, o_stride_head;
  float* lse; /* [rows, H_qo] or NULL */
  int64_t lse_stride_row;
} pod_side;

/* Facts a kernel may report about how it ran (filled by podcheck_kernel_run when non-NULL). */
typedef struct pod_run_stats {
  int32_t grid_ctas, threads_per_cta, smem_bytes;
  int32_t tile_q_prefill, tile_q_decode, tile_kv;
  int32_t items_prefill, items_decode;     /* work items (query tile x kv head x kv chunk) */
  int32_t max_splits_prefill, max_splits_decode; /* largest number of KV chunks of one request */
  int32_t kv_chunk_prefill, kv_chunk_decode;     /* tokens per KV chunk */
  int32_t merge_launched;                  /* 1 when the LSE merge kernel ran */
} pod_run_stats;

typedef struct pod_problem {
  uint32_t abi_version; /* POD_ABI_VERSION */
  int32_t num_qo_heads, num_kv_heads, head_dim;
  int32_t dtype_q, dtype_kv, dtype_o; /* pod_dtype */
  int32_t lse_base_e;                 /* 0: LSE in base 2 (FlashInfer), 1: natural log */
  pod_side prefill, decode;
  /* Options for tests and benchmarks (0 = kernel's choice). */
  int32_t kv_chunk_tokens;            /* force this split-KV chunk size (multiple of the KV tile) */
  int32_t only_side;                  /* 0 both, 1 prefill only, 2 decode only (for "alone" timings) */
  pod_run_stats* stats;               /* host pointer or NULL */
} pod_problem;

typedef struct pod_kernel_info {
  uint32_t abi_version;
  const char* name;    /* e.g. "podcheck-cuda" */
  const char* version; /* e.g. "v1" */
  const char* description;
} pod_kernel_info;

/* Entry points (exported with these names by a port's shared library). */
const pod_kernel_info* podcheck_kernel_info(void);
pod_status podcheck_kernel_supports(const pod_problem* problem);
/* Launches on `stream` (a cudaStream_t; void* keeps this header free of CUDA). Asynchronous. */
pod_status podcheck_kernel_run(const pod_problem* problem, void* stream);
/* Why the last supports/run call on this thread did not return POD_OK ("" otherwise). */
const char* podcheck_kernel_last_error(void);

typedef const pod_kernel_info* (*pod_kernel_info_fn)(void);
typedef pod_status (*pod_kernel_supports_fn)(const pod_problem*);
typedef pod_status (*pod_kernel_run_fn)(const pod_problem*, void*);
typedef const char* (*pod_kernel_last_error_fn)(void);

/* The function table a runner builds (from dlsym, or from the linked-in kernel). */
typedef struct pod_kernel_vtable {
  pod_kernel_info_fn info;
  pod_kernel_supports_fn supports;
  pod_kernel_run_fn run;
  pod_kernel_last_error_fn last_error;
} pod_kernel_vtable;

#ifdef __cplusplus
}
#endif

#endif /* PODCHECK_KERNEL_ABI_H */
