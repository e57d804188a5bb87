"""Trace files from Python go through the CLI's writer and readers: what write_trace writes, read_trace and
`podcheck replay` read back bit for bit; what the reader refuses, it refuses with the message the CLI prints."""

import h5py
import numpy as np
import pytest

import podcheck
from problems import BUILDERS


def test_write_read_round_trip_keeps_every_bit(tmp_path):
    a, b = BUILDERS["single_pod"](), BUILDERS["batch_decode"](fault="unwritten")
    prov = dict(kernel_name="numpy", kernel_version="test", device="cpu", date="2026-12-01T00:00:00Z",
                scheduling=dict(tile=64))
    path = tmp_path / "t.h5"
    podcheck.write_trace(path, [(a.case, a.outputs), (b.case, dict(b.outputs, run_status="guards-overwritten",
                                                                   run_message="out_d: 1 guard element"))],
                         provenance=prov)
    assert podcheck.list_trace_cases(path) == sorted([a.case.id, b.case.id])
    back = {t.case.id: t for t in podcheck.read_trace(path)}
    ta, tb = back[a.case.id], back[b.case.id]
    for name, x in a.outputs.items():
        assert (getattr(ta, name).numpy().view(np.uint8) == x.view(np.uint8)).all(), name
    assert (tb.out_d.numpy() == b.outputs["out_d"].numpy()).all() and tb.out_d.dtype == "bfloat16"
    assert (tb.run_status, tb.run_message) == ("guards-overwritten", "out_d: 1 guard element")
    assert ta.provenance["kernel_name"] == "numpy" and ta.provenance["scheduling"] == {"tile": "64"}
    assert (ta.case.decode.kv.numpy().view(np.uint16) == a.case.decode.kv.numpy().view(np.uint16)).all()  # NaN pages too
    # the verdict on what was read is the verdict on what was written
    assert podcheck.judge(ta).json["metrics"] == podcheck.judge(a.case, **a.outputs).json["metrics"]
    with pytest.raises(podcheck.FormatError, match="it exists"):
        podcheck.write_trace(path, (a.case, a.outputs))
    podcheck.write_trace(path, (a.case, a.outputs), force=True)


def test_expectations_are_written_and_read(tmp_path, replay):
    p = BUILDERS["batch_prefill"](fault="lse_e")
    t = podcheck.Trace(p.case, **p.outputs, expected=[dict(profile="intended", status="incorrect",
                                                           diagnosis="LSE in base e", reason="planted")])
    path = tmp_path / "x.h5"
    podcheck.write_trace(path, t)
    assert podcheck.read_trace(path)[0].expected == [dict(profile="intended", status="incorrect",
                                                          diagnosis="LSE in base e", reason="planted")]
    cases, _ = replay(path)
    assert cases[0]["verdict"] == "xfail"


def test_reader_refuses_what_the_cli_refuses_with_the_same_message(tmp_path, replay):
    p = BUILDERS["batch_pod"]()
    path = tmp_path / "bad.h5"
    podcheck.write_trace(path, (p.case, p.outputs))
    with h5py.File(path, "r+") as f:
        f[f"cases/{p.case.id}/decode/kv_indices"][0] = 99
    with pytest.raises(podcheck.FormatError) as info:
        podcheck.read_trace(path)
    assert "dataset 'decode/kv_indices': page index 99 at position 0 out of range" in str(info.value)
    cases, done = replay(path)
    assert cases[0]["status"] == "invalid-case" and done.returncode == 2  # an input that could not be read
    assert cases[0]["message"] == str(info.value)


def test_a_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(podcheck.FormatError, match="nope.h5"):
        podcheck.read_trace(tmp_path / "nope.h5")


def test_fixtures_for_podcheck_run(tmp_path, cli):
    import subprocess
    p = BUILDERS["single_pod"]()
    path = tmp_path / "f.h5"
    podcheck.write_fixtures(path, [p.case])
    done = subprocess.run([str(cli), "inspect", str(path), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert p.case.id in done.stdout


def test_run_kernel_names_why_there_is_no_gpu():
    try:
        trace = podcheck.run_kernel(BUILDERS["single_pod"]().case)
    except podcheck.GpuUnavailable as e:
        assert "podcheck.run_kernel" in str(e) and ("needs a GPU" in str(e) or "needs the GPU" in str(e))
    else:  # a GPU machine: the run went through the kernel
        assert trace.run_status in ("ran", "not-supported")
