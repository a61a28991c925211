"""torch.utils.hooks against PyTorch's: RemovableHandle removes a module hook, and
warn_if_has_hooks warns for each tensor hook unless unserializable_hook marked it."""

from __future__ import annotations

import warnings

import pytest

import numtorch


@pytest.fixture(params=["numtorch", "torch"])
def lib(request):
    return pytest.importorskip(request.param) if request.param == "torch" else numtorch


def test_removable_handle_is_what_modules_return(lib):
    import importlib

    hooks = importlib.import_module(f"{lib.__name__}.utils.hooks")
    layer = lib.nn.Linear(2, 2)
    calls = []
    handle = layer.register_forward_hook(lambda *a: calls.append(1))
    assert isinstance(handle, hooks.RemovableHandle)
    layer(lib.ones(1, 2))
    handle.remove()
    layer(lib.ones(1, 2))
    assert calls == [1]
    table = __import__("collections").OrderedDict()  # weakly referenced, as modules' are
    table["other"] = "hook"
    with hooks.RemovableHandle(table) as h:
        table[h.id] = "mine"
    assert list(table.values()) == ["hook"]


@pytest.mark.parametrize("leaf", [True, False])
def test_warn_if_has_hooks(lib, leaf):
    import importlib

    hooks = importlib.import_module(f"{lib.__name__}.utils.hooks")
    x = lib.ones(2, requires_grad=True)
    t = x if leaf else x * 2
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        hooks.warn_if_has_hooks(t)
        t.register_hook(hooks.unserializable_hook(lambda g: g))
        hooks.warn_if_has_hooks(t)
        assert not seen
        t.register_hook(lambda g: g)
        hooks.warn_if_has_hooks(t)
    assert len(seen) == 1
    assert "on tensor will not be serialized.  If this is expected" in str(seen[0].message)
