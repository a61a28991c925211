"""Run unmodified third-party PyTorch libraries' own test suites on numtorch.

Each library is installed from PyPI with ``--no-deps`` plus its non-torch dependencies (a
torch dependency is never installed beside the oracle pin), and its suite runs under
``python -m numtorch run -m pytest``, so every ``import torch`` in the library and its tests
resolves to numtorch. ``--oracle`` runs the same suites on the installed PyTorch instead.

    python third_party/run.py --install            # pip install the pinned libraries
    python third_party/run.py [--oracle] [NAME...] # run, print passed/failed/skipped per suite
    python third_party/run.py --check              # ...and fail if a count falls below expected.json

Suites whose tests are not shipped on PyPI (torchdiffeq, pytorch-minimize) are vendored
here from the release's commit with the library's licence; see README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

HERE = pathlib.Path(__file__).resolve().parent


def site_path(package: str) -> str:
    """Where an installed package's directory lies (its shipped tests live inside)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise SystemExit(f"{package} is not installed: run third_party/run.py --install")
    return str(pathlib.Path(spec.origin).parent)


@dataclass(frozen=True)
class Suite:
    """One library's suite: what to install, which tests to run, and how."""

    name: str
    requirement: str  # pinned, installed with --no-deps
    deps: tuple[str, ...] = ()  # its non-torch dependencies
    package: str | None = None  # tests shipped inside this installed package...
    tests: tuple[str, ...] = ()  # ...at these paths under it, or under third_party/<name>/
    pytest_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    timeout_s: int = 1800
    serial: bool = False  # run in one process whatever -n says

    def test_paths(self) -> list[str]:
        root = site_path(self.package) if self.package else str(HERE / self.name)
        return [os.path.join(root, t) for t in self.tests]


SUITES = (
    Suite(
        "opacus",
        "opacus==1.6.0",
        deps=("opt-einsum>=3.3",),
        package="opacus",
        tests=(
            "tests/grad_samples",
            "tests/per_sample_gradients_utils_test.py",
            "tests/privacy_engine_test.py",
            "tests/accountants_test.py",
            "tests/accounting_noise_multiplier_test.py",
            "tests/dpdataloader_test.py",
            "tests/poisson_test.py",
        ),
        # privacy_engine_test imports torchvision, which is not installed (its wheels do not
        # load against the oracle's torch either): one collection error, the rest still run
        pytest_args=("--continue-on-collection-errors",),
    ),
    Suite(
        "torchdiffeq",
        "torchdiffeq==0.2.5",
        tests=("tests",),
        pytest_args=("-o", "python_files=*_tests.py"),
        timeout_s=2700,
        serial=True,  # its subTests carry dtypes, which xdist cannot send between processes
    ),
    Suite(
        "einops",
        "einops==0.8.2",
        package="einops",
        tests=("tests",),
        env={"EINOPS_TEST_BACKENDS": "torch"},
    ),
    Suite(
        "tensorly",
        "tensorly==0.10.0",
        package="tensorly",
        tests=(".",),
        env={"TENSORLY_BACKEND": "pytorch"},  # the default backend; its tests use it
        timeout_s=1800,
    ),
    Suite("pytorch_minimize", "pytorch-minimize==0.1.0", tests=("tests",)),
    Suite("entmax", "entmax==1.3", package="entmax", tests=(".",)),
)


def install() -> None:
    reqs = [s.requirement for s in SUITES] + [d for s in SUITES for d in s.deps]
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *reqs], check=True)


def counts(junit: pathlib.Path) -> dict[str, int]:
    """passed/failed/errors/skipped from a pytest junit-xml report."""
    out = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    if not junit.exists():
        return out
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        if "failure" in kinds:
            out["failed"] += 1
        elif "error" in kinds:
            out["errors"] += 1
        elif "skipped" in kinds:
            out["skipped"] += 1
        else:
            out["passed"] += 1
    return out


def run_suite(suite: Suite, oracle: bool, workers: int, log_dir: pathlib.Path) -> dict:
    junit = log_dir / f"{suite.name}{'-torch' if oracle else ''}.xml"
    runner = [sys.executable, "-m", "pytest"]
    if not oracle:
        runner = [sys.executable, "-m", "numtorch", "run", "-m", "pytest"]
    cmd = [
        *runner,
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "skips",  # third_party/skips.py: the tests skipped on numtorch, with reasons
        "-c",
        str(HERE / "pytest.ini"),
        "--rootdir",
        str(HERE),
        f"--junitxml={junit}",
        *(["-n", str(workers)] if workers > 1 and not suite.serial else []),
        *suite.pytest_args,
        *suite.test_paths(),
    ]
    # the checkout's numtorch first (not whichever one is installed), then skips.py
    env = {**os.environ, **suite.env, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    if oracle:
        env["NUMTORCH_THIRD_PARTY_ORACLE"] = "1"  # skips.py then skips only what torch can't run
    start = time.monotonic()
    log = open(log_dir / f"{junit.stem}.log", "w")
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=tempfile.gettempdir(),
    )
    try:
        proc.wait(timeout=suite.timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: xdist workers too
        proc.wait()
    log.close()
    return {**counts(junit), "seconds": round(time.monotonic() - start), "rc": proc.returncode}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="suites to run (default: all)")
    parser.add_argument("--install", action="store_true", help="pip install the libraries")
    parser.add_argument("--oracle", action="store_true", help="run on the installed PyTorch")
    parser.add_argument("--check", action="store_true", help="fail below expected.json")
    parser.add_argument("-n", "--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--logs", default=None, help="folder for junit reports and logs")
    args = parser.parse_args(argv)
    if args.install:
        install()
        if not args.names and not args.check:
            return 0
    chosen = [s for s in SUITES if not args.names or s.name in args.names]
    log_dir = pathlib.Path(args.logs or tempfile.mkdtemp(prefix="third_party_"))
    log_dir.mkdir(parents=True, exist_ok=True)
    expected = json.loads((HERE / "expected.json").read_text())
    failed = []
    print(
        f"{'suite':18} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>8} {'s':>6}  "
        f"{'expected':>8} {'torch':>6}"
    )
    for suite in chosen:
        r = run_suite(suite, args.oracle, args.workers, log_dir)
        want = expected.get(suite.name, {})
        print(
            f"{suite.name:18} {r['passed']:7} {r['failed']:7} {r['errors']:7} "
            f"{r['skipped']:8} {r['seconds']:6}  {want.get('numtorch', '-'):>8} "
            f"{want.get('torch', '-'):>6}",
            flush=True,
        )
        if args.check and r["passed"] < want.get("numtorch", 0):
            failed.append(suite.name)
    print(f"logs and junit reports: {log_dir}")
    if failed:
        print("fewer passes than third_party/expected.json:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
