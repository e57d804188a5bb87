"""Cases from Python: the FlashInfer-shaped constructors and the direct one give the cases the numpy attention
describes (podcheck.reference equals it to float64 rounding), tensors keep their bits (bfloat16 and float8 as
raw bits, DLPack), and what the file readers refuse is refused here too, with a message naming it."""

import threading
import time

import numpy as np
import pytest

import podcheck
from numpy_attention import attend, bf16_to_f64
from problems import BUILDERS, f64, page_table, paged_cache, randn


@pytest.mark.parametrize("name", list(BUILDERS))
def test_reference_equals_independent_numpy_attention(name):
    """The case a constructor builds means what the FlashInfer call means: podcheck's float64 reference on it
    equals the numpy attention computed from the same inputs (the outputs before they were rounded)."""
    p = BUILDERS[name]()
    ref = podcheck.reference(p.case)
    for key, observed in p.outputs.items():
        # the stored outputs are the numpy results rounded once: the reference is within half an output ULP
        got = observed.values() if isinstance(observed, podcheck.Tensor) else np.asarray(observed, np.float64)
        want = ref[key]
        assert want.shape == got.shape and want.dtype == np.float64
        finite = np.isfinite(want)
        assert (np.isneginf(want) == np.isneginf(got)).all()
        tol = (2.0 ** -8 if p.case.dtype_o == "bfloat16" else 2.0 ** -11) if key.startswith("out") else 2.0 ** -23
        assert np.all(np.abs(got[finite] - want[finite]) <= tol * np.maximum(np.abs(want[finite]), 1e-3)), key


def test_reference_exactly_matches_numpy_in_float64():
    """No rounding in between: the float64 numpy attention and the reference agree to 1e-12."""
    rng = np.random.default_rng(7)
    q, k, v = randn(rng, (5, 8, 64)), randn(rng, (11, 2, 64)), randn(rng, (11, 2, 64))
    case = podcheck.single_prefill_case(q, k, v, causal=True, sm_scale=0.3)
    o, l = attend(f64(q), f64(k), f64(v), causal=True, sm_scale=0.3)
    ref = podcheck.reference(case)
    assert np.abs(ref["out_p"] - o).max() <= 1e-12 * np.abs(o).max()
    assert np.abs(ref["lse_p"] - l).max() <= 1e-12 * np.abs(l).max()
    e = podcheck.reference(podcheck.single_prefill_case(q, k, v, causal=True, sm_scale=0.3, lse_base="e"))
    assert np.abs(e["lse_p"] - l * np.log(2)).max() <= 1e-12 * np.abs(l).max()


def test_direct_constructor_takes_the_trace_format_parameters():
    rng = np.random.default_rng(8)
    ind, idx, last, pages = page_table(rng, [6, 2], 4)
    k, v = paged_cache(rng, pages, 4, 2, 16, "NHD")
    q = randn(rng, (3, 4, 16))
    side = podcheck.Side([0, 2, 3], q, k=k, v=v, page_size=4, kv_indptr=ind, kv_indices=idx, kv_last_page_len=last,
                         mask_mode="causal", window_left=3, sm_scale=0.5, logits_soft_cap=20.0,
                         pos_encoding="ROPE_LLAMA", rope_scale=2.0, rope_theta=500.0, q_scale=1.0, k_scale=0.5,
                         v_scale=2.0)
    case = podcheck.Case("direct", 4, 2, 16, prefill=side, seed=42, distribution="normal", lse_base="e")
    assert (case.kind, case.dtype_q, case.dtype_kv, case.dtype_o, case.lse_base, case.seed) == (
        "prefill", "float16", "float16", "float16", "e", 42)
    s = case.prefill
    assert (s.num_requests, s.num_rows, s.kv_lens, s.page_size, s.mask_mode, s.window_left, s.pos_encoding) == (
        2, 3, [6, 2], 4, "causal", 3, "ROPE_LLAMA")
    assert (s.sm_scale, s.logits_soft_cap, s.rope_scale, s.rope_theta, s.k_scale, s.v_scale) == (
        0.5, 20.0, 2.0, 500.0, 0.5, 2.0)
    assert (s.kv_indices == idx).all() and (s.q.numpy() == q).all() and case.decode is None
    assert podcheck.reference(case)["lse_p"].shape == (3, 4)


