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


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-seconds",
        type=float,
        default=None,
        help="run tests/test_random_programs.py on fresh seeds for this long",
    )


def pytest_configure(config):
    seconds = config.getoption("--fuzz-seconds")
    if seconds:
        os.environ["NUMTORCH_FUZZ_SECONDS"] = str(seconds)
