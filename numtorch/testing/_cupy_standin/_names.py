"""What the installed CuPy offers, read from its wheel by scripts/gen_cupy_names.py into
``cupy_names.json``: MODULES (module -> {public name: kind}), UFUNCS ('module.name' -> nin,
nout, type signatures and the methods CuPy implements), CLASSES (class -> its attributes) and
SIGNATURES ('module.name' -> its parameters, every default None; None: unknown)."""

from __future__ import annotations

import json
import pathlib

_DATA = json.loads((pathlib.Path(__file__).parent / "cupy_names.json").read_text())
VERSION: str = _DATA["version"]
MODULES: dict = _DATA["modules"]
UFUNCS: dict = _DATA["ufuncs"]
CLASSES: dict = _DATA["classes"]
SIGNATURES: dict = _DATA["signatures"]
