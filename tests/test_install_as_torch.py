"""numtorch standing in for torch: install_as_torch's import hook (checked in fresh
interpreters), ``python -m numtorch run``, torch.__version__ / torch.version against
PyTorch's, importlib.metadata, and an unmodified little library trained on both."""

from __future__ import annotations

import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import types

import pytest
import torch
import torch.torch_version
import torch.version
from packaging.version import Version

import numtorch
import numtorch.torch_version
import numtorch.version

ROOT = pathlib.Path(numtorch.__file__).parent.parent
TIMEOUT = 240  # seconds; an interpreter importing numtorch takes seconds on a busy machine


def _python(*args: str, cwd: pathlib.Path | None = None, path: str = "") -> tuple[int, str]:
    """(exit status, stdout + stderr) of a fresh ``python args`` with this numtorch first."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), path) if p))
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    return done.returncode, done.stdout + done.stderr


def _facts(code: str) -> dict:
    """The dict a fresh interpreter prints as JSON on its last line after running code."""
    rc, out = _python("-c", textwrap.dedent(code))
    assert rc == 0, out
    return json.loads(out.strip().splitlines()[-1])


def test_import_torch_gives_numtorchs_own_modules():
    facts = _facts("""
        import json, sys
        import numtorch
        numtorch.install_as_torch()
        numtorch.install_as_torch()  # idempotent
        import torch
        import torch.nn.functional as F
        from torch import nn
        from torch.utils.data import DataLoader
        import torch.distributions.normal
        print(json.dumps({
            "torch": torch is numtorch,
            "F": F is numtorch.nn.functional,
            "sys.modules": sys.modules["torch.nn.functional"] is numtorch.nn.functional,
            "nn": nn is numtorch.nn and sys.modules["torch.nn"] is numtorch.nn,
            "data": DataLoader is numtorch.utils.data.DataLoader,
            "normal": sys.modules["torch.distributions.normal"]
                      is numtorch.distributions.normal,
            "finders": [type(f).__name__ for f in sys.meta_path].count("StandInFinder"),
            "first": type(sys.meta_path[0]).__name__,
            "specs": [numtorch.__spec__.name, numtorch.nn.functional.__spec__.name],
            "tensor": isinstance(torch.ones(2), torch.Tensor),
        }))
    """)
    assert facts == {
        "torch": True,
        "F": True,
        "sys.modules": True,
        "nn": True,
        "data": True,
        "normal": True,
        "finders": 1,
        "first": "StandInFinder",
        "specs": ["numtorch", "numtorch.nn.functional"],
        "tensor": True,
    }


def test_names_numtorch_lacks_are_clear_errors_never_a_real_torch():
    facts = _facts("""
        import json, sys
        import numtorch
        numtorch.install_as_torch()
        import torch
        errors = {}
        for stmt in ["import torch.foo", "import torch.nn.foo", "import functorch.foo",
                     "from torch import foo", "torch.foo"]:
            try:
                exec(stmt)
            except Exception as e:
                errors[stmt] = [type(e).__name__, str(e)]
        errors["real"] = [n for n, m in sys.modules.items()
                          if n.split(".")[0] == "torch" and not m.__name__.startswith("numtorch")]
        print(json.dumps(errors))
    """)
    stand_in = "(numtorch stands in for {} and has no '{}')"
    assert facts == {
        "import torch.foo": [
            "ModuleNotFoundError",
            "No module named 'torch.foo' " + stand_in.format("torch", "numtorch.foo"),
        ],
        "import torch.nn.foo": [
            "ModuleNotFoundError",
            "No module named 'torch.nn.foo' " + stand_in.format("torch", "numtorch.nn.foo"),
        ],
        "import functorch.foo": [
            "ModuleNotFoundError",
            "No module named 'functorch.foo' "
            + stand_in.format("functorch", "numtorch.functorch.foo"),
        ],
        "from torch import foo": [
            "ImportError",
            f"cannot import name 'foo' from 'numtorch' ({numtorch.__file__})",
        ],
        "torch.foo": ["AttributeError", "module 'numtorch' has no attribute 'foo'"],
        "real": [],
    }


def test_install_after_a_real_torch_was_imported_raises():
    rc, out = _python("-c", "import torch, numtorch; numtorch.install_as_torch()")
    assert rc == 1
    assert out.strip().splitlines()[-1] == (
        f"RuntimeError: install_as_torch: 'torch' is already imported (from {torch.__file__}), "
        "so numtorch cannot stand in for torch; call numtorch.install_as_torch() before "
        "anything imports torch"
    )


def test_importlib_metadata_answers_for_torch_only_once_installed():
    facts = _facts("""
        import importlib.metadata as md, json
        import numtorch
        before = md.version("torch")
        numtorch.install_as_torch()
        print(json.dumps({"before": before, "after": md.version("torch"),
                          "name": md.metadata("torch")["Name"],
                          "numtorch": md.version("numtorch")}))
    """)
    assert facts == {
        "before": importlib.metadata.version("torch"),
        "after": "2.13.0+numtorch",
        "name": "torch",
        "numtorch": importlib.metadata.version("numtorch"),
    }


def test_a_bare_import_exposes_the_submodules_torch_does():
    """Every module attribute ``import torch`` gives whose numtorch counterpart exists is an
    attribute of numtorch after a bare ``import numtorch``."""
    theirs = sorted(
        n
        for n in dir(torch)
        if not n.startswith("_") and isinstance(getattr(torch, n), types.ModuleType)
    )
    shared = [
        n
        for n in theirs
        if (ROOT / "numtorch" / n).is_dir() or (ROOT / "numtorch" / f"{n}.py").is_file()
    ]
    assert {"distributions", "testing", "version", "torch_version", "nn", "optim"} <= set(shared)
    facts = _facts(f"""
        import json, types, numtorch
        print(json.dumps([n for n in {shared!r}
                          if not isinstance(getattr(numtorch, n, None), types.ModuleType)]
                         + [n for n in {shared!r} if n not in dir(numtorch)]))
    """)
    assert facts == []


VERSIONS = ["2.13.0", "2.13", "2.14", "1.13", "2.0", "2.13.0a0", "2.13.0rc1", "2.13.0.post1",
            "2.13.0.dev20240101", "2.13.0+cpu", "2.13.0+numtorch", "2.13.0+numtorch.1", "1!0.1",
            "2.13.0-1", "abc", ""]  # fmt: skip
OTHERS = [*VERSIONS, (2, 0), (2, 13), (2, 13, 0), [3], 5, None]
COMPARISONS = ["__gt__", "__lt__", "__eq__", "__ge__", "__le__", "__ne__"]


@pytest.mark.parametrize("method", COMPARISONS)
@pytest.mark.parametrize("version", VERSIONS)
def test_torch_version_compares_as_pytorchs(version, method):
    def outcome(cls):
        results = []
        for other in OTHERS:
            try:
                results.append(getattr(cls(version), method)(other))
            except Exception as e:
                results.append(type(e).__name__)
        return results

    assert outcome(numtorch.torch_version.TorchVersion) == outcome(torch.torch_version.TorchVersion)


@pytest.mark.parametrize("other", ["2.0", "2.13.0", "2.13.0+cpu", "2.13.0+zzz", "2.14", "3"])
def test_torch_version_compares_with_packaging_versions(other):
    """As packaging orders the two (PyTorch's own TorchVersion raises TypeError here: it
    compares through its vendored copy of packaging)."""
    ours, theirs = numtorch.__version__, Version(other)
    mine = Version(str(ours))
    assert [ours > theirs, ours < theirs, ours == theirs, ours >= theirs, ours <= theirs] == [
        mine > theirs,
        mine < theirs,
        mine == theirs,
        mine >= theirs,
        mine <= theirs,
    ]


def test_version_module_and_dunder_version_read_as_pytorchs():
    assert type(numtorch.__version__) is numtorch.torch_version.TorchVersion
    assert numtorch.__version__ == "2.13.0+numtorch" and str(numtorch.__version__) == (
        "2.13.0+numtorch"
    )
    assert numtorch.__version__ >= (2, 0) and numtorch.__version__ >= "1.13"
    assert Version(numtorch.__version__).release == Version(torch.__version__).release
    assert hash(numtorch.__version__) == hash("2.13.0+numtorch")
    assert numtorch.version.__all__ == torch.version.__all__
    assert type(numtorch.version.__version__) is str
    for name in ("debug", "cuda", "hip", "rocm", "xpu"):
        assert getattr(numtorch.version, name) == getattr(torch.version, name), name
    assert isinstance(numtorch.version.git_version, str)
    assert numtorch.torch_version.__all__ == torch.torch_version.__all__


PROGRAM = """\
import sys
import torch
print(repr(__name__), sys.argv[1:], sys.path[0], torch.__name__, torch.__version__)
if sys.argv[1:2] == ["boom"]:
    raise ValueError("boom from the program")
