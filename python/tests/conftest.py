"""Shared fixtures of the podcheck Python tests: the CLI of the same build (to compare verdicts with
`podcheck replay` on the same data) and a helper that replays a trace with it and returns its JSON cases."""

import json
import os
import pathlib
import subprocess

import pytest

import podcheck


def _cli_path():
    env = os.environ.get("PODCHECK_CLI")
    if env:
        return pathlib.Path(env)
    # <build>/python/podcheck/__init__.py -> <build>/cli/podcheck
    return pathlib.Path(podcheck.__file__).resolve().parents[2] / "cli" / "podcheck"


@pytest.fixture(scope="session")
def cli():
    path = _cli_path()
    if not path.is_file():
        pytest.fail(f"the podcheck CLI of this build was not found at {path} (set PODCHECK_CLI)")
    return path


@pytest.fixture
def replay(cli, tmp_path):
    """replay(trace, *options) -> (cases of the JSON report, completed process)."""
    count = [0]

    def run(trace, *options):
        count[0] += 1
        report = tmp_path / f"replay-{count[0]}.json"
        done = subprocess.run([str(cli), "replay", str(trace), "--json", str(report), "--no-artifacts", "-q",
                               *options], capture_output=True, text=True)
        assert done.returncode in (0, 1, 2), done.stdout + done.stderr
        assert report.is_file(), done.stdout + done.stderr
        return json.loads(report.read_text())["cases"], done

    return run
