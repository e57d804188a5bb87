"""An independent float64 attention in numpy, written for these tests from the definitions (SPEC.md §1-§3),
sharing nothing with podcheck's C++ reference: FlashInfer's semantics with bottom-right aligned causal masks
(key j visible to row i iff j <= i + L - Q), inclusive sliding windows (j >= i + L - Q - window_left), custom
masks, GQA (query head h reads kv head h // group), paged KV through a CSR page table, LSE in base 2 and
empty rows as out = 0, lse = -inf. The knobs plant the faults the tests expect podcheck to diagnose:
top_left aligns the causal bound at the top-left (j <= i; the window keeps its bottom-right position),
gqa_modulo maps query head h to kv head h % H_kv, lse_base="e" returns the natural-log LSE.
"""

import numpy as np


def bf16_to_f64(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def f64_to_bf16(x):
    """Round to nearest even, as bits (finite inputs)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = b + 0x7FFF + ((b >> 16) & 1)
    return (b >> 16).astype(np.uint16)


def attend(q, k, v, *, causal=False, window_left=-1, sm_scale=None, mask=None, top_left=False, gqa_modulo=False,
           lse_base="2"):
    """One request. q [Q, H, D], k / v [L, H_kv, D] (float64); mask: bool [Q, L] or None.
    Returns out [Q, H, D], lse [Q, H]."""
    Q, H, D = q.shape
    L, Hkv, _ = k.shape
    g = H // Hkv
    heads = np.arange(H) % Hkv if gqa_modulo else np.arange(H) // g
    scale = 1.0 / np.sqrt(D) if sm_scale is None else sm_scale
    kh, vh = k[:, heads, :], v[:, heads, :]
    s = np.einsum("qhd,khd->hqk", q, kh) * scale
    i = np.arange(Q)[:, None]
    j = np.arange(L)[None, :]
    pos = i + (L - Q)
    visible = np.ones((Q, L), bool)
    if causal:
        visible &= j <= (i if top_left else pos)
    if window_left >= 0:
        visible &= j >= pos - window_left
    if mask is not None:
        visible &= mask
    s = np.where(visible[None], s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    empty = ~np.isfinite(m)
    e = np.where(empty, 0.0, np.exp(s - np.where(empty, 0.0, m)))
    z = e.sum(axis=-1, keepdims=True)
    p = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    out = np.einsum("hqk,khd->qhd", p, vh)
    with np.errstate(divide="ignore"):
        lse_e = np.where(empty[..., 0], -np.inf, m[..., 0] + np.log(np.where(z[..., 0] > 0, z[..., 0], 1.0)))
    lse = lse_e if lse_base == "e" else lse_e / np.log(2.0)
    return out, lse.T


def gather_pages(k_cache, v_cache, indptr, indices, last_page_len, r, layout="NHD"):
    """Request r's K and V [L, H_kv, D] from 4-D caches (NHD [P, ps, H, D], HND [P, H, ps, D])."""
    if layout == "HND":
        k_cache, v_cache = k_cache.transpose(0, 2, 1, 3), v_cache.transpose(0, 2, 1, 3)
    ps = k_cache.shape[1]
    pages = indices[indptr[r]:indptr[r + 1]]
    if len(pages) == 0:
        return k_cache[:0, 0], v_cache[:0, 0]
    L = (len(pages) - 1) * ps + last_page_len[r]
    k = k_cache[pages].reshape(-1, *k_cache.shape[2:])[:L]
    v = v_cache[pages].reshape(-1, *v_cache.shape[2:])[:L]
    return k, v


def attend_paged(q, qo_indptr, k_cache, v_cache, indptr, indices, last_page_len, *, layout="NHD", masks=None,
                 **kw):
    """A batch over a paged cache: q [rows, H, D] ragged by qo_indptr; masks: one bool [Q_r, L_r] per request."""
    outs, lses = [], []
    for r in range(len(qo_indptr) - 1):
        k, v = gather_pages(k_cache, v_cache, indptr, indices, last_page_len, r, layout)
        o, l = attend(q[qo_indptr[r]:qo_indptr[r + 1]], k, v, mask=None if masks is None else masks[r], **kw)
        outs.append(o)
        lses.append(l)
    return np.concatenate(outs), np.concatenate(lses)
