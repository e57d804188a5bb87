# The FlashInfer instantiations compiled into libpodcheck_flashinfer.so: every combination the built-in
# tiers (quick, default, full) reach, plus the benchmark's standalone single prefill. A problem whose
# combination is not listed is reported not supported, naming the missing key (docs/PORTS.md).
# Key: family:dtype_q/dtype_kv:d<head_dim>:<mask>:w<prefill window on><decode window on>:<pos>:cap<0|1>
#   pod            PODWithKVCacheTensorDispatched (mask = prefill mask; decode mask NON_CAUSAL; pos/cap dropped)
#   bpod           BatchPODWithKVCacheTensorDispatched, CTA_TILE_Q 16/64/128 (one window for both sides)
#   batch_prefill  BatchPrefillWithPagedKVCacheDispatched, CTA_TILE_Q 16/64/128 (paged prefill batches, and
#                  decode batches as BatchDecodeWithPagedKVCacheWrapper(use_tensor_cores=True) runs them)
#   single_prefill SinglePrefillWithKVCacheDispatched (the benchmark's "prefill alone")
set(PODCHECK_FI_INSTANCES
  # pod: dtype_q/dtype_kv, head_dim, prefill mask, windows (prefill, decode); pos and cap dropped by POD
  pod:bf16/bf16:d64:causal:w00:none:cap0
  pod:bf16/bf16:d64:none:w00:none:cap0
  pod:bf16/bf16:d128:causal:w00:none:cap0
  pod:bf16/bf16:d128:causal:w10:none:cap0
  pod:bf16/bf16:d128:custom:w00:none:cap0
  pod:bf16/bf16:d128:custom:w10:none:cap0
  pod:bf16/bf16:d128:none:w00:none:cap0
  pod:bf16/bf16:d128:none:w10:none:cap0
  pod:bf16/bf16:d256:causal:w00:none:cap0
  pod:bf16/bf16:d256:none:w00:none:cap0
  pod:bf16/e4m3:d128:causal:w00:none:cap0
  pod:bf16/e4m3:d128:none:w00:none:cap0
  pod:bf16/e5m2:d128:causal:w00:none:cap0
  pod:bf16/e5m2:d128:none:w00:none:cap0
  pod:f16/e4m3:d64:causal:w00:none:cap0
  pod:f16/e4m3:d64:none:w00:none:cap0
  pod:f16/e4m3:d128:causal:w00:none:cap0
  pod:f16/e4m3:d128:none:w00:none:cap0
  pod:f16/e4m3:d256:causal:w00:none:cap0
  pod:f16/e4m3:d256:none:w00:none:cap0
  pod:f16/e5m2:d128:causal:w00:none:cap0
  pod:f16/e5m2:d128:none:w00:none:cap0
  pod:f16/f16:d64:causal:w00:none:cap0
  pod:f16/f16:d64:none:w00:none:cap0
  pod:f16/f16:d128:causal:w00:none:cap0
  pod:f16/f16:d128:causal:w10:none:cap0
  pod:f16/f16:d128:custom:w00:none:cap0
  pod:f16/f16:d128:custom:w10:none:cap0
  pod:f16/f16:d128:none:w00:none:cap0
  pod:f16/f16:d128:none:w10:none:cap0
  pod:f16/f16:d256:causal:w00:none:cap0
  pod:f16/f16:d256:none:w00:none:cap0
  # bpod: one window for both sides
  bpod:bf16/bf16:d128:causal:w00:none:cap0
  bpod:bf16/bf16:d128:none:w00:none:cap0
  bpod:bf16/e4m3:d128:causal:w00:none:cap0
  bpod:bf16/e4m3:d128:none:w00:none:cap0
  bpod:bf16/e5m2:d128:causal:w00:none:cap0
  bpod:bf16/e5m2:d128:none:w00:none:cap0
  bpod:f16/e4m3:d128:causal:w00:none:cap0
  bpod:f16/e4m3:d128:none:w00:none:cap0
  bpod:f16/e5m2:d128:causal:w00:none:cap0
  bpod:f16/e5m2:d128:none:w00:none:cap0
  bpod:f16/f16:d128:causal:w00:none:cap0
  bpod:f16/f16:d128:none:w00:none:cap0
  # batch_prefill
  batch_prefill:bf16/bf16:d128:causal:w00:alibi:cap0
  batch_prefill:bf16/bf16:d128:causal:w00:alibi:cap1
  batch_prefill:bf16/bf16:d128:causal:w00:none:cap0
  batch_prefill:bf16/bf16:d128:causal:w00:none:cap1
  batch_prefill:bf16/bf16:d128:causal:w00:rope:cap0
  batch_prefill:bf16/bf16:d128:causal:w00:rope:cap1
  batch_prefill:bf16/bf16:d128:causal:w10:alibi:cap0
  batch_prefill:bf16/bf16:d128:causal:w10:alibi:cap1
  batch_prefill:bf16/bf16:d128:causal:w10:none:cap0
  batch_prefill:bf16/bf16:d128:causal:w10:none:cap1
  batch_prefill:bf16/bf16:d128:causal:w10:rope:cap0
  batch_prefill:bf16/bf16:d128:causal:w10:rope:cap1
  batch_prefill:bf16/bf16:d128:custom:w00:alibi:cap0
  batch_prefill:bf16/bf16:d128:custom:w00:alibi:cap1
  batch_prefill:bf16/bf16:d128:custom:w00:none:cap0
  batch_prefill:bf16/bf16:d128:custom:w00:none:cap1
  batch_prefill:bf16/bf16:d128:custom:w00:rope:cap0
  batch_prefill:bf16/bf16:d128:custom:w00:rope:cap1
  batch_prefill:bf16/bf16:d128:custom:w10:alibi:cap0
  batch_prefill:bf16/bf16:d128:custom:w10:alibi:cap1
  batch_prefill:bf16/bf16:d128:custom:w10:none:cap0
  batch_prefill:bf16/bf16:d128:custom:w10:none:cap1
  batch_prefill:bf16/bf16:d128:custom:w10:rope:cap0
  batch_prefill:bf16/bf16:d128:custom:w10:rope:cap1
  batch_prefill:bf16/bf16:d128:none:w00:alibi:cap0
  batch_prefill:bf16/bf16:d128:none:w00:alibi:cap1
  batch_prefill:bf16/bf16:d128:none:w00:none:cap0
  batch_prefill:bf16/bf16:d128:none:w00:none:cap1
  batch_prefill:bf16/bf16:d128:none:w00:rope:cap0
  batch_prefill:bf16/bf16:d128:none:w00:rope:cap1
  batch_prefill:bf16/bf16:d128:none:w10:alibi:cap0
  batch_prefill:bf16/bf16:d128:none:w10:alibi:cap1
  batch_prefill:bf16/bf16:d128:none:w10:none:cap0
  batch_prefill:bf16/bf16:d128:none:w10:none:cap1
  batch_prefill:bf16/bf16:d128:none:w10:rope:cap0
  batch_prefill:bf16/bf16:d128:none:w10:rope:cap1
  batch_prefill:bf16/e4m3:d128:none:w00:none:cap0
  batch_prefill:bf16/e5m2:d128:none:w00:none:cap0
  batch_prefill:f16/e4m3:d128:none:w00:none:cap0
  batch_prefill:f16/e5m2:d128:none:w00:none:cap0
  batch_prefill:f16/f16:d128:causal:w00:alibi:cap0
  batch_prefill:f16/f16:d128:causal:w00:alibi:cap1
  batch_prefill:f16/f16:d128:causal:w00:none:cap0
  batch_prefill:f16/f16:d128:causal:w00:none:cap1
  batch_prefill:f16/f16:d128:causal:w00:rope:cap0
  batch_prefill:f16/f16:d128:causal:w00:rope:cap1
  batch_prefill:f16/f16:d128:causal:w10:alibi:cap0
  batch_prefill:f16/f16:d128:causal:w10:alibi:cap1
  batch_prefill:f16/f16:d128:causal:w10:none:cap0
  batch_prefill:f16/f16:d128:causal:w10:none:cap1
  batch_prefill:f16/f16:d128:causal:w10:rope:cap0
  batch_prefill:f16/f16:d128:causal:w10:rope:cap1
  batch_prefill:f16/f16:d128:custom:w00:alibi:cap0
  batch_prefill:f16/f16:d128:custom:w00:alibi:cap1
  batch_prefill:f16/f16:d128:custom:w00:none:cap0
  batch_prefill:f16/f16:d128:custom:w00:none:cap1
  batch_prefill:f16/f16:d128:custom:w00:rope:cap0
  batch_prefill:f16/f16:d128:custom:w00:rope:cap1
  batch_prefill:f16/f16:d128:custom:w10:alibi:cap0
  batch_prefill:f16/f16:d128:custom:w10:alibi:cap1
  batch_prefill:f16/f16:d128:custom:w10:none:cap0
  batch_prefill:f16/f16:d128:custom:w10:none:cap1
  batch_prefill:f16/f16:d128:custom:w10:rope:cap0
  batch_prefill:f16/f16:d128:custom:w10:rope:cap1
  batch_prefill:f16/f16:d128:none:w00:alibi:cap0
  batch_prefill:f16/f16:d128:none:w00:alibi:cap1
  batch_prefill:f16/f16:d128:none:w00:none:cap0
  batch_prefill:f16/f16:d128:none:w00:none:cap1
  batch_prefill:f16/f16:d128:none:w00:rope:cap0
  batch_prefill:f16/f16:d128:none:w00:rope:cap1
  batch_prefill:f16/f16:d128:none:w10:alibi:cap0
  batch_prefill:f16/f16:d128:none:w10:alibi:cap1
  batch_prefill:f16/f16:d128:none:w10:none:cap0
  batch_prefill:f16/f16:d128:none:w10:none:cap1
  batch_prefill:f16/f16:d128:none:w10:rope:cap0
  batch_prefill:f16/f16:d128:none:w10:rope:cap1
  # the benchmark's prefill alone (single_prefill_with_kv_cache; fp8 KV for A-e4m3, which prefill.py accepts with
  # k_scale / v_scale)
  single_prefill:bf16/bf16:d128:causal:w00:none:cap0
  single_prefill:bf16/e4m3:d128:causal:w00:none:cap0
)

# The subset `podcheck bench kernel --peer` needs (kernels/bench/bench_mixes.hpp: bf16, head_dim 128, causal
# prefill, no window; A-e4m3 with e4m3 KV): POD and BatchPOD fused, FlashInfer's prefill alone (single, batch)
# and its tensor-core decode alone, for 16-bit and fp8 e4m3 KV. (Until 2026-12-05 the single prefill with fp8 KV
# was missing, so the bench could not time the peer's prefill alone on A-e4m3.) -DPODCHECK_FLASHINFER_INSTANCES=bench
# builds only these.
set(PODCHECK_FI_BENCH_INSTANCES
  pod:bf16/bf16:d128:causal:w00:none:cap0
  pod:bf16/e4m3:d128:causal:w00:none:cap0
  batch_prefill:bf16/e4m3:d128:none:w00:none:cap0
  bpod:bf16/bf16:d128:causal:w00:none:cap0
  batch_prefill:bf16/bf16:d128:causal:w00:none:cap0
  batch_prefill:bf16/bf16:d128:none:w00:none:cap0
  single_prefill:bf16/bf16:d128:causal:w00:none:cap0
  single_prefill:bf16/e4m3:d128:causal:w00:none:cap0
)
