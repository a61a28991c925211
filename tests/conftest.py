import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


import pytest  # noqa: E402

from numtorch.func import _set_vmap_fallback_enabled  # noqa: E402


@pytest.fixture
def no_fallback():
    """vmap raises instead of looping where an op has no batch rule."""
    _set_vmap_fallback_enabled(False)
    yield
    _set_vmap_fallback_enabled(True)
