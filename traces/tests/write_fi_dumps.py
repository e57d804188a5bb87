"""Writes small dumps in the layout of FlashInfer's API logging (flashinfer/api_logging.py at fb28d7242b35,
FLASHINFER_LOGLEVEL=10, FLASHINFER_DUMP_SAFETENSORS=1) with numpy alone, for the importer's tests.

The layout follows what the code writes: one folder per call named <YYYYmmdd_HHMMSS_mmm>_pid<P>_<func>_call<NNNN>,
metadata.jsonl with the record before the call ("inputs_saved") and after it ("completed"), session.jsonl
with every record in order, inputs.safetensors (arg_<i>, kwarg_<name>, <key>__<j> for tuple members; self is
arg_0 of a method and is recorded in input_metadata only) and outputs.safetensors (result, result_<i>,
result_<i>__<j>), graph_flushes/flush_<K>/ snapshots for a call captured in a CUDA graph. Arguments left at
their default are not recorded. The outputs are computed here in float64 with numpy, the way FlashInfer's
wrappers resolve their options (plan vs run, defaults, sm_scale folding, float32 scalars), then rounded to
the output dtype: an implementation independent of podcheck's C++ reference.

usage: write_fi_dumps.py OUT_DIR   (writes OUT_DIR/pod_session, serving, graph, batch_pod, ambiguous, pt_dump)
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import st_numpy as st  # noqa: E402

F32 = lambda x: float(np.float32(x))  # noqa: E731  (a Python float as the float32 a kernel receives)

SIG = {
    "PODWithPagedKVCacheWrapper.__init__": "(self, float_workspace_buffer: torch.Tensor, kv_layout: str = 'NHD', use_cuda_graph: bool = False, paged_kv_indptr_buffer: Optional[torch.Tensor] = None, paged_kv_indices_buffer: Optional[torch.Tensor] = None, paged_kv_last_page_len_buffer: Optional[torch.Tensor] = None, jit_args: Optional[List[Any]] = None) -> None",
    "PODWithPagedKVCacheWrapper.plan": "(self, indptr: torch.Tensor, indices: torch.Tensor, last_page_len: torch.Tensor, num_qo_heads: int, num_kv_heads: int, head_dim: int, page_size: int, pos_encoding_mode: str = 'NONE', window_left: int = -1, q_data_type: Union[str, torch.dtype, NoneType] = 'float16', kv_data_type: Union[str, torch.dtype, NoneType] = None, data_type: Union[str, torch.dtype, NoneType] = None, sm_scale: Optional[float] = None, rope_scale: Optional[float] = None, rope_theta: Optional[float] = None, non_blocking: bool = True) -> None",
    "PODWithPagedKVCacheWrapper.run": "(self, q_p: torch.Tensor, k_p: torch.Tensor, v_p: torch.Tensor, q_d: torch.Tensor, paged_kv_cache_d: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]], custom_mask_p: Optional[torch.Tensor] = None, packed_custom_mask_p: Optional[torch.Tensor] = None, causal_p: bool = False, kv_layout_p: str = 'NHD', pos_encoding_mode_p: str = 'NONE', sm_scale_p: Optional[float] = None, window_left_p: int = -1, rope_scale_p: Optional[float] = None, rope_theta_p: Optional[float] = None, return_lse_p: bool = False, custom_mask_d: Optional[torch.Tensor] = None, packed_custom_mask_d: Optional[torch.Tensor] = None, causal_d: bool = False, kv_layout_d: str = 'NHD', pos_encoding_mode_d: str = 'NONE', sm_scale_d: Optional[float] = None, window_left_d: int = -1, rope_scale_d: Optional[float] = None, rope_theta_d: Optional[float] = None, q_scale: Optional[float] = None, k_scale: Optional[float] = None, v_scale: Optional[float] = None, return_lse_d: bool = False, use_fp16_qk_reduction: bool = False, enable_pdl: Optional[bool] = None, *args) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]",
    "BatchPODWithPagedKVCacheWrapper.__init__": "(self, float_workspace_buffer: torch.Tensor, kv_layout: str = 'NHD') -> None",
    "BatchPODWithPagedKVCacheWrapper.plan": "(self, qo_indptr_p: torch.Tensor, kv_indptr_p: torch.Tensor, kv_indices_p: torch.Tensor, last_page_len_p: torch.Tensor, qo_indptr_d: torch.Tensor, kv_indptr_d: torch.Tensor, kv_indices_d: torch.Tensor, last_page_len_d: torch.Tensor, num_qo_heads: int, num_kv_heads: int, head_dim: int, page_size: int, pos_encoding_mode: str = 'NONE', window_left: int = -1, q_data_type: Union[str, torch.dtype, NoneType] = 'float16', kv_data_type: Union[str, torch.dtype, NoneType] = None, data_type: Union[str, torch.dtype, NoneType] = None, sm_scale: Optional[float] = None, rope_scale: Optional[float] = None, rope_theta: Optional[float] = None, non_blocking: bool = True) -> None",
    "BatchPODWithPagedKVCacheWrapper.run": "(self, q_p: torch.Tensor, paged_kv_cache_p: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]], q_d: torch.Tensor, paged_kv_cache_d: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]], custom_mask_p: Optional[torch.Tensor] = None, packed_custom_mask_p: Optional[torch.Tensor] = None, causal_p: bool = False, q_scale: Optional[float] = None, k_scale: Optional[float] = None, v_scale: Optional[float] = None, return_lse: bool = False, use_fp16_qk_reduction: bool = False, enable_pdl: Optional[bool] = None) -> Union[Tuple[torch.Tensor, torch.Tensor], Tuple[Tuple[torch.Tensor, torch.Tensor], Tuple[torch.Tensor, torch.Tensor]]]",
    "single_prefill_with_kv_cache": "(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale_q: Optional[torch.Tensor] = None, scale_k: Optional[torch.Tensor] = None, scale_v: Optional[torch.Tensor] = None, o_dtype: Optional[torch.dtype] = None, custom_mask: Optional[torch.Tensor] = None, packed_custom_mask: Optional[torch.Tensor] = None, causal: bool = False, kv_layout: str = 'NHD', pos_encoding_mode: str = 'NONE', use_fp16_qk_reduction: bool = False, sm_scale: Optional[float] = None, window_left: int = -1, logits_soft_cap: Optional[float] = None, rope_scale: Optional[float] = None, rope_theta: Optional[float] = None, backend: str = 'auto', return_lse: bool = False, kv_cache_sf: Optional[Tuple[torch.Tensor, torch.Tensor]] = None, k_scale: Optional[float] = None, v_scale: Optional[float] = None) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]",
    "BatchPrefillWithPagedKVCacheWrapper.plan": "(self, qo_indptr: torch.Tensor, paged_kv_indptr: torch.Tensor, paged_kv_indices: torch.Tensor, paged_kv_last_page_len: torch.Tensor, num_qo_heads: int, num_kv_heads: int, head_dim_qk: int, page_size: int, head_dim_vo: Optional[int] = None, custom_mask: Optional[torch.Tensor] = None, packed_custom_mask: Optional[torch.Tensor] = None, causal: bool = False, pos_encoding_mode: str = 'NONE', use_fp16_qk_reduction: bool = False, sm_scale: Optional[float] = None, window_left: int = -1, logits_soft_cap: Optional[float] = None, rope_scale: Optional[float] = None, rope_theta: Optional[float] = None, q_data_type: Union[str, torch.dtype] = 'float16', kv_data_type: Union[str, torch.dtype, NoneType] = None, o_data_type: Union[str, torch.dtype, NoneType] = None, non_blocking: bool = True, prefix_len_ptr: Optional[torch.Tensor] = None, token_pos_in_items_ptr: Optional[torch.Tensor] = None, token_pos_in_items_len: int = 0, max_item_len_ptr: Optional[torch.Tensor] = None, seq_lens: Optional[torch.Tensor] = None, seq_lens_q: Optional[torch.Tensor] = None, block_tables: Optional[torch.Tensor] = None, max_token_per_sequence: Optional[int] = None, max_sequence_kv: Optional[int] = None, fixed_split_size: Optional[int] = None, disable_split_kv: bool = False) -> None",
    "BatchPrefillWithPagedKVCacheWrapper.run": "(self, q: torch.Tensor, paged_kv_cache: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]], *args, q_scale: Union[float, torch.Tensor, NoneType] = None, k_scale: Union[float, torch.Tensor, NoneType] = None, v_scale: Union[float, torch.Tensor, NoneType] = None, out: Optional[torch.Tensor] = None, lse: Optional[torch.Tensor] = None, return_lse: bool = False, enable_pdl: Optional[bool] = None, window_left: Optional[int] = None, sinks: Optional[torch.Tensor] = None, kv_cache_sf: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor], NoneType] = None, skip_softmax_threshold_scale_factor: Optional[float] = None, use_fp16_softmax: Optional[bool] = None, uses_spcompress: Optional[bool] = None) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]",
    "BatchDecodeWithPagedKVCacheWrapper.__init__": "(self, float_workspace_buffer: torch.Tensor, kv_layout: str = 'NHD', use_cuda_graph: bool = False, use_tensor_cores: bool = False, paged_kv_indptr_buffer: Optional[torch.Tensor] = None, paged_kv_indices_buffer: Optional[torch.Tensor] = None, paged_kv_last_page_len_buffer: Optional[torch.Tensor] = None, backend: str = 'auto', jit_args: Optional[List[Any]] = None) -> None",
    "BatchDecodeWithPagedKVCacheWrapper.plan": "(self, indptr: torch.Tensor, indices: torch.Tensor, last_page_len: torch.Tensor, num_qo_heads: int, num_kv_heads: int, head_dim: int, page_size: int, *deprecated_positional_args: Any, **kwargs: Any) -> None",
    "BatchDecodeWithPagedKVCacheWrapper.run": "(self, q: torch.Tensor, paged_kv_cache: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]], *args, q_scale: Optional[float] = None, k_scale: Optional[float] = None, v_scale: Optional[float] = None, out: Optional[torch.Tensor] = None, lse: Optional[torch.Tensor] = None, return_lse: bool = False, enable_pdl: Optional[bool] = None, window_left: Optional[int] = None, sinks: Optional[torch.Tensor] = None, q_len_per_req: Optional[int] = None, skip_softmax_threshold_scale_factor: Optional[float] = None, kv_cache_sf: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor], NoneType] = None) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]",
}


def module_of(name):
    if "POD" in name:
        return "flashinfer.pod"
    return "flashinfer.decode" if "Decode" in name else "flashinfer.prefill"


class Obj:
    """A wrapper instance as the logger sees it: its class name and id()."""

    def __init__(self, cls, ident):
        self.cls, self.ident = cls, ident


class TupleArg(tuple):
    pass


def tensor_meta(a, key=None):
    shape = list(a.shape)
    stride = [int(np.prod(shape[i + 1 :])) for i in range(len(shape))]
    m = {"type": "torch.Tensor", "shape": shape, "dtype": "torch." + st.torch_dtype(a), "stride": stride,
         "device": "cuda:0", "requires_grad": False, "is_contiguous": True}
    if key:
        m["tensor_key"] = key
    return m


def is_tensor(a):
    return isinstance(a, (np.ndarray, st.Raw))


def extract(value, key, tensors):
    """Value -> metadata, collecting tensors (the logger's _extract_value_for_dump)."""
    if is_tensor(value):
        tensors[key] = value
        return tensor_meta(value, key)
    if isinstance(value, tuple):
        return {"type": "tuple", "length": len(value),
                "items": [extract(v, f"{key}__{i}", tensors) for i, v in enumerate(value)], "truncated": False}
    if isinstance(value, Obj):
        return {"type": value.cls, "repr": f"<{value.cls} object at {hex(value.ident)}>"}
    if isinstance(value, DType):
        return {"type": "torch.dtype", "value": "torch." + value.name}
    return value


class DType:
    def __init__(self, name):
        self.name = name


def inputs_of(a, kw):
    """(tensors, input_metadata) of positional and keyword arguments (the logger's extraction)."""
    tensors, meta = {}, {}
    for i, v in enumerate(a):
        if is_tensor(v):
            tensors[f"arg_{i}"] = v
        else:
            meta[f"arg_{i}"] = extract(v, f"arg_{i}", tensors)
    for k, v in kw.items():
        if is_tensor(v):
            tensors[f"kwarg_{k}"] = v
        else:
            meta[f"kwarg_{k}"] = extract(v, f"kwarg_{k}", tensors)
    return tensors, meta


def tensor_details(t):
    return {k: {"shape": list(v.shape), "dtype": "torch." + st.torch_dtype(v), "stride": tensor_meta(v)["stride"],
                "device": "cpu"} for k, v in t.items()}


class Dump:
    def __init__(self, root, pid):
        self.root, self.pid = root, pid
        os.makedirs(root, exist_ok=True)
        self.counters = {}
        self.ms = 0
        self.session = os.path.join(root, "session.jsonl")

    def _ts(self):
        self.ms += 7
        s, ms = divmod(self.ms, 1000)
        return f"20260102_1030{s:02d}_{ms:03d}"

    def _append(self, path, rec):
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")

    def call(self, func, args=(), kwargs=None, result=None, self_obj=None, capture=None):
        """Records one call. capture: list of (inputs, result) per CUDA-graph replay (flushes)."""
        kwargs = kwargs or {}
        name = f"{self_obj.cls}.{func}" if self_obj else func
        seq = self.counters[name] = self.counters.get(name, 0) + 1
        ts = self._ts()
        folder = f"{ts}_pid{self.pid}_{name}_call{seq:04d}"
        ddir = os.path.join(self.root, folder)
        os.makedirs(ddir)
        full_args = ((self_obj,) if self_obj else ()) + tuple(args)

        def outputs_of(r):
            tensors = {}
            if is_tensor(r):
                tensors["result"] = r
            elif isinstance(r, tuple):
                for i, v in enumerate(r):
                    if is_tensor(v):
                        tensors[f"result_{i}"] = v
                    else:
                        extract(v, f"result_{i}", tensors)
            return tensors

        tin, meta = inputs_of(full_args, kwargs)
        details = tensor_details
        rec = {"function_name": name, "module": module_of(name), "call_sequence": seq, "timestamp": ts,
               "process_id": self.pid, "input_metadata": meta, "output_metadata": {},
               "tensor_info": {"input_tensor_keys": list(tin), "output_tensor_keys": [], "input_size_bytes": 0,
                               "input_size_mb": 0.0},
               "tensor_details": details(tin), "tensor_format": "safetensors", "function_signature": SIG[name],
               "versions": {"torch": "2.11.0+cu130", "python": "3.12.3 (main, Nov  6 2025, 13:44:16) [GCC 13.3.0]",
                            "flashinfer": "<unavailable>"},
               "execution_status": "graph_capture_pending_flush" if capture else "inputs_saved",
               "graph_capture": bool(capture)}
        if self_obj:
            rec["self_id"] = self_obj.ident
        rec["dump_dir"] = ddir
        meta_path = os.path.join(ddir, "metadata.jsonl")
        if not capture:
            if tin:
                st.save(os.path.join(ddir, "inputs.safetensors"), tin)
            self._append(meta_path, rec)
            self._append(self.session, rec)
            if result is None:
                return folder
            tout = outputs_of(result)
            st.save(os.path.join(ddir, "outputs.safetensors"), tout)
            rec = dict(rec)
            rec["tensor_info"] = dict(rec["tensor_info"], output_tensor_keys=list(tout))
            rec["tensor_details"] = dict(rec["tensor_details"], **details(tout))
            rec["execution_status"] = "completed"
            self._append(meta_path, rec)
            self._append(self.session, rec)
            return folder
        # captured in a CUDA graph: two pending records now, one snapshot per replay later
        self._append(meta_path, rec)
        self._append(self.session, rec)
        self._append(meta_path, rec)
        self._append(self.session, rec)
        return (folder, ddir, rec, kwargs, full_args)

    def flush(self, captured, flush_index, args, result):
        folder, ddir, rec, kwargs, full_args = captured
        full_args = full_args[:1] + tuple(args)
        snap = os.path.join(ddir, "graph_flushes", f"flush_{flush_index:04d}")
        os.makedirs(snap)
        tensors, _ = inputs_of(full_args, kwargs)
        tout = {f"result_{i}": v for i, v in enumerate(result)} if isinstance(result, tuple) else {"result": result}
        for d in (ddir, snap):
            st.save(os.path.join(d, "inputs.safetensors"), tensors)
            st.save(os.path.join(d, "outputs.safetensors"), tout)
        for kind in ("inputs", "outputs"):
            last = dict(rec, execution_status="completed" if kind == "outputs" else "inputs_saved",
                        graph_capture_flushed=True, graph_capture_flush_index=flush_index,
                        graph_capture_snapshot_dir=snap)
            if kind == "outputs":
                last["tensor_details"] = dict(rec["tensor_details"], **tensor_details(tout))
            self._append(os.path.join(ddir, "metadata.jsonl"), last)
            self._append(self.session, last)
            snap_meta = dict(last, dump_dir=snap, graph_capture_base_dump_dir=ddir)
            self._append(os.path.join(snap, "metadata.jsonl"), snap_meta)
            self._append(self.session, snap_meta)


# ---- float64 attention, as FlashInfer defines it (SPEC §2) --------------------------------------------------

def attend(q, keys, vals, sm, causal=False, window=-1, cap=0.0, mask=None):
    """q [Q, H, D], keys/vals [L, Hkv, D] float64 -> out [Q, H, D], lse [Q, H] (base 2)."""
    Q, H, D = q.shape
    L, Hkv, _ = keys.shape
    g = H // Hkv
    i = np.arange(Q)[:, None]
    j = np.arange(L)[None, :]
    p = i + L - Q
    vis = np.ones((Q, L), bool)
    if mask is not None:
        vis = mask.reshape(Q, L).astype(bool)
    elif causal:
        vis = j <= p
    if window >= 0:
        vis = vis & (j >= p - window)
    out = np.zeros((Q, H, D))
    lse = np.full((Q, H), -np.inf)
    for h in range(H):
        s = (q[:, h, :] @ keys[:, h // g, :].T) * sm
        if cap > 0:
            s = cap * np.tanh(s / cap)
        s = np.where(vis, s, -np.inf)
        for r in range(Q):
            if not vis[r].any():
                continue
            m = s[r].max()
            e = np.exp(s[r] - m)
            z = e.sum()
            out[r, h] = e @ vals[:, h // g, :] / z
            lse[r, h] = (m + math.log(z)) / math.log(2.0)
    return out, lse


def gather(cache_k, cache_v, layout, indptr, indices, last, ps, r):
    """Tokens of request r from a paged cache (NHD [P, ps, H, D] or HND [P, H, ps, D])."""
    pages = indices[indptr[r] : indptr[r + 1]]
    n = len(pages)
    L = 0 if n == 0 else (n - 1) * ps + int(last[r])
    ks, vs = [], []
    for t in range(L):
        page, slot = pages[t // ps], t % ps
        if layout == "NHD":
            ks.append(cache_k[page, slot])
            vs.append(cache_v[page, slot])
        else:
            ks.append(cache_k[page, :, slot])
            vs.append(cache_v[page, :, slot])
    Hkv, D = cache_k.shape[2 if layout == "NHD" else 1], cache_k.shape[-1]
    return (np.array(ks).reshape(L, Hkv, D), np.array(vs).reshape(L, Hkv, D))


def rnd(rng, shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def paged_attend(q, qo_indptr, kf, vf, layout, indptr, indices, last, ps, sm, causal=False, window=-1, cap=0.0):
    out = np.zeros(q.shape)
    lse = np.full(q.shape[:2], -np.inf)
    for r in range(len(last)):
        k, v = gather(kf, vf, layout, indptr, indices, last, ps, r)
        a, b = qo_indptr[r], qo_indptr[r + 1]
        o, l = attend(q[a:b], k, v, sm, causal, window, cap)
        out[a:b], lse[a:b] = o, l
    return out, lse


def write_pod_session(root):
    rng = np.random.default_rng(11)
    d = Dump(root, pid=1111)
    w = Obj("PODWithPagedKVCacheWrapper", 0x7F00AA001000)
    H, Hkv, D, ps = 4, 2, 16, 4
    d.call("__init__", (np.zeros(64, np.uint8), "NHD"), self_obj=w)
    # decode page table: 3 requests over 6 of the 12 pages of a stacked pool
    indptr = np.array([0, 2, 3, 6], np.int32)
    indices = np.array([9, 2, 5, 0, 11, 7], np.int32)
    last = np.array([3, 4, 1], np.int32)
    d.call("plan", (indptr, indices, last, H, Hkv, D, ps), {"window_left": 5}, self_obj=w)
    pool = rnd(rng, (12, 2, ps, Hkv, D)).astype(np.float16)
    pool[[1, 3, 4, 6, 8, 10]] = np.nan  # pages no request reaches (must not matter)
    kf, vf = pool[:, 0].astype(np.float64), pool[:, 1].astype(np.float64)
    for layer in range(3):
        q_p = rnd(rng, (7, H, D)).astype(np.float16)
        hnd = layer == 2
        k_p = rnd(rng, (Hkv, 9, D) if hnd else (9, Hkv, D)).astype(np.float16)
        v_p = rnd(rng, (Hkv, 9, D) if hnd else (9, Hkv, D)).astype(np.float16)
        q_d = rnd(rng, (3, H, D)).astype(np.float16)
        kw = {"causal_p": True}
        sm_p = F32(1.0 / math.sqrt(D))
        sm_d = F32(1.0 / math.sqrt(D))
        vscale = None
        if layer == 1:  # run's sm_scale_d is ignored by single POD; the scales fold into the plan's sm_scale
            kw.update(sm_scale_d=0.5, q_scale=0.5, k_scale=3.0, v_scale=0.75)
            sm_d = F32((1.0 / math.sqrt(D)) * 0.5 * 3.0)
            vscale = 0.75
        if layer == 2:
            kw.update(kv_layout_p="HND", sm_scale_p=0.3)
            sm_p = F32(0.3)
        kk = np.transpose(k_p, (1, 0, 2)) if hnd else k_p
        vv = np.transpose(v_p, (1, 0, 2)) if hnd else v_p
        o_p, _ = attend(q_p.astype(np.float64), kk.astype(np.float64), vv.astype(np.float64), sm_p, causal=True)
        o_d, _ = paged_attend(q_d.astype(np.float64), [0, 1, 2, 3], kf, vf, "NHD", indptr, indices, last, ps, sm_d,
                              window=5)
        o_d16 = o_d.astype(np.float16)
        if vscale is not None:  # out_d *= v_scale on the fp16 tensor (float32 math, one more rounding)
            o_d16 = (o_d16.astype(np.float32) * np.float32(vscale)).astype(np.float16)
        d.call("run", (q_p, k_p, v_p, q_d, pool), kw, result=(o_p.astype(np.float16), o_d16), self_obj=w)
    # two standalone prefills
    q = rnd(rng, (5, H, D)).astype(np.float16)
    k = rnd(rng, (Hkv, 8, D)).astype(np.float16)
    v = rnd(rng, (Hkv, 8, D)).astype(np.float16)
    mask = rng.random((5, 8)) < 0.6
    mask[:, 0] = True
    o, l = attend(q.astype(np.float64), np.transpose(k, (1, 0, 2)).astype(np.float64),
                  np.transpose(v, (1, 0, 2)).astype(np.float64), F32(1 / math.sqrt(D)), mask=mask)
    d.call("single_prefill_with_kv_cache", (q, k, v), {"custom_mask": mask, "kv_layout": "HND", "return_lse": True},
           result=(o.astype(np.float16), l.astype(np.float32)))
    q = rnd(rng, (6, H, D)).astype(np.float16)
    k = rnd(rng, (10, Hkv, D)).astype(np.float16)
    v = rnd(rng, (10, Hkv, D)).astype(np.float16)
    o, _ = attend(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), F32(1 / math.sqrt(D)), causal=True,
                  window=4, cap=F32(20.0))
    d.call("single_prefill_with_kv_cache", (q, k, v, None, None, None, None, None, None, True),
           {"window_left": 4, "logits_soft_cap": 20.0}, result=o.astype(np.float16))


def write_serving(root):
    """A serving stack's prefill and decode wrappers, __init__ excluded (layout from the caches' shapes)."""
    rng = np.random.default_rng(22)
    d = Dump(root, pid=2222)
    H, Hkv, D, ps = 4, 2, 16, 4
    pw = Obj("BatchPrefillWithPagedKVCacheWrapper", 0x7F00BB002000)
    qo = np.array([0, 4, 5, 11], np.int64)  # int64 index tensors, as torch.arange gives
    kvp = np.array([0, 2, 3, 5], np.int64)
    kvi = np.array([6, 1, 3, 8, 0], np.int64)
    lastp = np.array([2, 4, 3], np.int64)
    d.call("plan", (qo, kvp, kvi, lastp, H, Hkv, D, ps),
           {"causal": True, "sm_scale": 0.2, "q_data_type": DType("float16")}, self_obj=pw)
    kc = rnd(rng, (10, ps, Hkv, D)).astype(np.float16)
    vc = rnd(rng, (10, ps, Hkv, D)).astype(np.float16)
    for layer in range(2):
        q = rnd(rng, (11, H, D)).astype(np.float16)
        kw = {"return_lse": True}
        o, l = paged_attend(q.astype(np.float64), qo, kc.astype(np.float64), vc.astype(np.float64), "NHD", kvp, kvi,
                            lastp, ps, F32(0.2), causal=True)
        o16 = o.astype(np.float16)
        if layer == 1:
            kw["v_scale"] = 0.5
            o16 = (o16.astype(np.float32) * np.float32(0.5)).astype(np.float16)
        d.call("run", (q, (kc, vc)), kw, result=(o16, l.astype(np.float32)), self_obj=pw)
    dw = Obj("BatchDecodeWithPagedKVCacheWrapper", 0x7F00BB003000)
    indptr = np.array([0, 1, 3, 4, 6], np.int32)
    indices = np.array([4, 0, 2, 5, 1, 3], np.int32)
    last = np.array([4, 1, 2, 3], np.int32)
    # deprecated positional plan options: pos_encoding_mode, window_left
    d.call("plan", (indptr, indices, last, H, Hkv, D, ps, "NONE", 2), {"logits_soft_cap": 30.0}, self_obj=dw)
    pool = rnd(rng, (6, 2, Hkv, ps, D))  # HND stacked
    pool16 = st.to_bf16(pool)
    kf = st.from_bf16(st.Raw(pool16.bits[:, 0], "bfloat16")).astype(np.float64)
    vf = st.from_bf16(st.Raw(pool16.bits[:, 1], "bfloat16")).astype(np.float64)
    for layer in range(2):
        q = st.to_bf16(rnd(rng, (4, H, D)))
        o, l = paged_attend(st.from_bf16(q).astype(np.float64), [0, 1, 2, 3, 4], kf, vf, "HND", indptr, indices, last,
                            ps, F32(1 / math.sqrt(D)), window=2, cap=F32(30.0))
        d.call("run", (q, pool16), {"return_lse": True}, result=(st.to_bf16(o), l.astype(np.float32)), self_obj=dw)


def write_graph(root):
    """A decode wrapper captured in a CUDA graph and replayed twice, re-planned between the replays."""
    rng = np.random.default_rng(33)
    d = Dump(root, pid=3333)
    H, Hkv, D, ps = 4, 2, 16, 4
    w = Obj("BatchDecodeWithPagedKVCacheWrapper", 0x7F00CC004000)
    d.call("__init__", (np.zeros(64, np.uint8), "NHD", True), self_obj=w)
    indptr = np.array([0, 2, 3], np.int32)
    indices = np.array([1, 3, 0], np.int32)
    kc = rnd(rng, (4, ps, Hkv, D)).astype(np.float16)
    vc = rnd(rng, (4, ps, Hkv, D)).astype(np.float16)
    kf, vf = kc.astype(np.float64), vc.astype(np.float64)
    sm = F32(1 / math.sqrt(D))

    def decode(q, last):
        o, _ = paged_attend(q.astype(np.float64), [0, 1, 2], kf, vf, "NHD", indptr, indices, last, ps, sm)
        return o.astype(np.float16)

    last1 = np.array([2, 3], np.int32)
    d.call("plan", (indptr, indices, last1, H, Hkv, D, ps), self_obj=w)
    q0 = rnd(rng, (2, H, D)).astype(np.float16)
    d.call("run", (q0, (kc, vc)), result=decode(q0, last1), self_obj=w)  # eager warm-up
    cap = d.call("run", (q0, (kc, vc)), self_obj=w, capture=True)
    q1 = rnd(rng, (2, H, D)).astype(np.float16)
    d.flush(cap, 1, (q1, (kc, vc)), decode(q1, last1))
    last2 = np.array([4, 1], np.int32)
    d.call("plan", (indptr, indices, last2, H, Hkv, D, ps), self_obj=w)
    q2 = rnd(rng, (2, H, D)).astype(np.float16)
    d.flush(cap, 2, (q2, (kc, vc)), decode(q2, last2))


def write_batch_pod(root):
    """BatchPOD: HND tuple caches, one plan for both sides, LSE returned nested ((out_p, out_d), (lse_p, lse_d))."""
    rng = np.random.default_rng(55)
    d = Dump(root, pid=6666)
    H, Hkv, D, ps = 4, 2, 16, 4
    w = Obj("BatchPODWithPagedKVCacheWrapper", 0x7F00EE006000)
    d.call("__init__", (np.zeros(64, np.uint8),), {"kv_layout": "HND"}, self_obj=w)
    qo_p, kvp, kip, lastp = [0, 5, 8], np.array([0, 2, 4], np.int32), np.array([3, 0, 5, 1], np.int32), np.array([3, 2], np.int32)
    qo_d, kvd, kid, lastd = [0, 1, 2, 3], np.array([0, 1, 3, 4], np.int32), np.array([2, 0, 3, 1], np.int32), np.array([4, 1, 2], np.int32)
    d.call("plan", (np.array(qo_p, np.int32), kvp, kip, lastp, np.array(qo_d, np.int32), kvd, kid, lastd, H, Hkv, D, ps),
           {"window_left": 6, "sm_scale": 0.21}, self_obj=w)
    kp = rnd(rng, (6, Hkv, ps, D)).astype(np.float16)
    vp = rnd(rng, (6, Hkv, ps, D)).astype(np.float16)
    kd = rnd(rng, (4, Hkv, ps, D)).astype(np.float16)
    vd = rnd(rng, (4, Hkv, ps, D)).astype(np.float16)
    f = lambda a: a.astype(np.float64)  # noqa: E731
    for layer in range(2):
        q_p = rnd(rng, (8, H, D)).astype(np.float16)
        q_d = rnd(rng, (3, H, D)).astype(np.float16)
        kscale = 2.0 if layer == 1 else None
        sm_d = F32(0.21 * (kscale or 1.0))
        o_p, l_p = paged_attend(f(q_p), qo_p, f(kp), f(vp), "HND", kvp, kip, lastp, ps, F32(0.21), causal=True, window=6)
        o_d, l_d = paged_attend(f(q_d), qo_d, f(kd), f(vd), "HND", kvd, kid, lastd, ps, sm_d, window=6)
        if layer == 0:
            d.call("run", (q_p, (kp, vp), q_d, (kd, vd)), {"causal_p": True, "return_lse": True},
                   result=((o_p.astype(np.float16), o_d.astype(np.float16)), (l_p.astype(np.float32), l_d.astype(np.float32))),
                   self_obj=w)
        else:
            o_d16 = (o_d.astype(np.float16).astype(np.float32) * np.float32(0.5)).astype(np.float16)
            d.call("run", (q_p, (kp, vp), q_d, (kd, vd)), {"causal_p": True, "k_scale": 2.0, "v_scale": 0.5},
                   result=(o_p.astype(np.float16), o_d16), self_obj=w)


def write_ambiguous(root):
    """A decode wrapper without __init__ whose page_size equals num_kv_heads: the layout needs --kv-layout."""
    rng = np.random.default_rng(44)
    d = Dump(root, pid=5555)
    H, Hkv, D, ps = 4, 2, 16, 2
    w = Obj("BatchDecodeWithPagedKVCacheWrapper", 0x7F00DD005000)
    indptr = np.array([0, 2], np.int32)
    indices = np.array([1, 0], np.int32)
    last = np.array([1], np.int32)
    d.call("plan", (indptr, indices, last, H, Hkv, D, ps), self_obj=w)
    kc = rnd(rng, (2, Hkv, ps, D)).astype(np.float16)  # HND
    vc = rnd(rng, (2, Hkv, ps, D)).astype(np.float16)
    q = rnd(rng, (1, H, D)).astype(np.float16)
    o, _ = paged_attend(q.astype(np.float64), [0, 1], kc.astype(np.float64), vc.astype(np.float64), "HND", indptr, indices,
                        last, ps, F32(1 / math.sqrt(D)))
    d.call("run", (q, (kc, vc)), result=o.astype(np.float16), self_obj=w)


def write_pt(root):
    d = Dump(root, pid=4444)
    q = np.zeros((1, 4, 16), np.float16)
    folder = d.call("single_prefill_with_kv_cache", (q, np.zeros((1, 2, 16), np.float16), np.zeros((1, 2, 16), np.float16)),
                    result=q)
    ddir = os.path.join(root, folder)
    os.rename(os.path.join(ddir, "inputs.safetensors"), os.path.join(ddir, "inputs.pt"))
    os.rename(os.path.join(ddir, "outputs.safetensors"), os.path.join(ddir, "outputs.pt"))


def main():
    out = sys.argv[1]
    write_pod_session(os.path.join(out, "pod_session"))
    write_serving(os.path.join(out, "serving"))
    write_graph(os.path.join(out, "graph"))
    write_batch_pod(os.path.join(out, "batch_pod"))
    write_ambiguous(os.path.join(out, "ambiguous"))
    write_pt(os.path.join(out, "pt_dump"))


if __name__ == "__main__":
    main()