sys.exit(int(sys.argv[1]))
"""


def test_run_a_script_as_python_would(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    rc, out = _python("-m", "numtorch", "run", "prog.py", "3", "--flag", cwd=tmp_path)
    assert rc == 3
    assert out.strip() == f"'__main__' ['3', '--flag'] {tmp_path} numtorch 2.13.0+numtorch"
    rc, out = _python("-m", "numtorch", "run", str(tmp_path / "prog.py"), "boom")
    assert rc == 1
    assert out.strip().splitlines()[-1] == "ValueError: boom from the program"


def test_run_gives_the_script_the_absolute_file_python_gives(tmp_path):
    (tmp_path / "prog.py").write_text("print(__file__)")
    for runner in (("-m", "numtorch", "run"), ()):
        rc, out = _python(*runner, "prog.py", cwd=tmp_path)
        assert (rc, out.strip()) == (0, str(tmp_path / "prog.py"))


def test_run_a_module_as_python_dash_m_would(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    rc, out = _python("-m", "numtorch", "run", "-m", "prog", "4", cwd=tmp_path, path=str(tmp_path))
    assert rc == 4
    assert out.strip() == f"'__main__' ['4'] {tmp_path} numtorch 2.13.0+numtorch"


CHILDREN = """\
import multiprocessing as mp
import subprocess
import sys


