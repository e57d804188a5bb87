#!/usr/bin/env python3
"""Baseline for `podcheck bench reference`: numpy float64 causal attention, 2048 x 2048, 8 heads, D = 128.

Three-pass softmax per head over the full score matrix, as a straightforward numpy user would write it.
Compare its time with the row prefill_2048x2048_causal_h8_kv8_d128 of `podcheck bench reference`.
Run with a python that has numpy (on Debian: /usr/bin/python3).
"""
import time

import numpy as np

L, H, D = 2048, 8, 128
rng = np.random.default_rng(0)
q = rng.standard_normal((H, L, D))
k = rng.standard_normal((H, L, D))
v = rng.standard_normal((H, L, D))
visible = np.tril(np.ones((L, L), dtype=bool))  # bottom-right causal with Q == L

best = float("inf")
for _ in range(2):
    t0 = time.perf_counter()
    out = np.empty_like(q)
    for h in range(H):
        s = (q[h] @ k[h].T) / np.sqrt(D)
        s = np.where(visible, s, -np.inf)
        m = s.max(axis=1, keepdims=True)
        p = np.exp(s - m)
        out[h] = (p @ v[h]) / p.sum(axis=1, keepdims=True)
    best = min(best, time.perf_counter() - t0)
print(f"numpy float64 causal attention 2048x2048, 8 heads, D128: {best:.3f} s (best of 2)")
