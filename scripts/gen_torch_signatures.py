"""Regenerate numtorch/_core/torch_signatures.json: the signatures PyTorch's Python argument
parser holds for each of its parsed functions and Tensor methods, in its order.

numtorch refuses a bad call with the exception PyTorch's parser raises (``_core/pyargs.py``),
and that text is made from these signatures. They are read from the ``torchgen`` package that
ships with the installed torch (its ``native_functions.yaml`` and the binding generator that
built torch's own parsers), plus the few parsers PyTorch writes by hand, listed below. Run it
with the torch numtorch is tested against:

    python scripts/gen_torch_signatures.py

Each key is the public name (``torch.clamp``, ``Tensor.clamp_``, ``linalg.solve_triangular``,
``nn.functional.softplus``); each value the parser's signature strings, hidden ones marked
``|hidden`` or ``|deprecated`` as PyTorch marks them.
"""

from __future__ import annotations

import json
import pathlib
from collections import defaultdict

import torchgen
from torchgen.gen import parse_native_yaml
from torchgen.packaged.autograd import gen_python_functions as g

OUT = (
    pathlib.Path(__file__).resolve().parent.parent / "numtorch" / "_core" / "torch_signatures.json"
)

# (namespace in the table, is it a method, the binding's predicate, the aten prefix the
# public name drops)
GROUPS = [
    ("Tensor", True, g.is_py_variable_method, ""),
    ("torch", False, g.is_py_torch_function, ""),
    ("nn.functional", False, g.is_py_nn_function, ""),
    ("fft", False, g.is_py_fft_function, "fft_"),
    ("linalg", False, g.is_py_linalg_function, "linalg_"),
    ("special", False, g.is_py_special_function, "special_"),
]

# Parsers PyTorch writes by hand (python_torch_functions_manual.cpp,
# python_variable_methods.cpp), as they read in torch's sources.
MANUAL = {
    "torch.tensor": [
        "tensor(PyObject* data, *, ScalarType dtype=None, Device? device=None, "
        "bool pin_memory=False, bool requires_grad=False, DimnameList? names=None)"
    ],
    "torch.as_tensor": ["as_tensor(PyObject* data, *, ScalarType dtype=None, Device? device=None)"],
    "torch.asarray": [
        "asarray(PyObject* obj, *, ScalarType? dtype=None, Device? device=None, "
        "bool? copy=None, bool requires_grad=False)"
    ],
    "Tensor.to": [
        "to(Device device=None, ScalarType dtype=None, bool non_blocking=False, "
        "bool copy=False, *, MemoryFormat? memory_format=None)",
        "to(ScalarType dtype, bool non_blocking=False, bool copy=False, *, "
        "MemoryFormat? memory_format=None)",
        "to(Tensor tensor, bool non_blocking=False, bool copy=False, *, "
        "MemoryFormat? memory_format=None)",
    ],
    "Tensor.new_tensor": [
        "new_tensor(PyObject* data, *, ScalarType dtype=None, Device? device=None, "
        "bool requires_grad=False)"
    ],
}


# torch's Python methods that hand their arguments on, unchanged, to the parsed method of
# the same name: its refusals are theirs
PYTHON_PASSING_ON = {"Tensor.unflatten"}


def _parsed_by_torch(key: str) -> bool:
    """Whether PyTorch's public ``key`` is its parser's (a builtin), not Python of its own
    (``torch.cdist``, ``Tensor.split``, most of ``nn.functional``) that checks otherwise."""
    import torch
    import torch.nn.functional

    space, _, name = key.rpartition(".")
    owner = {
        "Tensor": torch.Tensor,
        "torch": torch,
        "nn.functional": torch.nn.functional,
        "fft": torch.fft,
        "linalg": torch.linalg,
        "special": torch.special,
    }[space]
    obj = getattr(owner, name, None)
    return type(obj).__name__ in ("builtin_function_or_method", "method_descriptor")


def main() -> None:
    root = pathlib.Path(torchgen.__file__).parent / "packaged"
    native = parse_native_yaml(
        str(root / "ATen/native/native_functions.yaml"), str(root / "ATen/native/tags.yaml")
    ).native_functions
    native = [f for f in native if g.should_generate_py_binding(f)]
    table: dict[str, list[str]] = {}
    for space, method, pred, prefix in GROUPS:
        pairs = g.load_signatures(native, str(root / "autograd/deprecated.yaml"), method=method)
        grouped: dict = defaultdict(list)
        for p in pairs:
            if pred(p.function):
                grouped[str(p.function.func.name.name)].append(p)
        for name, overloads in grouped.items():
            public = name[len(prefix) :] if name.startswith(prefix) else name
            sigs = [
                str(o.signature.signature_str(symint=True))
                for o in g.group_overloads(overloads, symint=True)
            ]
            table[f"{space}.{public}"] = sigs
    table.update(MANUAL)
    parsed = {k: v for k, v in table.items() if _parsed_by_torch(k) or k in PYTHON_PASSING_ON}
    # torch's Python functions call the parsed ones of the same name (``torch._VF.split``,
    # ``torch._C._nn.glu``), whose refusals are theirs: kept under those names
    for k, v in table.items():
        space, _, name = k.rpartition(".")
        if k not in parsed and space in ("torch", "nn.functional"):
            parsed[f"{'_VF' if space == 'torch' else '_nn'}.{name}"] = v
    # nn.functional's builtins that are torch's (F.conv2d is torch.conv2d)
    import torch
    import torch.nn.functional as F

    for name in dir(F):
        obj = getattr(F, name)
        if f"torch.{name}" in parsed and obj is getattr(torch, name, None):
            parsed[f"nn.functional.{name}"] = parsed[f"torch.{name}"]
    table = parsed
    OUT.write_text(json.dumps(dict(sorted(table.items())), indent=0) + "\n")
    print(f"{len(table)} parsers written to {OUT}")


if __name__ == "__main__":
    main()