def test_bfloat16_and_float8_keep_their_bits():
    rng = np.random.default_rng(9)
    bits = rng.integers(0, 0x7F00, size=(3, 4, 8), dtype=np.uint16)
    t = podcheck.tensor(bits, "bfloat16")
    assert (t.dtype, t.shape) == ("bfloat16", (3, 4, 8))
    assert (t.numpy() == bits).all() and t.numpy().dtype == np.uint16
    assert (t.values() == bf16_to_f64(bits)).all()
    f8 = rng.integers(0, 0x7E, size=(5,), dtype=np.uint8)
    assert (podcheck.tensor(f8, "float8_e4m3fn").numpy() == f8).all()
    assert podcheck.tensor(f8, "float8_e4m3fn").values()[f8 == 0x38].tolist() == [1.0] * int((f8 == 0x38).sum())
    with pytest.raises(ValueError, match="raw bits"):
        podcheck.tensor(bits)


def test_dlpack_objects_are_read():
    class OnlyDLPack:  # an array that offers nothing but DLPack
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(12, dtype=np.float16).reshape(3, 4)
    t = podcheck.tensor(OnlyDLPack(a))
    assert (t.dtype, t.shape) == ("float16", (3, 4)) and (t.numpy() == a).all()


def test_ml_dtypes_arrays_are_read():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed (optional)")
    a = np.array([1.0, -2.5, 3.0], dtype=ml_dtypes.bfloat16)
    t = podcheck.tensor(a)
    assert t.dtype == "bfloat16" and (t.values() == [1.0, -2.5, 3.0]).all()


def test_outputs_are_judged_as_stored_never_cast():
    p = BUILDERS["single_pod"]()
    with pytest.raises(ValueError, match="out_p: a float32 array was given where float16 is required"):
        podcheck.judge(p.case, out_p=p.outputs["out_p"].astype(np.float32))
    with pytest.raises(ValueError, match="lse_d: a float64 array was given where float32 is required"):
        podcheck.judge(p.case, lse_d=p.outputs["lse_d"].astype(np.float64))


def test_nonfinite_inputs_are_refused_where_a_request_reads_them():
    rng = np.random.default_rng(10)
    q, k, v = randn(rng, (4, 2, 16)), randn(rng, (6, 2, 16)), randn(rng, (6, 2, 16))
    k[3, 1, 5] = np.inf
    with pytest.raises(podcheck.InvalidCaseError,
                       match=r"case 'single_prefill', dataset 'prefill/k': element 117 is NaN or infinite"):
        podcheck.single_prefill_case(q, k, v)
    p_ind, p_idx, last, pages = page_table(rng, [5], 4)
    kc, vc = paged_cache(rng, pages, 4, 2, 16, "NHD")
    vc[p_idx[1], 0, 1, 2] = np.nan  # slot 0 of the second page: read (kv_len 5)
    with pytest.raises(podcheck.InvalidCaseError, match=r"dataset 'decode/v': element \d+ \(request 0, page "
                                                        rf"{p_idx[1]}, slot 0, kv head 1\) is NaN"):
        podcheck.batch_decode_case(randn(rng, (1, 2, 16)), (kc, vc), indptr=p_ind, indices=p_idx,
                                   last_page_len=last)
    vc[p_idx[1], 0, 1, 2] = 0
    vc[p_idx[1], 1, 1, 2] = np.nan  # slot 1 of the last page: past kv_len, never read
    podcheck.batch_decode_case(randn(rng, (1, 2, 16)), (kc, vc), indptr=p_ind, indices=p_idx, last_page_len=last)


