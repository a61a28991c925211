"""The package's imports point down its layers, no modules import each other in a cycle, and
no module is over MAX_LINES lines.

Every import counts, late ones inside functions too. Layers, bottom to top (DESIGN.md,
section 1): a module may import its own layer or lower ones only.
"""

from __future__ import annotations

import ast
import pathlib

import numtorch

ROOT = pathlib.Path(numtorch.__file__).parent

# (module name or package prefix, layer); the longest matching prefix wins.
LAYERS = {
    "numtorch._core": 0,
    "numtorch._opdb": 0,  # the op database's sample makers and its test transform
    "numtorch.ops": 1,
    "numtorch.autograd": 2,  # the engine, the tape, grad modes, hooks, in-place history
    "numtorch.func": 3,  # the transforms' interpreters
    "numtorch.autograd.functional": 4,  # built on the transforms, as in PyTorch
    "numtorch.autograd.forward_ad": 4,
    "numtorch._dynamo": 4,  # compiled autograd: the engine's passes as generated code
    "numtorch.nn": 5,
    "numtorch.optim": 6,
    "numtorch.distributed": 7,  # process groups and collectives on MPI
    "numtorch.nn.parallel": 7,  # DistributedDataParallel sits above nn, beside distributed
    "numtorch": 7,  # the package face: numtorch/__init__.py, linalg, special
    "numtorch.utils": 7,
    "numtorch.testing": 7,  # torch.testing: assert_close, make_tensor
    "numtorch.profiler": 7,  # torch.profiler: schedules and steps over autograd.profiler
    "numtorch.func._make_functional": 7,  # make_functional: FunctionalModule is an nn.Module
    "numtorch.functorch": 7,  # the functorch package: torch.func's old names, make_functional
    "numtorch.amp": 7,  # mixed precision: autocast regions, GradScaler (casting is _core's)
    "numtorch.jit": 7,  # torch.jit: script and trace over numtorch.compile
}


def _module_name(path: pathlib.Path) -> str:
    parts = ["numtorch", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
MAX_LINES = 1200  # a module over it holds more than one job: split it (issue 29)


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _targets(module: str, node: ast.AST, is_package: bool) -> list[str]:
    """The package modules an import statement loads (``from x import y`` loads x.y when
    y is a module)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".")
            base = base[: len(base) - node.level + is_package]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [
            f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names
        ]
    out = []
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name.startswith("numtorch") and name != module:
            out.append(name)
    return out


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        edges = graph.setdefault(module, {})
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(module, node, path.name == "__init__.py"):
                    edges.setdefault(target, node.lineno)
    return graph


def test_the_layer_table_covers_every_module():
    assert set(layer(m) for m in MODULES) <= set(LAYERS.values())
    assert layer("numtorch.ops.shape") == 1 and layer("numtorch.autograd.functional") == 4
    assert "numtorch._core.op" in MODULES and "numtorch.autograd" in MODULES


def test_imports_point_down():
    graph = import_graph()
    upward = [
        f"{MODULES[m].relative_to(ROOT.parent)}:{line} imports {t} (layer {layer(m)} -> {layer(t)})"
        for m, edges in graph.items()
        for t, line in edges.items()
        if layer(t) > layer(m)
    ]
    assert upward == []


def test_no_import_cycles():
    graph = import_graph()
    cycles, state, stack = [], {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == "open":
                cycles.append(" -> ".join(stack[stack.index(t) :] + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert cycles == []


def test_a_package_init_is_not_a_backdoor():
    """A submodule imported through its package (``from .. import x``) is an edge to x."""
    graph = import_graph()
    assert "numtorch.autograd.engine" in graph["numtorch.autograd"]
    assert "numtorch.ops.creation" in graph["numtorch.func._grad"]


def test_no_module_is_over_the_line_limit():
    sizes = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    over = {m: n for m, n in sizes.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"
