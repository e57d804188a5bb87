#!/usr/bin/env python3
"""Real FlashInfer API-logging dumps, made on a GPU machine that has torch but no FlashInfer package.

FlashInfer's own flashinfer/api_logging.py (fb28d7242b35; copied into a git-ignored folder, never committed)
is imported unchanged and its real @flashinfer_api decorator is applied to wrapper classes that carry
FlashInfer's exact class names and method signatures (PODWithPagedKVCacheWrapper, BatchPODWithPagedKVCacheWrapper,
BatchPrefillWithPagedKVCacheWrapper, BatchDecodeWithPagedKVCacheWrapper, single_prefill_with_kv_cache). Their
bodies resolve options the way FlashInfer's wrappers do (plan-time vs run-time, defaults, sm_scale folding,
v_scale after the kernel) and compute with PyTorch's scaled_dot_product_attention on the GPU (bottom-right
aligned causal and window masks built by hand; float32 matmuls for soft cap and LSE), so every folder, record
and tensor file is written by FlashInfer's code with FLASHINFER_LOGLEVEL=10, FLASHINFER_DUMP_DIR and
FLASHINFER_DUMP_SAFETENSORS=1, and the outputs come from a kernel nobody in this project wrote.

Scenarios (each in its own process, since api_logging reads its environment at import):
  pod_layers   POD: __init__, one plan, four runs (layers) on one stacked KV pool; layer options vary
  batch_pod    BatchPOD: HND tuple caches, return_lse (nested), k_scale / v_scale on a layer
  serving      BatchPrefill + BatchDecode as a serving stack calls them, two steps of three layers,
               FLASHINFER_DUMP_EXCLUDE="*.__init__" (the layout must come from the shapes), soft cap, window
  prefill      single_prefill_with_kv_cache: custom mask with LSE, causal window with soft cap, HND
  graph        BatchDecode with use_cuda_graph: a run captured in a CUDA graph, replayed twice (re-planned
               between the replays): graph_flushes/flush_0001, flush_0002
  pt           a small POD capture without FLASHINFER_DUMP_SAFETENSORS (torch.save), then converted with
               traces/tools/pt_to_safetensors.py (when the safetensors package is there)

usage (GPU machine):
  python3 traces/tools/capture_flashinfer_dumps.py --api-logging traces/captures/.flashinfer/api_logging.py --out $OUT
writes $OUT/fi_dumps.tar (one folder per scenario) and $OUT/capture_log.txt.
"""
import argparse
import math
import os
import subprocess
import sys
import tarfile
import traceback

SCENARIOS = ["pod_layers", "batch_pod", "serving", "prefill", "graph", "pt"]


# ---------------------------------------------------------------------------------------------------------------
# the child: one scenario with FlashInfer's api_logging loaded
# ---------------------------------------------------------------------------------------------------------------

