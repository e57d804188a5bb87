"""Cases in the shapes and argument names of FlashInfer's wrappers (SPEC.md §1, §2, §9).

Each function takes what one FlashInfer call takes — plan() and run() arguments together, plus the wrapper's
kv_layout — and returns a podcheck.Case with the intended semantics of every argument:

    pod_case            PODWithPagedKVCacheWrapper: dense prefill (q_p, k_p, v_p) + paged decode (q_d, cache)
    batch_pod_case      BatchPODWithPagedKVCacheWrapper: paged prefill + paged decode
    single_prefill_case single_prefill_with_kv_cache
    batch_prefill_case  BatchPrefillWithPagedKVCacheWrapper
    batch_decode_case   BatchDecodeWithPagedKVCacheWrapper

Where FlashInfer takes an option from plan() and silently ignores the same option given to run() (single POD's
decode side: sm_scale_d, window_left_d, pos_encoding_mode_d, rope_*_d, kv_layout_d; SPEC §11 item 5), the
plan's value is the case's, and a run value that disagrees with it is refused rather than guessed at. What a
FlashInfer kernel really computes beyond that (POD ignores RoPE, soft cap, decode masks, ...) is a profile
(profile="flashinfer-pod" in judge), not a change to the case.

Tensors: torch (any device), numpy, DLPack or ml_dtypes arrays; raw-bits numpy arrays (uint16 bfloat16, uint8
float8) need q_data_type / kv_data_type. Index tensors are int32 (int64 accepted when the values fit).
"""

import numpy as np

from . import _arrays
from ._podcheck import Case, Side, Tensor

_DEFAULT_ROPE_SCALE, _DEFAULT_ROPE_THETA = 1.0, 1e4  # FlashInfer's defaults (SPEC §4.2)


def _name(dtype):
    return None if dtype is None else str(dtype).replace("torch.", "")


def _storage(x, dtype, what):
    return _arrays.storage(x, _name(dtype), what)


def _dense(x, dtype, what):
    a, name = _storage(x, dtype, what)
    return Tensor(a, name)


def _paged_cache(cache, layout, dtype, what):
    """FlashInfer's paged KV forms (SPEC §1.2): one 5-D tensor (K at index 0 of dim 1, V at 1) or a (k, v)
    tuple of 4-D tensors; with page_size 1 also a 4-D combined tensor or 3-D tuple members (a unit page dim is
    inserted where the layout has it). Returns (dict of Side arguments, page_size, num_kv_heads)."""
    slot_axis = 1 if layout == "NHD" else 2  # of a 4-D [pages, ps, H, D] / [pages, H, ps, D] tensor
    if isinstance(cache, (tuple, list)):
        if len(cache) != 2:
            raise ValueError(f"{what}: a (k_cache, v_cache) pair is required, got {len(cache)} tensors")
        k, kn = _storage(cache[0], dtype, what + "[0]")
        v, vn = _storage(cache[1], dtype, what + "[1]")
        if k.ndim == 3:
            k, v = np.expand_dims(k, slot_axis), np.expand_dims(v, slot_axis)
        if k.ndim != 4:
            raise ValueError(f"{what}: k_cache must be 4-D {layout}, has shape {list(k.shape)}")
        return dict(k=Tensor(k, kn), v=Tensor(v, vn)), k.shape[slot_axis], k.shape[3 - slot_axis]
    kv, name = _storage(cache, dtype, what)
    if kv.ndim == 4:
        kv = np.expand_dims(kv, slot_axis + 1)
    if kv.ndim != 5 or kv.shape[1] != 2:
        raise ValueError(f"{what}: a 5-D {layout} cache [pages, 2, ...] is required, has shape {list(kv.shape)}")
    return dict(kv=Tensor(kv, name)), kv.shape[slot_axis + 1], kv.shape[4 - slot_axis]


