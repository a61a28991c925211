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


@pytest.fixture
def cuda():
    """'cuda': the GPU where numtorch sees one; else the CPU stand-in for CuPy, in strict mode,
    and the test fails if numtorch called NumPy on device data anywhere (the file and line)."""
    import numtorch as nt

    if nt.cuda.is_available() and not _standin.active():
        yield "cuda"
        return
    yield from _strict_standin()


@pytest.fixture
def standin_cuda():
    """'cuda' on the CPU stand-in for CuPy (in strict mode, as ``cuda``) even where a GPU is
    present: for what only the stand-in observes, such as its count of host transfers."""
    yield from _strict_standin()


def _strict_standin():
    import numtorch as nt

    _standin.enable(strict=True)
    _standin.clear_sites()
    try:
        yield "cuda"
    finally:
        found = _standin.sites()
        _standin.disable()
        nt.set_default_device(None)
    assert not found, "NumPy called on device data:\n" + "\n".join(
        f"  {where}: {what}" for where, what in found.items()
    )


from numtorch.testing import _cupy_standin as _standin  # noqa: E402


@pytest.fixture(params=["cpu", "cuda"])
def dev(request):
    """A device-parametrized test's device: 'cpu', then 'cuda' (the ``cuda`` fixture)."""
    if request.param == "cpu":
        return "cpu"
    return request.getfixturevalue("cuda")
