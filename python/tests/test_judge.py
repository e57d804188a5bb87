"""podcheck.judge on attention computed by an independent numpy float64 implementation (numpy_attention.py):
correct outputs pass; planted faults (wrong head, top-left causal, LSE in base e, unwritten NaN) fail with the
diagnosis that names them; and every verdict is the one `podcheck replay` gives on the same data written to a
trace, field for field (status, verdict, metrics, worst location, diagnosis, console line)."""

import pytest

import podcheck
from problems import BUILDERS, DIAGNOSIS, FAULTS

CORRECT = list(BUILDERS)
PLANTED = [(name, fault) for name in BUILDERS for fault in FAULTS[name]]
# Fields of a case's JSON that depend on where it was judged from, not on the verdict; the case attributes and
# heat maps are what a report job adds beside the verdict (app/report_maps.hpp), not part of it.
CONTEXT = {"seconds", "source", "reproduce", "artifact", "case", "heat_maps", "heat_maps_note"}


def same_as_replay(verdict, problem, tmp_path, replay, *options, **trace_args):
    """The CLI's verdict on the same case and outputs, written to a trace: equal to `verdict` in every field
    but the context ones."""
    path = tmp_path / f"{problem.case.id}.h5"
    podcheck.write_trace(path, (problem.case, dict(problem.outputs, **trace_args)))
    cases, done = replay(path, *options)
    assert len(cases) == 1
    mine = {k: v for k, v in verdict.json.items() if k not in CONTEXT}
    theirs = {k: v for k, v in cases[0].items() if k not in CONTEXT}
    assert mine == theirs, done.stdout
    return cases[0]


@pytest.mark.parametrize("name", CORRECT)
def test_correct_outputs_pass(name, tmp_path, replay):
    p = BUILDERS[name]()
    v = podcheck.judge(p.case, **p.outputs)
    assert (v.status, v.verdict, v.passed) == ("passed", "ok", True), repr(v)
    assert v.not_checked == [] and v.diagnosis == []
    assert set(v.bound_shares) == set(p.outputs) and max(v.bound_shares.values()) < 1
    same_as_replay(v, p, tmp_path, replay)


@pytest.mark.parametrize("name,fault", PLANTED)
def test_planted_fault_is_diagnosed(name, fault, tmp_path, replay):
    p = BUILDERS[name](fault=fault)
    v = podcheck.judge(p.case, **p.outputs)
    assert (v.status, v.verdict, v.passed) == ("incorrect", "fail", False), repr(v)
    assert any(DIAGNOSIS[fault] in d for d in v.diagnosis), repr(v)
    assert v.worst is not None and v.metrics[v.headline].failed
    assert repr(v).splitlines()[0] == v.line and v.line.startswith("[FAIL]")
    same_as_replay(v, p, tmp_path, replay)


@pytest.mark.parametrize("profile", ["flashinfer", "flashinfer-pod"])
@pytest.mark.parametrize("policy", ["flashinfer", "flashinfer-bench"])
def test_other_policies_and_profiles_as_replay(policy, profile, tmp_path, replay):
    p = BUILDERS["single_pod"](fault="unwritten")
    v = podcheck.judge(p.case, **p.outputs, policy=policy, profile=profile)
    assert (v.policy, v.profile, v.status) == (policy, profile, "incorrect")
    same_as_replay(v, p, tmp_path, replay, "--policy", policy, "--profile", profile)


def test_outputs_not_given_are_not_checked_and_can_be_required(tmp_path, replay):
    p = BUILDERS["single_pod"]()
    v = podcheck.judge(p.case, out_p=p.outputs["out_p"])
    assert v.status == "passed" and v.not_checked == ["lse_p", "out_d", "lse_d"]
    assert "(not checked: lse_p, out_d, lse_d)" in v.line
    v = podcheck.judge(p.case, out_p=p.outputs["out_p"], require_outputs="all")
    assert v.status == "incorrect" and "required output(s) not recorded: lse_p, out_d, lse_d" in v.message
    v2 = podcheck.judge(p.case, out_p=p.outputs["out_p"], require_outputs=["out_p", "lse_p", "out_d", "lse_d"])
    assert v2.json == {**v.json, "seconds": v2.json["seconds"]}
    p.outputs = dict(out_p=p.outputs["out_p"])
    same_as_replay(v, p, tmp_path, replay, "--require-outputs", "all")
    v = podcheck.judge(p.case)
    assert (v.status, v.verdict) == ("skipped", "skip")


@pytest.mark.parametrize("run_status,status", [("launch-failed", "launch-failed"), ("guards-overwritten", "incorrect"),
                                               ("not-supported", "invalid-case")])
def test_run_record_decides_first(run_status, status, tmp_path, replay):
    p = BUILDERS["batch_pod"]()
    v = podcheck.judge(p.case, **p.outputs, run_status=run_status, run_message="out_d: 3 guard elements overwritten")
    assert (v.status, v.run_status, v.verdict) == (status, run_status, "fail"), repr(v)
    if run_status == "guards-overwritten":
        assert v.diagnosis[0].startswith("out-of-bounds writes")
    same_as_replay(v, p, tmp_path, replay, run_status=run_status, run_message="out_d: 3 guard elements overwritten")


def test_assert_pod_close_passes_and_returns_the_verdict(tmp_path):
    p = BUILDERS["batch_pod"]()
    v = podcheck.assert_pod_close(p.case, **p.outputs, failures_dir=tmp_path)
    assert v.passed and list(tmp_path.iterdir()) == []


def test_assert_pod_close_failure_reports_and_leaves_a_trace_to_replay(tmp_path, replay, monkeypatch):
    monkeypatch.setenv("PODCHECK_FAILURES", str(tmp_path / "failures"))
    p = BUILDERS["single_pod"](fault="wrong_head")
    with pytest.raises(AssertionError) as info:
        podcheck.assert_pod_close(p.case, **p.outputs)
    message = str(info.value)
    trace = tmp_path / "failures" / "single_pod_wrong_head__intended.h5"
    assert trace.is_file() and (tmp_path / "failures" / "single_pod_wrong_head__intended.h5.json").is_file()
    lines = message.splitlines()
    assert lines[0].startswith("[FAIL]  single_pod_wrong_head [intended]")
    assert f"  diagnosis: {DIAGNOSIS['wrong_head']}" in lines
    assert f"  reproduce: podcheck replay '{trace}' --case 'single_pod_wrong_head' --profile intended" in lines
    assert lines[-1] == f"  data: {trace}"
    # The trace replays to the same verdict, and is itself what podcheck writes for a failure (inputs,
    # outputs, run record, reference and diff).
    cases, done = replay(trace)
    assert cases[0]["line"] == lines[0] and cases[0]["diagnosis"] == podcheck.judge(p.case, **p.outputs).diagnosis
    back = podcheck.read_trace(trace, "single_pod_wrong_head")
    assert back.run_status == "ran" and (back.out_d.numpy() == p.outputs["out_d"]).all()


def test_assert_pod_close_refuses_a_skip(tmp_path):
    p = BUILDERS["single_prefill"]()
    with pytest.raises(AssertionError, match=r"\[SKIP\].*no recorded output to check"):
        podcheck.assert_pod_close(p.case, failures_dir=tmp_path)
