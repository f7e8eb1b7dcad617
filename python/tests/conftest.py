"""Shared fixtures: the repository, the `brisk` CLI, and a small experiment
run once by the CLI and once from Python."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import brisk

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments"


def cli_binary() -> Path:
    """The `brisk` CLI: $BRISK_CLI, else target/{release,debug}/brisk of
    $CARGO_TARGET_DIR or the repository. Missing: the test fails naming it."""
    if os.environ.get("BRISK_CLI"):
        path = Path(os.environ["BRISK_CLI"])
        if not path.is_file():
            pytest.fail(f"BRISK_CLI={path} is not a file: build it with `cargo build -p brisk-lab`")
        return path
    roots = [Path(os.environ["CARGO_TARGET_DIR"])] if os.environ.get("CARGO_TARGET_DIR") else []
    roots.append(REPO / "target")
    for root in roots:
        for profile in ("release", "debug"):
            if (root / profile / "brisk").is_file():
                return root / profile / "brisk"
    pytest.fail(
        "the `brisk` CLI binary is missing (looked in "
        + ", ".join(str(r / p / "brisk") for r in roots for p in ("release", "debug"))
        + "): build it with `cargo build -p brisk-lab` or set BRISK_CLI"
    )


def small_fig02() -> dict:
    """Seed 000's Fig. 2 with one replication per loss position (121 runs)."""
    with open(EXPERIMENTS / "seed000-fig02.toml", "rb") as f:
        spec = tomllib.load(f)
    spec["replications"] = 1
    return spec


@pytest.fixture(scope="session")
def cli() -> Path:
    return cli_binary()


@pytest.fixture(scope="session")
def small_file(tmp_path_factory) -> Path:
    """The small experiment as a TOML file."""
    path = tmp_path_factory.mktemp("exp") / "small-fig02.toml"
    path.write_text(brisk._brisk.json_to_toml(__import__("json").dumps(small_fig02())))
    return path


@pytest.fixture(scope="session")
def cli_report(cli, small_file, tmp_path_factory) -> Path:
    """`brisk run small-fig02.toml --out DIR --jobs 2`: its report directory."""
    out = tmp_path_factory.mktemp("cli-report")
    proc = subprocess.run(
        [str(cli), "run", str(small_file), "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out


@pytest.fixture(scope="session")
def py_result(small_file):
    """The same experiment run from Python."""
    return brisk.Experiment.load(small_file).run(jobs=2, progress=False)
