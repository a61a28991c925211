"""PyTorch's tutorials (retold in tests/tutorials/) run unmodified under
``python -m numtorch run``: each exits 0 and prints what the same script prints on the
real torch. Scripts whose output is fully determined compare exactly; the others, whose
numbers come from the random generator (numtorch's stream is not torch's), compare with
every number and address masked, which still checks the texts, reprs and node names."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TUTORIALS = os.path.join(HERE, "tutorials")
TIMEOUT_S = 300

EXACT = ["legacy_names", "data_parallel", "autograd_profiler"]
MASKED = ["buildmodel", "ensembling", "jacobians_hessians"]
SLOW = ["per_sample_grads_functorch", "neural_tangent_kernels"]  # see tutorials/README.md
RUN_SLOW = os.environ.get("NUMTORCH_SLOW_TUTORIALS") == "1"

_NUMBER = re.compile(r"0x[0-9a-f]+|-?\d+(\.\d*)?(e[-+]?\d+)?")


def _run(name: str, *runner: str) -> str:
    """The script's stdout, run by ``python *runner script``; it must exit 0."""
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONWARNINGS="ignore")
    script = os.path.join(TUTORIALS, name + ".py")
    done = subprocess.run(
        [sys.executable, *runner, script],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=env,
        cwd=TUTORIALS,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _masked(text: str) -> str:
    """The text with every number and address replaced and whitespace dropped (a
    tensor's padding and line breaks follow its values' widths)."""
    return "".join(_NUMBER.sub("#", text).split())


@pytest.mark.parametrize("name", EXACT)
def test_deterministic_tutorial_prints_what_torch_prints(name):
    ours = _run(name, "-m", "numtorch", "run")
    assert ours == _run(name)


@pytest.mark.parametrize("name", MASKED + (SLOW if RUN_SLOW else []))
def test_seeded_tutorial_prints_torchs_lines(name):
    ours = _run(name, "-m", "numtorch", "run")
    assert ours.strip()
    assert _masked(ours) == _masked(_run(name))


def test_the_tutorials_directory_is_the_lists():
    scripts = {f[:-3] for f in os.listdir(TUTORIALS) if f.endswith(".py")}
    assert scripts == set(EXACT + MASKED + SLOW)
