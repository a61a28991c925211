"""Regenerate numtorch/testing/_cupy_standin/cupy_names.json: what the installed CuPy offers.

The CPU stand-in for CuPy supports exactly the functions, ndarray methods and ufunc methods
that CuPy has. This script reads them from a real ``cupy`` wheel, which imports without a
GPU. Install it somewhere apart from the environment numtorch's tests run in (numtorch would
otherwise find it and report a CUDA build without a GPU):

    pip download cupy-cuda12x --no-deps -d /tmp/whl
    pip install --no-deps --target /tmp/cupy /tmp/whl/cupy*.whl fastrlock
    PYTHONPATH=/tmp/cupy python scripts/gen_cupy_names.py

A submodule whose import needs a CUDA library absent here (cupyx.scipy.linalg needs cuBLAS)
is read from its ``__init__.py`` source instead.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pathlib
import re
import sys

import numpy as np

MODULES = [
    "cupy",
    "cupy.linalg",
    "cupy.fft",
    "cupy.random",
    "cupy.lib",
    "cupy.lib.stride_tricks",
    "cupyx",
    "cupyx.scipy",
    "cupyx.scipy.special",
    "cupyx.scipy.linalg",
    "cupyx.scipy.fft",
    "cupyx.scipy.sparse",
    "cupyx.scipy.signal",
    "cupyx.scipy.ndimage",
    "cupyx.scipy.stats",
]
CLASSES = {
    "ndarray": "cupy.ndarray",
    "Generator": "cupy.random.Generator",
    "RandomState": "cupy.random.RandomState",
}
OUT = pathlib.Path(__file__).parent.parent / "numtorch/testing/_cupy_standin/cupy_names.json"


def _probe(method, call) -> bool:
    """Whether a ufunc method is implemented: CuPy raises NotImplementedError before it
    touches the GPU when it is not (a NumPy operand fails later, for other reasons)."""
    try:
        call(method)
    except NotImplementedError:
        return False
    except Exception:
        return True
    return True


def _ufunc(u) -> dict:
    z = np.zeros(2)
    probes = {
        "reduce": lambda m: m(z),
        "accumulate": lambda m: m(z),
        "reduceat": lambda m: m(z, [0]),
        "at": lambda m: m(z, [0], *([1.0] * (u.nin - 1))),
        "outer": lambda m: None,
    }
    methods = sorted(m for m, call in probes.items() if _probe(getattr(u, m), call))
    return {"nin": u.nin, "nout": u.nout, "types": list(u.types), "methods": methods}


def _params(obj) -> str | None:
    """A callable's parameters as a ``def`` would list them, every default None (CuPy's
    Cython methods give theirs in the first line of the docstring)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        first = (getattr(obj, "__doc__", None) or "").split("\n")[0]
        m = re.match(r"^[\w.]+\((.*)\)", first)
        if not m:
            return None
        out = []
        for p in filter(None, (q.strip() for q in m.group(1).split(","))):
            name, eq, _ = p.partition("=")
            name = name.split()[-1]
            if name != "self":
                out.append(name + ("=None" if eq else ""))
        text = ", ".join(out)
    else:
        out, star = [], False
        for p in sig.parameters.values():
            default = "" if p.default is p.empty else "=None"
            if p.kind is p.VAR_POSITIONAL:
                out.append(f"*{p.name}")
                star = True
            elif p.kind is p.VAR_KEYWORD:
                out.append(f"**{p.name}")
            else:
                if p.kind is p.KEYWORD_ONLY and not star:
                    out.append("*")
                    star = True
                out.append(p.name + default)
        text = ", ".join(a for a in out if a != "self")
    try:
        compile(f"def f({text}): pass", "<sig>", "exec")
    except SyntaxError:
        return None
    return text


def _kind(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "constant"


def _from_source(name: str) -> dict:
    """The public names a package's ``__init__.py`` binds, read without importing it."""
    spec = importlib.util.find_spec(name)
    tree = ast.parse(pathlib.Path(spec.origin).read_text())
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = "function"
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = "function"
    return {k: v for k, v in names.items() if not k.startswith("_") and k != "*"}


def main() -> None:
    import cupy

    modules, ufuncs, signatures = {}, {}, {}
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            modules[name] = _from_source(name)
            continue
        names = {}
        for attr in dir(mod):
            if attr.startswith("_"):
                continue
            obj = getattr(mod, attr)
            if type(obj).__name__ == "ufunc" and hasattr(obj, "types"):
                ufuncs[f"{name}.{attr}"] = _ufunc(obj)
                names[attr] = "ufunc"
            else:
                names[attr] = _kind(obj)
                if names[attr] == "function":
                    signatures[f"{name}.{attr}"] = _params(obj)
        modules[name] = names
    classes = {}
    for key, path in CLASSES.items():
        mod, _, cls = path.rpartition(".")
        obj = getattr(importlib.import_module(mod), cls)
        classes[key] = sorted(a for a in dir(obj) if not a.startswith("_") or a.endswith("__"))
        for a in classes[key]:
            if not a.startswith("_") and callable(getattr(obj, a)):
                signatures[f"{path}.{a}"] = _params(getattr(obj, a))
    data = {
        "version": cupy.__version__,
        "modules": modules,
        "ufuncs": ufuncs,
        "classes": classes,
        "signatures": signatures,
    }
    text = json.dumps(data, indent=1, sort_keys=True)
    OUT.write_text(text)
    print(f"wrote {OUT} ({len(ufuncs)} ufuncs, CuPy {cupy.__version__})", file=sys.stderr)


if __name__ == "__main__":
    main()