def name(_):
    import torch

    return torch.__name__


if __name__ == "__main__":
    child = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.__name__)"],
        capture_output=True, text=True, check=True,
    )
    with mp.get_context("spawn").Pool(1) as pool:
        spawned = pool.map(name, [0])[0]
    print(child.stdout.strip(), spawned)
"""


def test_processes_a_run_program_starts_stand_in_too(tmp_path):
    (tmp_path / "prog.py").write_text(CHILDREN)
    rc, out = _python("-m", "numtorch", "run", "prog.py", cwd=tmp_path)
    assert (rc, out.strip()) == (0, "numtorch numtorch")
    rc, out = _python("prog.py", cwd=tmp_path)  # without run: the real torch, as before
    assert (rc, out.strip()) == (0, "torch torch")


@pytest.mark.parametrize("args", [[], ["run"], ["run", "-m"], ["go", "x.py"]])
def test_run_without_a_program_prints_the_usage(args):
    rc, out = _python("-m", "numtorch", *args)
    assert (rc, out) == (2, "usage: python -m numtorch run (script.py | -m module) [args ...]\n")


FAKE_LIBRARY = """\
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

assert torch.__version__ >= "2.0", torch.__version__


def train(steps):
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 32, dtype=torch.float64).reshape(16, 2)
    y = (x[:, :1] * 0.5 - x[:, 1:] * 2.0).tanh()
    model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.arange(p.numel(), dtype=torch.float64).reshape(p.shape).sin() * 0.5 + i)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(steps):
        for xb, yb in DataLoader(TensorDataset(x, y), batch_size=8):
            assert isinstance(xb, torch.Tensor)
            opt.zero_grad()
            loss = F.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses
"""


def test_an_unmodified_library_trains_as_on_pytorch(tmp_path):
    (tmp_path / "fakelib").mkdir()
    (tmp_path / "fakelib" / "__init__.py").write_text(FAKE_LIBRARY)
    (tmp_path / "main.py").write_text("import json, fakelib\nprint(json.dumps(fakelib.train(3)))\n")
    rc, out = _python("-m", "numtorch", "run", "main.py", cwd=tmp_path)
    assert rc == 0, out
    ours = json.loads(out.strip().splitlines()[-1])
    rc, out = _python("main.py", cwd=tmp_path)  # the same program on PyTorch
    assert rc == 0, out
    theirs = json.loads(out.strip().splitlines()[-1])
    assert len(ours) == 6 and ours[-1] < ours[0]
    assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-12)