def test_invalid_cases_are_refused_with_the_models_words():
    rng = np.random.default_rng(11)
    q, k, v = randn(rng, (4, 3, 16)), randn(rng, (6, 2, 16)), randn(rng, (6, 2, 16))
    with pytest.raises(podcheck.InvalidCaseError, match=r"num_qo_heads \(3\) is not a multiple of num_kv_heads"):
        podcheck.single_prefill_case(q, k, v)
    ind, idx, last, pages = page_table(rng, [5], 4)
    kc, vc = paged_cache(rng, pages, 4, 2, 16, "NHD")
    with pytest.raises(podcheck.InvalidCaseError, match=r"page index kv_indices\[0\] = 99 out of range"):
        podcheck.batch_decode_case(randn(rng, (1, 2, 16)), (kc, vc), indptr=ind, indices=[99, 0], last_page_len=last)


def test_single_pod_decode_options_given_to_run_must_agree_with_plan():
    p = BUILDERS["single_pod"]
    with pytest.raises(ValueError, match=r"window_left_d=8 disagrees with window_left=-1: .*ignores run\(window_left_d\)"):
        rng = np.random.default_rng(1)
        q, k = randn(rng, (2, 4, 32)), randn(rng, (4, 2, 32))
        kv = randn(rng, (2, 2, 4, 2, 32))
        podcheck.pod_case(q, k, k, q[:1], kv, kv_indptr=[0, 1], kv_indices=[0], kv_last_page_len=[4],
                          window_left_d=8)
    assert p().case.decode.window_left == -1


def test_gil_is_released_while_the_reference_runs():
    rng = np.random.default_rng(12)
    q, k = randn(rng, (1024, 8, 128)), randn(rng, (4096, 8, 128))
    case = podcheck.single_prefill_case(q, k, k, causal=True)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        podcheck.reference(case)
        span["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    ticks = []
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    t.join()
    inside = [x for x in ticks if span["start"] + 0.05 < x < span["end"] - 0.05]
    assert span["end"] - span["start"] > 0.2, "the case is too small to tell"
    # With the GIL held for the whole call this thread could not run at all in between.
    assert len(inside) > 20, (len(inside), span["end"] - span["start"])


def test_threads_can_be_set():
    before = podcheck.threads()
    podcheck.set_threads(1)
    assert podcheck.threads() == 1
    podcheck.set_threads(before)


@pytest.mark.parametrize("layout", ["NHD", "HND"])
def test_cache_forms_of_flashinfer_give_one_case(layout):
    """A 5-D cache, a (k, v) pair, and with page size 1 the 4-D / 3-D shortcuts (SPEC §1.2) are one problem."""
    rng = np.random.default_rng(13)
    ind, idx, last, pages = page_table(rng, [3, 5], 1)
    k, v = paged_cache(rng, pages, 1, 2, 16, layout)  # page size 1: NHD [P, 1, H, D], HND [P, H, 1, D]
    q = randn(rng, (2, 4, 16))
    args = dict(indptr=ind, indices=idx, last_page_len=last, kv_layout=layout)
    slot = 1 if layout == "NHD" else 2
    forms = [(k, v), np.stack([k, v], axis=1), (k.squeeze(slot), v.squeeze(slot)),
             np.stack([k, v], axis=1).squeeze(slot + 1)]
    refs = [podcheck.reference(podcheck.batch_decode_case(q, form, **args)) for form in forms]
    for r in refs[1:]:
        assert (r["out_d"] == refs[0]["out_d"]).all() and (r["lse_d"] == refs[0]["lse_d"]).all()
    with pytest.raises(ValueError, match="give one of indptr, kv_indptr"):
        podcheck.batch_decode_case(q, forms[0], kv_indptr=ind, **args)
    with pytest.raises(ValueError, match="page_size=4 but paged_kv_cache has pages of 1 slots"):
        podcheck.batch_decode_case(q, forms[0], page_size=4, **args)
