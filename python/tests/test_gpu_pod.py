"""GPU: POD in the style of FlashInfer's tests/utils/test_pod_kernels.py, judged by podcheck.

Each case computes a single POD (dense prefill + paged decode, FlashInfer's shapes and argument names) twice:
with PyTorch SDPA (bottom-right causal masks built by hand; the LSE as a float32 log-sum-exp in base 2, since
SDPA returns none) and with podcheck's own CUDA kernel through its C ABI (podcheck.run_kernel: the GPU
module, as `podcheck run` drives it). Both are asserted with podcheck.assert_pod_close, every output required.
The last test times the same cases through the CLI (`podcheck run --fixtures F --check`) and prints the
per-case times beside the Python ones (PODCHECK_TIMINGS=FILE also writes the table there).

Skipped, saying why, without torch or without a usable GPU. PODCHECK_GPU_GRID=full runs FlashInfer's whole
axis grid at these sizes (112 cases); the default runs a 12-case cut through it.
"""

import itertools
import json
import math
import os
import subprocess
import time

import pytest

import podcheck

torch = pytest.importorskip("torch", reason="PyTorch is not installed: the GPU POD test needs it")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to PyTorch", allow_module_level=True)
F = torch.nn.functional

AXES = ("kv_len_p", "qo_len_p", "causal", "batch_size_d", "kv_len_d", "page_size_d", "num_qo_heads")
if os.environ.get("PODCHECK_GPU_GRID") == "full":
    GRID = list(itertools.product([127, 1024], [127, 1024], [False, True], [1, 17], [127, 1024], [1, 16], [8, 32]))
else:  # every value of every axis, in varied combinations
    GRID = [(127, 127, False, 1, 127, 1, 8), (127, 127, True, 17, 1024, 16, 32), (1024, 127, True, 17, 127, 1, 8),
            (1024, 127, False, 1, 1024, 16, 32), (1024, 1024, True, 1, 127, 16, 8),
            (1024, 1024, False, 17, 1024, 1, 32), (127, 1024, False, 17, 127, 16, 8),
            (1024, 1024, True, 17, 1024, 16, 32), (127, 127, True, 1, 1024, 1, 32),
            (1024, 127, True, 1, 127, 16, 32), (1024, 1024, False, 1, 127, 16, 8), (1024, 127, False, 17, 1024, 1, 8)]
RECORDS = []  # (case, python seconds, python verdict) for the timing comparison with the CLI


def sdpa(q, k, v, causal):
    """q [Q, H, D], k / v [L, H_kv, D] (NHD) -> out [Q, H, D] (q's dtype), lse [Q, H] (float32, base 2)."""
    Q, H, D = q.shape
    L, Hkv, _ = k.shape
    qh = q.transpose(0, 1).unsqueeze(0)
    kh = k.repeat_interleave(H // Hkv, dim=1).transpose(0, 1).unsqueeze(0)
    vh = v.repeat_interleave(H // Hkv, dim=1).transpose(0, 1).unsqueeze(0)
    mask = None
    if causal:  # bottom-right aligned: key j is visible to row i iff j <= i + L - Q
        i = torch.arange(Q, device=q.device)[:, None]
        j = torch.arange(L, device=q.device)[None, :]
        mask = j <= i + (L - Q)
    out = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask)
    s = (qh.float() @ kh.float().transpose(-1, -2)) / math.sqrt(D)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1) / math.log(2.0)
    return out[0].transpose(0, 1).contiguous(), lse[0].transpose(0, 1).contiguous()


def sdpa_paged_decode(q_d, kv_data, kv_indptr, kv_indices, kv_last_page_len):
    """One query per request over a 5-D NHD cache [pages, 2, page_size, H_kv, D]."""
    ps = kv_data.shape[2]
    outs, lses = [], []
    for r in range(q_d.shape[0]):
        pages = kv_indices[kv_indptr[r]:kv_indptr[r + 1]]
        L = (len(pages) - 1) * ps + int(kv_last_page_len[r])
        k = kv_data[pages.long(), 0].reshape(-1, *kv_data.shape[3:])[:L]
        v = kv_data[pages.long(), 1].reshape(-1, *kv_data.shape[3:])[:L]
        o, l = sdpa(q_d[r:r + 1], k, v, causal=False)
        outs.append(o)
        lses.append(l)
    return torch.cat(outs), torch.cat(lses)


