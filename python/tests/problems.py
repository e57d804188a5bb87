"""Small attention problems for the tests: inputs in FlashInfer's shapes, the podcheck case built from them
with podcheck's FlashInfer-shaped constructors, and a kernel's outputs computed by the independent numpy
attention (numpy_attention.py), optionally with a planted fault:

    wrong_head   the decode side reads kv head h % H_kv instead of h / group
    top_left     the prefill side's causal mask aligned top-left (j <= i) instead of bottom-right
    lse_e        LSE in base e instead of base 2
    unwritten    query heads 2-3 of out_d (or out_p) never written: podcheck's poison pattern left
"""

import numpy as np

import podcheck
from numpy_attention import attend, attend_paged, bf16_to_f64, f64_to_bf16

POISON_F16 = np.uint16(0x7E5A)
POISON_BF16 = np.uint16(0x7FA5)


class Problem:
    def __init__(self, case, outputs):
        self.case, self.outputs = case, outputs


def randn(rng, shape, dtype="float16"):
    x = rng.standard_normal(shape)
    return f64_to_bf16(x) if dtype == "bfloat16" else x.astype(np.float16)


def f64(a, dtype="float16"):
    return bf16_to_f64(a) if dtype == "bfloat16" else a.astype(np.float64)


def store(out, lse, dtype="float16"):
    o = f64_to_bf16(out) if dtype == "bfloat16" else out.astype(np.float16)
    return o, lse.astype(np.float32)


def poison(out, heads, dtype="float16"):
    bits = out.view(np.uint16).copy()
    bits[:, heads, :] = POISON_BF16 if dtype == "bfloat16" else POISON_F16
    return bits if dtype == "bfloat16" else bits.view(np.float16)


