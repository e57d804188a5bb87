"""podcheck from Python: POD attention judged by podcheck's own reference, policies and diagnosis.

The C++ code does the work (the extension _podcheck: the same functions the CLI calls); this package adds the
FlashInfer-shaped case constructors (podcheck.flashinfer) and the pytest-facing assertion. docs/PYTHON.md.

    case = podcheck.pod_case(q_p, k_p, v_p, q_d, kv_cache, kv_indptr=..., kv_indices=...,
                             kv_last_page_len=..., causal_p=True)
    podcheck.reference(case)                    # {'out_p': float64 [rows, H, D], 'lse_p': ..., ...}
    podcheck.judge(case, out_p=o_p, out_d=o_d)  # a Verdict; repr() is what `podcheck replay` prints
    podcheck.assert_pod_close(case, out_p=o_p, out_d=o_d)   # AssertionError: the report + a trace to replay
"""

import os

from . import _podcheck
from ._podcheck import (Case, FormatError, GpuUnavailable, InvalidCaseError, Location, Metrics, Side, Tensor, Trace,
                        Verdict, reference, run_kernel, set_threads, threads)
from .flashinfer import batch_decode_case, batch_pod_case, batch_prefill_case, pod_case, single_prefill_case

__all__ = [
    "Case", "Side", "Tensor", "Trace", "Verdict", "Metrics", "Location", "InvalidCaseError", "FormatError",
    "GpuUnavailable", "pod_case", "batch_pod_case", "single_prefill_case", "batch_prefill_case",
    "batch_decode_case", "tensor", "reference", "judge", "assert_pod_close", "write_trace", "read_trace",
    "list_trace_cases", "write_fixtures", "run_kernel", "set_threads", "threads", "default_failures_dir",
]


def tensor(array, dtype=None):
    """A podcheck.Tensor, bits kept. Raw-bits numpy arrays need dtype ('bfloat16' for uint16 bits,
    'float8_e4m3fn' / 'float8_e5m2' for uint8 bits)."""
    return Tensor(array, dtype)


def _trace(case, out_p, out_d, lse_p, lse_d, run_status, run_message, provenance=None):
    if isinstance(case, Trace):
        if any(x is not None for x in (out_p, out_d, lse_p, lse_d)) or run_status != "ran" or provenance:
            raise TypeError("a Trace already holds its outputs and run record: give either a Trace or a Case "
                            "with outputs")
        return case
    return Trace(case, out_p, out_d, lse_p, lse_d, run_status=run_status, run_message=run_message,
                 provenance=provenance)


def judge(case, out_p=None, out_d=None, lse_p=None, lse_d=None, *, run_status="ran", run_message="",
          policy="calibrated", profile="intended", require_outputs=None, diagnose=True):
    """podcheck's verdict on what a kernel wrote for a case (validation::judge, as `podcheck replay` judges a
    trace). case: a Case (outputs as arguments) or a Trace (e.g. from run_kernel). Outputs as the kernel stored
    them: out_* in the case's output dtype [rows, H, D], lse_* float32 [rows, H] in the case's LSE base; any
    subset (an output not given is not checked — never a pass — unless require_outputs names it, then the case
    is incorrect). run_status: ran | not-supported | launch-failed | guards-overwritten. policy: calibrated |
    flashinfer | flashinfer-bench; profile: intended | flashinfer | flashinfer-pod; require_outputs: a list or
    'out_p,lse_d', 'all', 'out', 'lse'."""
    return _podcheck._judge(_trace(case, out_p, out_d, lse_p, lse_d, run_status, run_message), policy, profile,
                            require_outputs, diagnose, None)


def default_failures_dir():
    """Where assert_pod_close leaves failure data: $PODCHECK_FAILURES, else ./podcheck-failures."""
    return os.environ.get("PODCHECK_FAILURES") or "podcheck-failures"


def assert_pod_close(case, out_p=None, out_d=None, lse_p=None, lse_d=None, *, run_status="ran", run_message="",
                     policy="calibrated", profile="intended", require_outputs=None, failures_dir=None,
                     provenance=None):
    """judge(), and unless the verdict is a pass: AssertionError whose message is podcheck's report of the case
    (its console line and details, as `podcheck replay` prints them: metrics, worst location, diagnosis), a
    command to reproduce it, and the trace written for it (inputs, outputs, run record, reference and diff/)
    under failures_dir (default: $PODCHECK_FAILURES, else ./podcheck-failures). Returns the Verdict."""
    __tracebackhide__ = True  # pytest: the failure is reported at the caller's line
    trace = _trace(case, out_p, out_d, lse_p, lse_d, run_status, run_message, provenance)
    folder = os.fspath(failures_dir) if failures_dir is not None else default_failures_dir()
    verdict = _podcheck._judge(trace, policy, profile, require_outputs, True, folder)
    if not verdict.passed:
        raise AssertionError(verdict.report)
    return verdict


def write_trace(path, cases_and_outputs, provenance=None, *, force=False):
    """Writes a trace file with the CLI's writer (readable by `podcheck replay`, h5py, read_trace).
    cases_and_outputs: a Trace, a (case, outputs) pair with outputs a dict of out_p / out_d / lse_p / lse_d
    (and optionally run_status, run_message), or a list of these. provenance: a dict (kernel_name,
    kernel_version, device, driver, date, source, scheduling: {fact: value}) for the pairs. An existing file is
    refused unless force."""
    items = cases_and_outputs
    if isinstance(items, Trace) or (isinstance(items, tuple) and len(items) == 2 and isinstance(items[0], Case)):
        items = [items]
    traces = []
    for item in items:
        if isinstance(item, Trace):
            traces.append(item)
            continue
        case, outputs = item
        outputs = dict(outputs)
        run_status = outputs.pop("run_status", "ran")
        run_message = outputs.pop("run_message", "")
        unknown = set(outputs) - {"out_p", "out_d", "lse_p", "lse_d"}
        if unknown:
            raise ValueError(f"case '{case.id}': unknown outputs {sorted(unknown)} (out_p, out_d, lse_p, lse_d, "
                             "run_status, run_message)")
        traces.append(Trace(case, **outputs, run_status=run_status, run_message=run_message,
                            provenance=provenance))
    _podcheck._write_traces(os.fspath(path), traces, force)


def read_trace(path, case=None):
    """Every case of a trace file as a list of Trace (or the Trace of case=ID), through the CLI's reader and its
    checks; FormatError (a ValueError) names the file, the case and the dataset."""
    return _podcheck.read_trace(os.fspath(path), case)


def list_trace_cases(path):
    """The case ids of a trace file."""
    return _podcheck.list_trace_cases(os.fspath(path))


def write_fixtures(path, cases, *, force=False):
    """Cases (inputs only) as a fixture file, e.g. for `podcheck run --fixtures F.h5`."""
    _podcheck.write_fixtures(os.fspath(path), list(cases), force=force)