@pytest.mark.parametrize(",".join(AXES), GRID)
@pytest.mark.parametrize("kv_layout_d", ["NHD"])
@pytest.mark.parametrize("num_kv_heads", [8])
@pytest.mark.parametrize("head_dim", [128])
def test_pod_with_paged_kv_cache(kv_len_p, qo_len_p, causal, batch_size_d, kv_len_d, page_size_d, num_qo_heads,
                                 kv_layout_d, num_kv_heads, head_dim, tmp_path):
    if causal and qo_len_p > kv_len_p:
        pytest.skip("Causal prefill with qo_len_p > kv_len_p is not supported")
    torch.manual_seed(hash((kv_len_p, qo_len_p, causal, batch_size_d, kv_len_d, page_size_d, num_qo_heads)) % 2**31)
    q_p = torch.randn(qo_len_p, num_qo_heads, head_dim, device="cuda:0", dtype=torch.float16)
    k_p = torch.randn(kv_len_p, num_kv_heads, head_dim, device="cuda:0", dtype=torch.float16)
    v_p = torch.randn(kv_len_p, num_kv_heads, head_dim, device="cuda:0", dtype=torch.float16)
    q_d = torch.randn(batch_size_d, num_qo_heads, head_dim, device="cuda:0", dtype=torch.float16)
    num_pages_per_seq = (kv_len_d + page_size_d - 1) // page_size_d
    total_num_pages = num_pages_per_seq * batch_size_d
    kv_shape = [total_num_pages, 2, page_size_d, num_kv_heads, head_dim]
    kv_data = torch.randn(*kv_shape, device="cuda:0", dtype=torch.float32).to(torch.float16)
    kv_indptr_d = torch.arange(0, batch_size_d + 1, device="cuda:0", dtype=torch.int32) * num_pages_per_seq
    kv_indices_d = torch.arange(0, total_num_pages, device="cuda:0", dtype=torch.int32)
    kv_last_page_len = torch.full((batch_size_d,), (kv_len_d - 1) % page_size_d + 1, device="cuda:0",
                                  dtype=torch.int32)
    case_id = (f"pod_p{qo_len_p}x{kv_len_p}{'c' if causal else ''}_d{batch_size_d}x{kv_len_d}_ps{page_size_d}"
               f"_h{num_qo_heads}")
    case = podcheck.pod_case(q_p, k_p, v_p, q_d, kv_data, kv_indptr=kv_indptr_d, kv_indices=kv_indices_d,
                             kv_last_page_len=kv_last_page_len, kv_layout=kv_layout_d, causal_p=causal, id=case_id)

    # PyTorch SDPA, judged by podcheck.
    o_p, lse_p = sdpa(q_p, k_p, v_p, causal)
    o_d, lse_d = sdpa_paged_decode(q_d, kv_data, kv_indptr_d.cpu(), kv_indices_d.cpu(), kv_last_page_len.cpu())
    podcheck.assert_pod_close(case, out_p=o_p, out_d=o_d, lse_p=lse_p, lse_d=lse_d, require_outputs="all",
                              failures_dir=tmp_path / "sdpa")

    # podcheck's CUDA kernel through the C ABI, judged the same way.
    t0 = time.perf_counter()
    trace = podcheck.run_kernel(case)
    assert trace.run_status == "ran", (trace.run_status, trace.run_message)
    verdict = podcheck.assert_pod_close(trace, require_outputs="all", failures_dir=tmp_path / "kernel")
    RECORDS.append((case, time.perf_counter() - t0, verdict))


def test_time_against_the_cli(tmp_path):
    """The same cases through `podcheck run --fixtures F --check`: same verdicts; per-case times side by side."""
    if not RECORDS:
        pytest.skip("no POD case ran")
    cli = os.environ.get("PODCHECK_CLI") or str(
        os.path.join(os.path.dirname(podcheck.__file__), "..", "..", "cli", "podcheck"))
    fixtures, report = tmp_path / "cases.h5", tmp_path / "run.json"
    podcheck.write_fixtures(fixtures, [case for case, _, _ in RECORDS])
    t0 = time.perf_counter()
    done = subprocess.run([cli, "run", "--kernel", "podcheck-cuda", "--fixtures", str(fixtures), "--check",
                           "--require-outputs", "all", "--json", str(report)],
                          capture_output=True, text=True)
    cli_wall = time.perf_counter() - t0
    assert done.returncode == 0, done.stdout + done.stderr
    cli_cases = {c["id"]: c for c in json.loads(report.read_text())["cases"]}
    lines = [f"{'case':40s} {'python s':>9s} {'py judge s':>10s} {'cli judge s':>11s}  verdicts"]
    for case, seconds, verdict in RECORDS:
        c = cli_cases[case.id]
        assert c["status"] == verdict.status, (c["line"], verdict.line)
        lines.append(f"{case.id:40s} {seconds:9.3f} {verdict.seconds:10.3f} {c['seconds']:11.3f}  "
                     f"{verdict.status} / {c['status']}")
    n = len(RECORDS)
    py_total = sum(s for _, s, _ in RECORDS)
    lines.append(f"per case: python (run_kernel + assert_pod_close) {py_total / n:.3f} s; "
                 f"CLI (podcheck run --check, whole process incl. CUDA start and fixture read) {cli_wall / n:.3f} s "
                 f"({n} cases, {cli_wall:.1f} s)")
    table = "\n".join(lines)
    print("\n" + table)
    if os.environ.get("PODCHECK_TIMINGS"):
        with open(os.environ["PODCHECK_TIMINGS"], "w") as f:
            f.write(table + "\n")