def _one_of(values, names):
    given = [(n, v) for n, v in zip(names, values) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give one of {', '.join(names)}")
    if not given:
        raise ValueError(f"{names[0]} is required")
    return given[0][1]


def _agree(run_value, plan_value, run_name, plan_name):
    """A single-POD decode option given to run(): FlashInfer uses plan()'s and ignores it."""
    if run_value is not None and run_value != plan_value:
        raise ValueError(f"{run_name}={run_value!r} disagrees with {plan_name}={plan_value!r}: FlashInfer's "
                         f"PODWithPagedKVCacheWrapper takes the decode side's {plan_name} from plan() and ignores "
                         f"run({run_name}) (SPEC §11 item 5); give it as {plan_name}")


def _mask(custom_mask, packed_custom_mask, causal, segments, what):
    """Mask arguments of one side -> Side keywords. FlashInfer's precedence (SPEC §2.6): a custom mask (packed
    or not) makes the mode CUSTOM and causal is not applied. custom_mask is boolean, each request's [qo_len,
    kv_len] flattened row-major and concatenated; packed_custom_mask is its per-request segment_packbits
    (little bit order, each segment starting on a byte). segments: (qo_len, kv_len) per request."""
    if custom_mask is not None and packed_custom_mask is not None:
        raise ValueError(f"give custom_mask{what} or packed_custom_mask{what}, not both")
    sizes = [q * k for q, k in segments]
    nbytes = [(n + 7) // 8 for n in sizes]
    indptr = np.concatenate([[0], np.cumsum(nbytes)]).astype(np.int64)
    if packed_custom_mask is not None:
        packed, _ = _arrays.storage(packed_custom_mask, "uint8", "packed_custom_mask" + what)
        return dict(mask_mode="custom", custom_mask=packed.reshape(-1), custom_mask_indptr=indptr)
    if custom_mask is not None:
        bits = _arrays.bool_array(custom_mask, "custom_mask" + what).reshape(-1)
        if bits.size != sum(sizes):
            raise ValueError(f"custom_mask{what} has {bits.size} elements, the requests need {sum(sizes)} "
                             f"(qo_len x kv_len each: {segments})")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        packed = [np.packbits(bits[starts[r]:starts[r + 1]], bitorder="little") for r in range(len(sizes))]
        return dict(mask_mode="custom", custom_mask=np.concatenate(packed + [np.zeros(0, np.uint8)]),
                    custom_mask_indptr=indptr)
    return dict(mask_mode="causal" if causal else "none")


def _paged_side(qt, cache, layout, page_size, indptr, indices, last_page_len, qo_indptr, kv_dtype, what,
                mask_args, params):
    """A paged Side for the query Tensor qt; a custom mask needs the request lengths, taken from the side."""
    kv, cache_page_size, num_kv_heads = _paged_cache(cache, layout, kv_dtype, what)
    if page_size is not None and page_size != cache_page_size:
        raise ValueError(f"page_size={page_size} but {what} has pages of {cache_page_size} slots (FlashInfer reads "
                         "the page size from the cache; they must agree)")
    side_args = dict(kv, layout=layout, page_size=cache_page_size, kv_indptr=indptr, kv_indices=indices,
                     kv_last_page_len=last_page_len, **params)
    custom_mask, packed, causal, suffix = mask_args
    side = Side(qo_indptr, qt, **side_args, mask_mode="causal" if causal else "none")
    if custom_mask is not None or packed is not None:
        segments = list(zip(np.diff(side.qo_indptr).tolist(), side.kv_lens))
        side = Side(qo_indptr, qt, **side_args, **_mask(custom_mask, packed, causal, segments, suffix))
    return side, num_kv_heads


def _params(sm_scale, window_left, pos_encoding_mode, rope_scale, rope_theta, logits_soft_cap=None,
            q_scale=None, k_scale=None, v_scale=None):
    return dict(sm_scale=sm_scale, window_left=window_left, pos_encoding=pos_encoding_mode,
                rope_scale=_DEFAULT_ROPE_SCALE if rope_scale is None else rope_scale,
                rope_theta=_DEFAULT_ROPE_THETA if rope_theta is None else rope_theta,
                logits_soft_cap=logits_soft_cap or 0.0,
                q_scale=1.0 if q_scale is None else q_scale, k_scale=1.0 if k_scale is None else k_scale,
                v_scale=1.0 if v_scale is None else v_scale)


def _case(id, num_qo_heads, num_kv_heads, head_dim, qt, kv_heads, q_dtype, kv_dtype, o_dtype, lse_base, **sides):
    """The Case; head counts and head_dim are plan()'s when given, else read from q [rows, H, D] and K/V."""
    if len(qt.shape) != 3:
        raise ValueError(f"q must be [rows, num_qo_heads, head_dim], has shape {list(qt.shape)}")
    h, d = qt.shape[1], qt.shape[2]
    return Case(id, h if num_qo_heads is None else num_qo_heads, kv_heads if num_kv_heads is None else num_kv_heads,
                d if head_dim is None else head_dim, dtype_q=_name(q_dtype), dtype_kv=_name(kv_dtype),
                dtype_o=_name(o_dtype), lse_base=lse_base, **sides)


def pod_case(q_p, k_p, v_p, q_d, paged_kv_cache_d, *,
             # plan(): the decode side's page table and options, shared head config and dtypes
             kv_indptr=None, kv_indices=None, kv_last_page_len=None, indptr=None, indices=None, last_page_len=None,
             num_qo_heads=None, num_kv_heads=None, head_dim=None, page_size=None, pos_encoding_mode="NONE",
             window_left=-1, q_data_type=None, kv_data_type=None, data_type=None, sm_scale=None, rope_scale=None,
             rope_theta=None,
             # the wrapper's constructor
             kv_layout="NHD",
             # run(): prefill options
             custom_mask_p=None, packed_custom_mask_p=None, causal_p=False, kv_layout_p="NHD",
             pos_encoding_mode_p="NONE", sm_scale_p=None, window_left_p=-1, rope_scale_p=None, rope_theta_p=None,
             # run(): decode options (those plan() also takes must agree with it)
             custom_mask_d=None, packed_custom_mask_d=None, causal_d=False, kv_layout_d=None,
             pos_encoding_mode_d=None, sm_scale_d=None, window_left_d=None, rope_scale_d=None, rope_theta_d=None,
             q_scale=None, k_scale=None, v_scale=None,
             id="pod", lse_base="2"):
    """A single POD (PODWithPagedKVCacheWrapper.plan + run): one dense prefill request (q_p [qo_len, H, D],
    k_p / v_p in kv_layout_p) and a batch of one-token decodes (q_d [batch, H, D]) over a paged cache in the
    wrapper's kv_layout. The page table may be named as plan() names it (indptr, indices, last_page_len) or
    kv_indptr, kv_indices, kv_last_page_len."""
    kv_dtype = kv_data_type if kv_data_type is not None else data_type
    _agree(kv_layout_d, kv_layout, "kv_layout_d", "kv_layout")
    _agree(sm_scale_d, sm_scale, "sm_scale_d", "sm_scale")
    _agree(window_left_d, window_left, "window_left_d", "window_left")
    _agree(pos_encoding_mode_d, pos_encoding_mode, "pos_encoding_mode_d", "pos_encoding_mode")
    _agree(rope_scale_d, rope_scale, "rope_scale_d", "rope_scale")
    _agree(rope_theta_d, rope_theta, "rope_theta_d", "rope_theta")

    qp = _dense(q_p, q_data_type, "q_p")
    kp, vp = _dense(k_p, kv_dtype, "k_p"), _dense(v_p, kv_dtype, "v_p")
    if len(kp.shape) != 3:
        raise ValueError(f"k_p must be 3-D {kv_layout_p}, has shape {list(kp.shape)}")
    qo_len, kv_len = qp.shape[0], kp.shape[0 if kv_layout_p == "NHD" else 1]
    prefill = Side([0, qo_len], qp, k=kp, v=vp, layout=kv_layout_p,
                   **_mask(custom_mask_p, packed_custom_mask_p, causal_p, [(qo_len, kv_len)], "_p"),
                   **_params(sm_scale_p, window_left_p, pos_encoding_mode_p, rope_scale_p, rope_theta_p))
    qd = _dense(q_d, q_data_type, "q_d")
    decode, kv_heads = _paged_side(
        qd, paged_kv_cache_d, kv_layout, page_size,
        _one_of([kv_indptr, indptr], ["kv_indptr", "indptr"]),
        _one_of([kv_indices, indices], ["kv_indices", "indices"]),
        _one_of([kv_last_page_len, last_page_len], ["kv_last_page_len", "last_page_len"]),
        np.arange(qd.shape[0] + 1, dtype=np.int32), kv_dtype, "paged_kv_cache_d",
        (custom_mask_d, packed_custom_mask_d, causal_d, "_d"),
        _params(sm_scale, window_left, pos_encoding_mode, rope_scale, rope_theta, None, q_scale, k_scale, v_scale))
    return _case(id, num_qo_heads, num_kv_heads, head_dim, qp, kv_heads, q_data_type, kv_dtype, None, lse_base,
                 prefill=prefill, decode=decode)


def batch_pod_case(q_p, paged_kv_cache_p, q_d, paged_kv_cache_d, *,
                   # plan()
                   qo_indptr_p, kv_indptr_p, kv_indices_p, last_page_len_p, qo_indptr_d, kv_indptr_d, kv_indices_d,
                   last_page_len_d, num_qo_heads=None, num_kv_heads=None, head_dim=None, page_size=None,
                   pos_encoding_mode="NONE", window_left=-1, q_data_type=None, kv_data_type=None, data_type=None,
                   sm_scale=None, rope_scale=None, rope_theta=None,
                   # the wrapper's constructor
                   kv_layout="NHD",
                   # run()
                   custom_mask_p=None, packed_custom_mask_p=None, causal_p=False, q_scale=None, k_scale=None,
                   v_scale=None,
                   id="batch_pod", lse_base="2"):
    """A batch POD (BatchPODWithPagedKVCacheWrapper.plan + run): paged prefill requests ragged by qo_indptr_p
    and paged decode requests ragged by qo_indptr_d, one kv_layout and page size; plan()'s sm_scale, window and
    position encoding serve both sides, the q/k/v scales the decode side (SPEC §9)."""
    kv_dtype = kv_data_type if kv_data_type is not None else data_type
    shared = _params(sm_scale, window_left, pos_encoding_mode, rope_scale, rope_theta)
    qp, qd = _dense(q_p, q_data_type, "q_p"), _dense(q_d, q_data_type, "q_d")
    prefill, kv_heads = _paged_side(
        qp, paged_kv_cache_p, kv_layout, page_size, kv_indptr_p, kv_indices_p, last_page_len_p, qo_indptr_p,
        kv_dtype, "paged_kv_cache_p", (custom_mask_p, packed_custom_mask_p, causal_p, "_p"), shared)
    decode, _ = _paged_side(
        qd, paged_kv_cache_d, kv_layout, page_size, kv_indptr_d, kv_indices_d, last_page_len_d, qo_indptr_d,
        kv_dtype, "paged_kv_cache_d", (None, None, False, "_d"),
        _params(sm_scale, window_left, pos_encoding_mode, rope_scale, rope_theta, None, q_scale, k_scale, v_scale))
    return _case(id, num_qo_heads, num_kv_heads, head_dim, qp, kv_heads, q_data_type, kv_dtype, None, lse_base,
                 prefill=prefill, decode=decode)


def single_prefill_case(q, k, v, *, custom_mask=None, packed_custom_mask=None, causal=False, kv_layout="NHD",
                        pos_encoding_mode="NONE", sm_scale=None, window_left=-1, logits_soft_cap=None,
                        rope_scale=None, rope_theta=None, k_scale=None, v_scale=None, o_dtype=None,
                        q_data_type=None, kv_data_type=None, id="single_prefill", lse_base="2"):
    """single_prefill_with_kv_cache: one request, q [qo_len, H, D], k / v [kv_len, H_kv, D] (NHD) or
    [H_kv, kv_len, D] (HND). A prefill-only case."""
    qt = _dense(q, q_data_type, "q")
    kt, vt = _dense(k, kv_data_type, "k"), _dense(v, kv_data_type, "v")
    if len(kt.shape) != 3:
        raise ValueError(f"k must be 3-D {kv_layout}, has shape {list(kt.shape)}")
    qo_len, kv_len = qt.shape[0], kt.shape[0 if kv_layout == "NHD" else 1]
    side = Side([0, qo_len], qt, k=kt, v=vt, layout=kv_layout,
                **_mask(custom_mask, packed_custom_mask, causal, [(qo_len, kv_len)], ""),
                **_params(sm_scale, window_left, pos_encoding_mode, rope_scale, rope_theta, logits_soft_cap,
                          None, k_scale, v_scale))
    return _case(id, None, None, None, qt, kt.shape[1 if kv_layout == "NHD" else 0], q_data_type, kv_data_type,
                 o_dtype, lse_base, prefill=side)


def batch_prefill_case(q, paged_kv_cache, *, qo_indptr, paged_kv_indptr=None, paged_kv_indices=None,
                       paged_kv_last_page_len=None, kv_indptr=None, kv_indices=None, kv_last_page_len=None,
                       num_qo_heads=None, num_kv_heads=None, head_dim_qk=None, page_size=None, head_dim_vo=None,
                       custom_mask=None, packed_custom_mask=None, causal=False, pos_encoding_mode="NONE",
                       sm_scale=None, window_left=-1, logits_soft_cap=None, rope_scale=None, rope_theta=None,
                       q_data_type=None, kv_data_type=None, o_data_type=None, kv_layout="NHD", q_scale=None,
                       k_scale=None, v_scale=None, id="batch_prefill", lse_base="2"):
    """BatchPrefillWithPagedKVCacheWrapper.plan + run: requests ragged by qo_indptr over a paged cache.
    A prefill-only case."""
    if head_dim_vo is not None and head_dim_qk is not None and head_dim_vo != head_dim_qk:
        raise ValueError(f"head_dim_vo={head_dim_vo} differs from head_dim_qk={head_dim_qk}: podcheck's case has "
                         "one head_dim")
    qt = _dense(q, q_data_type, "q")
    side, kv_heads = _paged_side(
        qt, paged_kv_cache, kv_layout, page_size,
        _one_of([paged_kv_indptr, kv_indptr], ["paged_kv_indptr", "kv_indptr"]),
        _one_of([paged_kv_indices, kv_indices], ["paged_kv_indices", "kv_indices"]),
        _one_of([paged_kv_last_page_len, kv_last_page_len], ["paged_kv_last_page_len", "kv_last_page_len"]),
        qo_indptr, kv_data_type, "paged_kv_cache", (custom_mask, packed_custom_mask, causal, ""),
        _params(sm_scale, window_left, pos_encoding_mode, rope_scale, rope_theta, logits_soft_cap, q_scale,
                k_scale, v_scale))
    return _case(id, num_qo_heads, num_kv_heads, head_dim_qk, qt, kv_heads, q_data_type, kv_data_type,
                 o_data_type, lse_base, prefill=side)


def batch_decode_case(q, paged_kv_cache, *, indptr=None, indices=None, last_page_len=None, kv_indptr=None,
                      kv_indices=None, kv_last_page_len=None, num_qo_heads=None, num_kv_heads=None, head_dim=None,
                      page_size=None, pos_encoding_mode="NONE", window_left=-1, logits_soft_cap=None,
                      q_data_type=None, kv_data_type=None, o_data_type=None, sm_scale=None, rope_scale=None,
                      rope_theta=None, kv_layout="NHD", q_scale=None, k_scale=None, v_scale=None,
                      id="batch_decode", lse_base="2"):
    """BatchDecodeWithPagedKVCacheWrapper.plan + run: one query token per request (q [batch, H, D]) over a
    paged cache. A decode-only case."""
    qt = _dense(q, q_data_type, "q")
    side, kv_heads = _paged_side(
        qt, paged_kv_cache, kv_layout, page_size,
        _one_of([indptr, kv_indptr], ["indptr", "kv_indptr"]),
        _one_of([indices, kv_indices], ["indices", "kv_indices"]),
        _one_of([last_page_len, kv_last_page_len], ["last_page_len", "kv_last_page_len"]),
        np.arange(qt.shape[0] + 1, dtype=np.int32), kv_data_type, "paged_kv_cache", (None, None, False, ""),
        _params(sm_scale, window_left, pos_encoding_mode, rope_scale, rope_theta, logits_soft_cap, q_scale,
                k_scale, v_scale))
    return _case(id, num_qo_heads, num_kv_heads, head_dim, qt, kv_heads, q_data_type, kv_data_type, o_data_type,
                 lse_base, decode=side)