def child(args):
    import importlib.util
    import warnings

    warnings.simplefilter("ignore")  # api_logging warns that fi_trace templates are unavailable without flashinfer
    spec = importlib.util.spec_from_file_location("flashinfer_api_logging", args.api_logging)
    api = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = api
    spec.loader.exec_module(api)
    import torch
    import torch.nn.functional as F

    flashinfer_api = api.flashinfer_api
    dev = "cuda"
    torch.manual_seed(1234 + SCENARIOS.index(args.scenario))

    def attend(q, k, v, sm_scale, causal=False, window_left=-1, soft_cap=0.0, mask=None):
        """q [Q,H,D], k/v [L,Hkv,D] -> out [Q,H,D] (q.dtype), lse [Q,H] float32 base 2."""
        nq, heads, dim = q.shape
        nk, kvh = k.shape[0], k.shape[1]
        g = heads // kvh
        kk, vv = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        pos = i + (nk - nq)
        if mask is not None:
            vis = mask.to(torch.bool).reshape(nq, nk)
        elif causal:
            vis = j <= pos
        else:
            vis = torch.ones(nq, nk, dtype=torch.bool, device=q.device)
        if window_left >= 0:
            vis = vis & (j >= pos - window_left)
        qh, kh, vh = q.transpose(0, 1), kk.transpose(0, 1), vv.transpose(0, 1)  # [H, Q, D], [H, L, D]
        logits = torch.matmul(qh.float(), kh.float().transpose(1, 2)) * sm_scale
        if soft_cap > 0:
            logits = soft_cap * torch.tanh(logits / soft_cap)
            logits = logits.masked_fill(~vis, float("-inf"))
            out = torch.matmul(torch.softmax(logits, dim=-1), vh.float()).transpose(0, 1).to(q.dtype)
        else:
            out = F.scaled_dot_product_attention(qh.unsqueeze(0), kh.unsqueeze(0), vh.unsqueeze(0), attn_mask=vis,
                                                 scale=sm_scale)[0].transpose(0, 1)
            logits = logits.masked_fill(~vis, float("-inf"))
        lse = (torch.logsumexp(logits, dim=-1) / math.log(2.0)).transpose(0, 1)
        return out.contiguous(), lse.contiguous()

    def unpack(cache, layout):
        """(k, v) as NHD [P, ps, H, D] views of a tuple or a stacked 5-D cache."""
        k, v = cache if isinstance(cache, tuple) else cache.unbind(dim=1)
        if layout == "HND":
            k, v = k.transpose(1, 2), v.transpose(1, 2)
        return k, v

    def tokens(k, v, indptr, indices, last, ps, r):
        pages = indices[indptr[r]:indptr[r + 1]]
        n = len(pages)
        nk = 0 if n == 0 else (n - 1) * ps + last[r]
        idx = torch.tensor(pages, dtype=torch.long, device=k.device)
        return (k[idx].reshape(-1, k.shape[2], k.shape[3])[:nk], v[idx].reshape(-1, v.shape[2], v.shape[3])[:nk])

    def paged(q, qo, k, v, indptr, indices, last, ps, sm, causal=False, window=-1, cap=0.0):
        out = torch.empty_like(q)
        lse = torch.empty(q.shape[:2], dtype=torch.float32, device=q.device)
        for r in range(len(last)):
            kt, vt = tokens(k, v, indptr, indices, last, ps, r)
            o, l = attend(q[qo[r]:qo[r + 1]], kt, vt, sm, causal, window, cap)
            out[qo[r]:qo[r + 1]], lse[qo[r]:qo[r + 1]] = o, l
        return out, lse

    def host(t):
        return [int(x) for x in t.tolist()]

    # ----- wrappers with FlashInfer's names and signatures (fb28d7242b35) ------------------------------------

    class PODWithPagedKVCacheWrapper:
        @flashinfer_api
        def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False, paged_kv_indptr_buffer=None,
                     paged_kv_indices_buffer=None, paged_kv_last_page_len_buffer=None, jit_args=None):
            self._kv_layout = kv_layout

        @flashinfer_api
        def plan(self, indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim, page_size,
                 pos_encoding_mode="NONE", window_left=-1, q_data_type="float16", kv_data_type=None, data_type=None,
                 sm_scale=None, rope_scale=None, rope_theta=None, non_blocking=True):
            self._pt = (host(indptr), host(indices), host(last_page_len), page_size)
            self._window_left, self._sm_scale = window_left, sm_scale

        @flashinfer_api
        def run(self, q_p, k_p, v_p, q_d, paged_kv_cache_d, custom_mask_p=None, packed_custom_mask_p=None, causal_p=False,
                kv_layout_p="NHD", pos_encoding_mode_p="NONE", sm_scale_p=None, window_left_p=-1, rope_scale_p=None,
                rope_theta_p=None, return_lse_p=False, custom_mask_d=None, packed_custom_mask_d=None, causal_d=False,
                kv_layout_d="NHD", pos_encoding_mode_d="NONE", sm_scale_d=None, window_left_d=-1, rope_scale_d=None,
                rope_theta_d=None, q_scale=None, k_scale=None, v_scale=None, return_lse_d=False,
                use_fp16_qk_reduction=False, enable_pdl=None, *args):
            if sm_scale_p is None:
                sm_scale_p = 1.0 / math.sqrt(q_p.size(-1))
            kp, vp = (k_p, v_p) if kv_layout_p == "NHD" else (k_p.transpose(0, 1), v_p.transpose(0, 1))
            out_p, _ = attend(q_p, kp, vp, float(torch.tensor(sm_scale_p, dtype=torch.float32)), causal_p, window_left_p)
            sm_d = self._sm_scale  # decode options from plan; the run's *_d options are ignored, as in FlashInfer
            if sm_d is None:
                sm_d = 1.0 / math.sqrt(q_d.shape[-1])
            if q_scale is not None:
                sm_d *= q_scale
            if k_scale is not None:
                sm_d *= k_scale
            indptr, indices, last, ps = self._pt
            k, v = unpack(paged_kv_cache_d, self._kv_layout)
            out_d, _ = paged(q_d, list(range(q_d.shape[0] + 1)), k, v, indptr, indices, last, ps,
                             float(torch.tensor(sm_d, dtype=torch.float32)), window=self._window_left)
            if v_scale is not None:
                out_d *= v_scale
            return (out_p, out_d)

    class BatchPODWithPagedKVCacheWrapper:
        @flashinfer_api
        def __init__(self, float_workspace_buffer, kv_layout="NHD"):
            self._kv_layout = kv_layout

        @flashinfer_api
        def plan(self, qo_indptr_p, kv_indptr_p, kv_indices_p, last_page_len_p, qo_indptr_d, kv_indptr_d, kv_indices_d,
                 last_page_len_d, num_qo_heads, num_kv_heads, head_dim, page_size, pos_encoding_mode="NONE", window_left=-1,
                 q_data_type="float16", kv_data_type=None, data_type=None, sm_scale=None, rope_scale=None, rope_theta=None,
                 non_blocking=True):
            self._p = (host(qo_indptr_p), host(kv_indptr_p), host(kv_indices_p), host(last_page_len_p))
            self._d = (host(qo_indptr_d), host(kv_indptr_d), host(kv_indices_d), host(last_page_len_d))
            self._ps, self._window_left, self._sm_scale = page_size, window_left, sm_scale

        @flashinfer_api
        def run(self, q_p, paged_kv_cache_p, q_d, paged_kv_cache_d, custom_mask_p=None, packed_custom_mask_p=None,
                causal_p=False, q_scale=None, k_scale=None, v_scale=None, return_lse=False, use_fp16_qk_reduction=False,
                enable_pdl=None):
            sm_p = self._sm_scale if self._sm_scale is not None else 1.0 / math.sqrt(q_p.shape[-1])
            sm_d = self._sm_scale if self._sm_scale is not None else 1.0 / math.sqrt(q_d.shape[-1])
            if q_scale is not None:
                sm_d *= q_scale
            if k_scale is not None:
                sm_d *= k_scale
            f32 = lambda x: float(torch.tensor(x, dtype=torch.float32))  # noqa: E731
            kp, vp = unpack(paged_kv_cache_p, self._kv_layout)
            kd, vd = unpack(paged_kv_cache_d, self._kv_layout)
            qo, ip, ix, ln = self._p
            out_p, lse_p = paged(q_p, qo, kp, vp, ip, ix, ln, self._ps, f32(sm_p), causal_p, self._window_left)
            qo, ip, ix, ln = self._d
            out_d, lse_d = paged(q_d, qo, kd, vd, ip, ix, ln, self._ps, f32(sm_d), False, self._window_left)
            if v_scale is not None:
                out_d *= v_scale
            return ((out_p, out_d), (lse_p, lse_d)) if return_lse else (out_p, out_d)

    @flashinfer_api
    def single_prefill_with_kv_cache(q, k, v, scale_q=None, scale_k=None, scale_v=None, o_dtype=None, custom_mask=None,
                                     packed_custom_mask=None, causal=False, kv_layout="NHD", pos_encoding_mode="NONE",
                                     use_fp16_qk_reduction=False, sm_scale=None, window_left=-1, logits_soft_cap=None,
                                     rope_scale=None, rope_theta=None, backend="auto", return_lse=False, kv_cache_sf=None,
                                     k_scale=None, v_scale=None):
        if sm_scale is None:
            sm_scale = 1.0 / math.sqrt(q.size(-1))
        if k_scale is not None:
            sm_scale *= k_scale
        kk, vv = (k, v) if kv_layout == "NHD" else (k.transpose(0, 1), v.transpose(0, 1))
        out, lse = attend(q, kk, vv, float(torch.tensor(sm_scale, dtype=torch.float32)), causal, window_left,
                          float(torch.tensor(logits_soft_cap or 0.0, dtype=torch.float32)), custom_mask)
        if v_scale is not None and not (isinstance(v_scale, float) and v_scale == 1.0):
            out *= v_scale
        return (out, lse) if return_lse else out

    class BatchPrefillWithPagedKVCacheWrapper:
        @flashinfer_api
        def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False, qo_indptr_buf=None,
                     paged_kv_indptr_buf=None, paged_kv_indices_buf=None, paged_kv_last_page_len_buf=None,
                     custom_mask_buf=None, mask_indptr_buf=None, backend="auto", jit_args=None, jit_kwargs=None):
            self._kv_layout = kv_layout

        @flashinfer_api
        def plan(self, qo_indptr, paged_kv_indptr, paged_kv_indices, paged_kv_last_page_len, num_qo_heads, num_kv_heads,
                 head_dim_qk, page_size, head_dim_vo=None, custom_mask=None, packed_custom_mask=None, causal=False,
                 pos_encoding_mode="NONE", use_fp16_qk_reduction=False, sm_scale=None, window_left=-1,
                 logits_soft_cap=None, rope_scale=None, rope_theta=None, q_data_type="float16", kv_data_type=None,
                 o_data_type=None, non_blocking=True, prefix_len_ptr=None, token_pos_in_items_ptr=None,
                 token_pos_in_items_len=0, max_item_len_ptr=None, seq_lens=None, seq_lens_q=None, block_tables=None,
                 max_token_per_sequence=None, max_sequence_kv=None, fixed_split_size=None, disable_split_kv=False):
            self._pt = (host(qo_indptr), host(paged_kv_indptr), host(paged_kv_indices), host(paged_kv_last_page_len), page_size)
            self._causal, self._window_left = causal, window_left
            self._sm_scale, self._cap = sm_scale, logits_soft_cap or 0.0

        @flashinfer_api
        def run(self, q, paged_kv_cache, *args, q_scale=None, k_scale=None, v_scale=None, out=None, lse=None,
                return_lse=False, enable_pdl=None, window_left=None, sinks=None, kv_cache_sf=None,
                skip_softmax_threshold_scale_factor=None, use_fp16_softmax=None, uses_spcompress=None):
            sm = self._sm_scale if self._sm_scale is not None else 1.0 / math.sqrt(q.size(-1))
            if q_scale is not None:
                sm *= q_scale
            if k_scale is not None:
                sm *= k_scale
            k, v = unpack(paged_kv_cache, self._kv_layout)
            qo, ip, ix, ln, ps = self._pt
            o, l = paged(q, qo, k, v, ip, ix, ln, ps, float(torch.tensor(sm, dtype=torch.float32)), self._causal,
                         self._window_left, float(torch.tensor(self._cap, dtype=torch.float32)))
            if v_scale is not None and not (isinstance(v_scale, float) and v_scale == 1.0):
                o *= v_scale
            return (o, l) if return_lse else o

    legacy = ("pos_encoding_mode", "window_left", "logits_soft_cap", "q_data_type", "kv_data_type", "o_data_type",
              "data_type", "sm_scale", "rope_scale", "rope_theta", "non_blocking", "block_tables", "seq_lens",
              "fixed_split_size", "disable_split_kv", "q_len_per_req")

    class BatchDecodeWithPagedKVCacheWrapper:
        @flashinfer_api
        def __init__(self, float_workspace_buffer, kv_layout="NHD", use_cuda_graph=False, use_tensor_cores=False,
                     paged_kv_indptr_buffer=None, paged_kv_indices_buffer=None, paged_kv_last_page_len_buffer=None,
                     backend="auto", jit_args=None):
            self._kv_layout, self._graph = kv_layout, use_cuda_graph
            self._gidx = self._gmask = None

        @flashinfer_api
        def plan(self, indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim, page_size,
                 *deprecated_positional_args, **kwargs):
            kwargs = dict(kwargs)
            kwargs.update(zip(legacy, deprecated_positional_args))
            self._plan_impl(indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim, page_size, **kwargs)

        def _plan_impl(self, indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim, page_size, *,
                       pos_encoding_mode="NONE", window_left=-1, window_right=0, logits_soft_cap=None,
                       q_data_type="float16", kv_data_type=None, o_data_type=None, data_type=None, sm_scale=None,
                       rope_scale=None, rope_theta=None, non_blocking=True, block_tables=None, seq_lens=None,
                       fixed_split_size=None, disable_split_kv=False, q_len_per_req=1):
            ip, ix, ln = host(indptr), host(indices), host(last_page_len)
            self._pt = (ip, ix, ln, page_size)
            self._window_left, self._sm_scale, self._cap = window_left, sm_scale, logits_soft_cap or 0.0
            if self._graph:  # static buffers the captured run reads; a later plan rewrites them in place
                batch, width = len(ln), 64
                idx = torch.zeros(batch, width, dtype=torch.long)
                valid = torch.zeros(batch, width, dtype=torch.bool)
                for r in range(batch):
                    pages = ix[ip[r]:ip[r + 1]]
                    n = 0 if not pages else (len(pages) - 1) * page_size + ln[r]
                    for t in range(n):
                        idx[r, t] = pages[t // page_size] * page_size + t % page_size
                        valid[r, t] = True
                if self._gidx is None:
                    self._gidx, self._gmask = idx.to(dev), valid.to(dev)
                else:
                    self._gidx.copy_(idx)
                    self._gmask.copy_(valid)

        @flashinfer_api
        def run(self, q, paged_kv_cache, *args, q_scale=None, k_scale=None, v_scale=None, out=None, lse=None,
                return_lse=False, enable_pdl=None, window_left=None, sinks=None, q_len_per_req=None,
                skip_softmax_threshold_scale_factor=None, kv_cache_sf=None):
            sm = self._sm_scale if self._sm_scale is not None else 1.0 / math.sqrt(q.shape[-1])
            if q_scale is not None:
                sm *= q_scale
            if k_scale is not None:
                sm *= k_scale
            sm = float(torch.tensor(sm, dtype=torch.float32))
            k, v = unpack(paged_kv_cache, self._kv_layout)
            if self._graph:  # capturable: static gather indices and key mask, float32 math
                heads, kvh, dim = q.shape[1], k.shape[2], k.shape[3]
                g = heads // kvh
                b, t = self._gidx.shape

                def spread(x):  # [P, ps, Hkv, D] -> [B, T, H, D] by the static index, each kv head g times
                    x = x.reshape(-1, kvh, dim)[self._gidx]
                    return x[:, :, :, None, :].expand(b, t, kvh, g, dim).reshape(b, t, heads, dim).float()

                kt, vt = spread(k), spread(v)
                s = torch.einsum("bhd,bthd->bht", q.float(), kt) * sm
                s = s.masked_fill(~self._gmask[:, None, :], float("-inf"))
                o = torch.einsum("bht,bthd->bhd", torch.softmax(s, dim=-1), vt).to(q.dtype)
                l = torch.logsumexp(s, dim=-1) / math.log(2.0)
            else:
                ip, ix, ln, ps = self._pt
                o, l = paged(q, list(range(q.shape[0] + 1)), k, v, ip, ix, ln, ps, sm, False, self._window_left,
                             float(torch.tensor(self._cap, dtype=torch.float32)))
            if v_scale is not None and not (isinstance(v_scale, float) and v_scale == 1.0):
                o *= v_scale
            return (o, l) if return_lse else o

    # ----- scenarios -------------------------------------------------------------------------------------------
    H, HKV, D = 8, 2, 64
    ws = torch.zeros(1 << 16, dtype=torch.uint8, device=dev)
    i32 = lambda x: torch.tensor(x, dtype=torch.int32, device=dev)  # noqa: E731
    rnd = lambda *s, dt=torch.float16: torch.randn(*s, device=dev).to(dt)  # noqa: E731

    def pod_layers(batch_layers=4):
        ps = 16
        w = PODWithPagedKVCacheWrapper(ws, "NHD")
        indptr, indices, last = [0, 3, 4, 7, 9], [17, 2, 9, 30, 5, 11, 0, 24, 13], [5, 16, 1, 9]
        w.plan(i32(indptr), i32(indices), i32(last), H, HKV, D, ps, window_left=40)
        pool = rnd(32, 2, ps, HKV, D)  # one KV pool for every layer, most pages unused by this step
        for layer in range(batch_layers):
            kw = {"causal_p": True}
            if layer == 1:
                kw.update(sm_scale_d=0.5, q_scale=0.5, k_scale=3.0, v_scale=0.75)  # sm_scale_d is ignored
            if layer == 2:
                kw.update(kv_layout_p="HND", sm_scale_p=0.11, window_left_p=33)
            if layer == 3:
                kw.update(return_lse_p=True)  # allocated, never returned
            hnd = layer == 2
            k_p = rnd(HKV, 120, D) if hnd else rnd(120, HKV, D)
            v_p = rnd(HKV, 120, D) if hnd else rnd(120, HKV, D)
            w.run(rnd(77, H, D), k_p, v_p, rnd(4, H, D), pool, **kw)
        torch.cuda.synchronize()

    def batch_pod():
        ps = 8
        w = BatchPODWithPagedKVCacheWrapper(ws, kv_layout="HND")
        w.plan(i32([0, 30, 41]), i32([0, 5, 9]), i32([3, 7, 1, 12, 4, 8, 2, 10, 6]), i32([6, 8]),
               i32([0, 1, 2, 3]), i32([0, 2, 3, 6]), i32([11, 0, 5, 9, 13, 1]), i32([8, 3, 5]), H, HKV, D, ps,
               window_left=27, sm_scale=0.1)
        kp, vp = rnd(16, HKV, ps, D), rnd(16, HKV, ps, D)
        kd, vd = rnd(16, HKV, ps, D), rnd(16, HKV, ps, D)
        w.run(rnd(41, H, D), (kp, vp), rnd(3, H, D), (kd, vd), causal_p=True, return_lse=True)
        w.run(rnd(41, H, D), (kp, vp), rnd(3, H, D), (kd, vd), causal_p=True, k_scale=2.0, v_scale=0.5)
        torch.cuda.synchronize()

    def serving():
        ps = 16
        pre = BatchPrefillWithPagedKVCacheWrapper(ws, "NHD")  # __init__ excluded from the dump by the environment
        dec = BatchDecodeWithPagedKVCacheWrapper(ws, "NHD")
        kc, vc = rnd(48, ps, HKV, D, dt=torch.bfloat16), rnd(48, ps, HKV, D, dt=torch.bfloat16)
        pre.plan(torch.tensor([0, 37, 38, 101], dtype=torch.int64), torch.tensor([0, 3, 4, 9], dtype=torch.int64),
                 torch.tensor([4, 40, 1, 7, 22, 30, 5, 11, 18], dtype=torch.int64), torch.tensor([16, 2, 9], dtype=torch.int64),
                 H, HKV, D, ps, causal=True, logits_soft_cap=30.0, q_data_type=torch.bfloat16)
        for layer in range(3):
            pre.run(rnd(101, H, D, dt=torch.bfloat16), (kc, vc), return_lse=True, v_scale=0.5 if layer == 2 else None)
        for step, last in enumerate(([3, 16, 9, 1, 12], [4, 1, 10, 2, 13])):
            dec.plan(i32([0, 2, 5, 6, 7, 9]), i32([33, 8, 40, 2, 19, 27, 44, 0, 15]), i32(last), H, HKV, D, ps,
                     "NONE", 31, q_data_type=torch.bfloat16)  # pos_encoding_mode, window_left given by position
            for layer in range(3):
                dec.run(rnd(5, H, D, dt=torch.bfloat16), (kc, vc), return_lse=layer != 1)
        torch.cuda.synchronize()

    def prefill():
        q, k, v = rnd(50, H, D), rnd(HKV, 90, D), rnd(HKV, 90, D)
        mask = torch.rand(50, 90, device=dev) < 0.7
        mask[:, 0] = True
        single_prefill_with_kv_cache(q, k, v, custom_mask=mask, kv_layout="HND", return_lse=True)
        q, k, v = rnd(64, H, D), rnd(200, HKV, D), rnd(200, HKV, D)
        single_prefill_with_kv_cache(q, k, v, causal=True, window_left=48, logits_soft_cap=25.0)
        single_prefill_with_kv_cache(rnd(33, H, D), rnd(33, HKV, D), rnd(33, HKV, D), None, None, None, None, None,
                                     None, True, sm_scale=0.2, return_lse=True)
        torch.cuda.synchronize()

    def graph():
        ps = 16
        w = BatchDecodeWithPagedKVCacheWrapper(ws, "NHD", True, False, i32([0] * 4), i32([0] * 16), i32([0] * 3))
        kc, vc = rnd(16, ps, HKV, D), rnd(16, ps, HKV, D)
        indptr, indices = [0, 2, 3, 4], [5, 9, 1, 12]
        w.plan(i32(indptr), i32(indices), i32([7, 16, 3]), H, HKV, D, ps)
        q = rnd(3, H, D)
        w.run(q, (kc, vc), return_lse=True)  # eager warm-up, dumped as an ordinary call
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            w.run(q, (kc, vc), return_lse=True)
        q.copy_(rnd(3, H, D))
        g.replay()  # FlashInfer's replay hook writes graph_flushes/flush_0001
        w.plan(i32(indptr), i32(indices), i32([16, 4, 11]), H, HKV, D, ps)  # the next step: longer sequences
        q.copy_(rnd(3, H, D))
        g.replay()  # flush_0002
        torch.cuda.synchronize()
        api.clear_graph_dumps()

    def pt():
        pod_layers(batch_layers=1)

    {"pod_layers": pod_layers, "batch_pod": batch_pod, "serving": serving, "prefill": prefill, "graph": graph,
     "pt": pt}[args.scenario]()


# ---------------------------------------------------------------------------------------------------------------
# the parent: one child per scenario, then one tar file
# ---------------------------------------------------------------------------------------------------------------

def parent(args):
    out = os.path.abspath(args.out)
    work = os.path.join(out, "_work") if not args.work else os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    log = open(os.path.join(out, "capture_log.txt"), "w")
    def note(s):
        print(s)
        log.write(s + "\n")
        log.flush()
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        smi = "nvidia-smi not found"
    import torch
    note(f"torch {torch.__version__}, cuda {torch.version.cuda}, gpu: {smi}")
    note(f"api_logging: {args.api_logging}")
    done = []
    for sc in args.scenarios or SCENARIOS:
        d = os.path.join(work, "pt_raw" if sc == "pt" else sc)
        env = dict(os.environ, FLASHINFER_LOGLEVEL="10", FLASHINFER_DUMP_DIR=d, FLASHINFER_LOGDEST=os.path.join(work, sc + ".log"))
        env["FLASHINFER_DUMP_SAFETENSORS"] = "0" if sc == "pt" else "1"
        if sc == "serving":
            env["FLASHINFER_DUMP_EXCLUDE"] = "*.__init__"
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", sc, "--api-logging", args.api_logging],
                           env=env, capture_output=True, text=True)
        note(f"scenario {sc}: exit {r.returncode}")
        if r.returncode != 0:
            note(r.stdout[-4000:] + r.stderr[-4000:])
            continue
        if sc == "pt":
            conv = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pt_to_safetensors.py")
            c = subprocess.run([sys.executable, conv, d, os.path.join(work, "pt_converted")], capture_output=True, text=True)
            note(f"pt_to_safetensors: exit {c.returncode} {c.stdout.strip()} {c.stderr.strip()[-2000:]}")
            done.append("pt_raw")
            if c.returncode == 0:
                done.append("pt_converted")
            continue
        done.append(sc)
    tar_path = os.path.join(out, "fi_dumps.tar")
    with tarfile.open(tar_path, "w") as tar:
        for name in done:
            tar.add(os.path.join(work, name), arcname=name)
    note(f"{tar_path}: {os.path.getsize(tar_path)} bytes, folders {done}")
    if not args.work:
        import shutil
        shutil.rmtree(work)
    return 0 if len(done) >= len(args.scenarios or SCENARIOS) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--api-logging", required=True, help="FlashInfer's flashinfer/api_logging.py (fb28d7242b35)")
    ap.add_argument("--out", help="folder for fi_dumps.tar and capture_log.txt")
    ap.add_argument("--work", help="keep the dump folders here (default: a temp folder under --out, removed)")
    ap.add_argument("--scenario", dest="scenarios", action="append", choices=SCENARIOS, help="only these (repeatable)")
    ap.add_argument("--child", dest="scenario", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scenario:
        import torch
        if not torch.cuda.is_available():
            sys.exit("capture_flashinfer_dumps: no CUDA device")
        child(args)
        return 0
    if not args.out:
        ap.error("--out is required")
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