def page_table(rng, kv_lens, page_size, spare=2):
    """CSR page table over a shuffled pool with spare pages: (indptr, indices, last_page_len, num_pages)."""
    n = [(L + page_size - 1) // page_size for L in kv_lens]
    pool = rng.permutation(sum(n) + spare).astype(np.int32)
    indptr = np.concatenate([[0], np.cumsum(n)]).astype(np.int32)
    last = np.array([(L - 1) % page_size + 1 for L in kv_lens], np.int32)
    return indptr, pool[:sum(n)], last, sum(n) + spare


def paged_cache(rng, num_pages, page_size, hkv, d, layout, dtype="float16"):
    shape = (num_pages, page_size, hkv, d) if layout == "NHD" else (num_pages, hkv, page_size, d)
    return randn(rng, shape, dtype), randn(rng, shape, dtype)


def _faults(fault, side):
    return dict(top_left=fault == "top_left" and side == "p", gqa_modulo=fault == "wrong_head" and side == "d",
                lse_base="e" if fault == "lse_e" else "2")


def single_pod(seed=1, fault=None, H=4, Hkv=2, D=32):
    """PODWithPagedKVCacheWrapper: causal dense prefill (13 rows over 20 keys) + 3 decodes over a stacked NHD
    cache with page size 4; spare pages hold NaN (never read)."""
    rng = np.random.default_rng(seed)
    q_p, k_p, v_p = randn(rng, (13, H, D)), randn(rng, (20, Hkv, D)), randn(rng, (20, Hkv, D))
    kv_lens = [5, 9, 1]
    indptr, indices, last, pages = page_table(rng, kv_lens, 4)
    k_c, v_c = paged_cache(rng, pages, 4, Hkv, D, "NHD")
    unused = np.setdiff1d(np.arange(pages), indices)
    k_c[unused], v_c[unused] = np.nan, np.nan
    kv = np.stack([k_c, v_c], axis=1)  # [pages, 2, ps, H_kv, D]
    q_d = randn(rng, (3, H, D))
    case = podcheck.pod_case(q_p, k_p, v_p, q_d, kv, kv_indptr=indptr, kv_indices=indices, kv_last_page_len=last,
                             causal_p=True, id=f"single_pod_{fault or 'ok'}")
    o_p, l_p = attend(f64(q_p), f64(k_p), f64(v_p), causal=True, **_faults(fault, "p"))
    o_d, l_d = attend_paged(f64(q_d), np.arange(4), f64(k_c), f64(v_c), indptr, indices, last, **_faults(fault, "d"))
    out_p, lse_p = store(o_p, l_p)
    out_d, lse_d = store(o_d, l_d)
    if fault == "unwritten":
        out_d = poison(out_d, [2, 3])
    return Problem(case, dict(out_p=out_p, lse_p=lse_p, out_d=out_d, lse_d=lse_d))


def batch_pod(seed=2, fault=None, H=4, Hkv=2, D=32, layout="HND"):
    """BatchPODWithPagedKVCacheWrapper: 2 causal paged prefills (3 rows / 7 keys, 5 rows / 12 keys) + 2 decodes,
    (k, v) tuple caches in HND, page size 4."""
    rng = np.random.default_rng(seed)
    qo_p = np.array([0, 3, 8], np.int32)
    ind_p, idx_p, last_p, pages_p = page_table(rng, [7, 12], 4)
    k_p, v_p = paged_cache(rng, pages_p, 4, Hkv, D, layout)
    ind_d, idx_d, last_d, pages_d = page_table(rng, [6, 3], 4)
    k_d, v_d = paged_cache(rng, pages_d, 4, Hkv, D, layout)
    q_p, q_d = randn(rng, (8, H, D)), randn(rng, (2, H, D))
    qo_d = np.arange(3, dtype=np.int32)
    case = podcheck.batch_pod_case(q_p, (k_p, v_p), q_d, (k_d, v_d), qo_indptr_p=qo_p, kv_indptr_p=ind_p,
                                   kv_indices_p=idx_p, last_page_len_p=last_p, qo_indptr_d=qo_d, kv_indptr_d=ind_d,
                                   kv_indices_d=idx_d, last_page_len_d=last_d, kv_layout=layout, causal_p=True,
                                   id=f"batch_pod_{fault or 'ok'}")
    o_p, l_p = attend_paged(f64(q_p), qo_p, f64(k_p), f64(v_p), ind_p, idx_p, last_p, layout=layout, causal=True,
                            **_faults(fault, "p"))
    o_d, l_d = attend_paged(f64(q_d), qo_d, f64(k_d), f64(v_d), ind_d, idx_d, last_d, layout=layout,
                            **_faults(fault, "d"))
    out_p, lse_p = store(o_p, l_p)
    out_d, lse_d = store(o_d, l_d)
    if fault == "unwritten":
        out_d = poison(out_d, [2, 3])
    return Problem(case, dict(out_p=out_p, lse_p=lse_p, out_d=out_d, lse_d=lse_d))


def single_prefill(seed=3, fault=None, H=4, Hkv=2, D=32):
    """single_prefill_with_kv_cache: 6 rows over 10 keys, HND, causal with window_left 4."""
    rng = np.random.default_rng(seed)
    q, k, v = randn(rng, (6, H, D)), randn(rng, (Hkv, 10, D)), randn(rng, (Hkv, 10, D))
    case = podcheck.single_prefill_case(q, k, v, causal=True, window_left=4, kv_layout="HND",
                                        id=f"single_prefill_{fault or 'ok'}")
    kn, vn = f64(k).transpose(1, 0, 2), f64(v).transpose(1, 0, 2)
    o, l = attend(f64(q), kn, vn, causal=True, window_left=4, top_left=fault == "top_left",
                  gqa_modulo=fault == "wrong_head", lse_base="e" if fault == "lse_e" else "2")
    out, lse = store(o, l)
    if fault == "unwritten":
        out = poison(out, [2, 3])
    return Problem(case, dict(out_p=out, lse_p=lse))


def batch_prefill(seed=4, fault=None, H=4, Hkv=2, D=32):
    """BatchPrefillWithPagedKVCacheWrapper: 2 requests (4 rows / 9 keys, 2 rows / 5 keys) with a random
    custom mask (FlashInfer's flattened boolean form), NHD, page size 4; one row of the mask all zero."""
    rng = np.random.default_rng(seed)
    qo = np.array([0, 4, 6], np.int32)
    kv_lens = [9, 5]
    ind, idx, last, pages = page_table(rng, kv_lens, 4)
    k, v = paged_cache(rng, pages, 4, Hkv, D, "NHD")
    q = randn(rng, (6, H, D))
    masks = [rng.random((4, 9)) < 0.6, rng.random((2, 5)) < 0.6]
    masks[0][1, :] = False  # an empty row: out 0, lse -inf
    flat = np.concatenate([m.reshape(-1) for m in masks])
    case = podcheck.batch_prefill_case(q, (k, v), qo_indptr=qo, paged_kv_indptr=ind, paged_kv_indices=idx,
                                       paged_kv_last_page_len=last, custom_mask=flat,
                                       id=f"batch_prefill_{fault or 'ok'}")
    o, l = attend_paged(f64(q), qo, f64(k), f64(v), ind, idx, last, masks=masks, gqa_modulo=fault == "wrong_head",
                        lse_base="e" if fault == "lse_e" else "2")
    out, lse = store(o, l)
    if fault == "unwritten":
        out = poison(out, [2, 3])
    return Problem(case, dict(out_p=out, lse_p=lse))


def batch_decode(seed=5, fault=None, H=4, Hkv=2, D=32):
    """BatchDecodeWithPagedKVCacheWrapper in bfloat16 given as raw uint16 bits (q_data_type / kv_data_type):
    3 requests over a stacked NHD cache, page size 8."""
    rng = np.random.default_rng(seed)
    ind, idx, last, pages = page_table(rng, [11, 3, 16], 8)
    k_c, v_c = paged_cache(rng, pages, 8, Hkv, D, "NHD", "bfloat16")
    q = randn(rng, (3, H, D), "bfloat16")
    case = podcheck.batch_decode_case(q, np.stack([k_c, v_c], axis=1), indptr=ind, indices=idx, last_page_len=last,
                                      q_data_type="bfloat16", kv_data_type="bfloat16",
                                      id=f"batch_decode_{fault or 'ok'}")
    o, l = attend_paged(f64(q, "bfloat16"), np.arange(4), f64(k_c, "bfloat16"), f64(v_c, "bfloat16"), ind, idx,
                        last, gqa_modulo=fault == "wrong_head", lse_base="e" if fault == "lse_e" else "2")
    out, lse = store(o, l, "bfloat16")
    if fault == "unwritten":
        out = poison(out, [2, 3], "bfloat16")
    return Problem(case, dict(out_d=podcheck.tensor(out, "bfloat16"), lse_d=lse))


BUILDERS = dict(single_pod=single_pod, batch_pod=batch_pod, single_prefill=single_prefill,
                batch_prefill=batch_prefill, batch_decode=batch_decode)
# The diagnosis each planted fault must get (a phrase of podcheck's diagnosis, validation/diagnose.cpp).
DIAGNOSIS = {
    "wrong_head": "matches the reference with: GQA mapping h % H_kv instead of h / group",
    "top_left": "matches the reference with: causal mask aligned top-left (j <= i)",
    "lse_e": "matches the reference with: LSE in base e (natural log)",
    "unwritten": "never written (poison pattern left)",
}
# Which faults apply to which problem (top-left needs a causal side with qo_len != kv_len).
FAULTS = {
    "single_pod": ["wrong_head", "top_left", "lse_e", "unwritten"],
    "batch_pod": ["wrong_head", "top_left", "lse_e", "unwritten"],
    "single_prefill": ["wrong_head", "top_left", "lse_e", "unwritten"],
    "batch_prefill": ["wrong_head", "lse_e", "unwritten"],
    "batch_decode": ["wrong_head", "lse_e", "unwritten"],
}
