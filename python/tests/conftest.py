"""Shared fixtures: the repository's scenarios and the `trainsim` CLI to compare with.

ctest (python/CMakeLists.txt) sets TRAINSIM_SOURCE_DIR and TRAINSIM_BINARY; run by
hand, the source is this checkout and the CLI is build/test/trainsim or `trainsim`
on the PATH; the comparisons with the CLI are skipped without one.
"""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

SOURCE = pathlib.Path(os.environ.get("TRAINSIM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def _cli():
    for candidate in (os.environ.get("TRAINSIM_BINARY"), SOURCE / "build" / "test" / "trainsim",
                      shutil.which("trainsim")):
        if candidate and pathlib.Path(candidate).is_file():
            return str(candidate)
    return None


@pytest.fixture
def source():
    return SOURCE


@pytest.fixture
def cli():
    """Runs the CLI with the arguments given; returns its stdout."""
    binary = _cli()
    if binary is None:
        pytest.skip("no trainsim binary (set TRAINSIM_BINARY)")

    def call(*args):
        done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    return call


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
