"""torch.backends as PyTorch's CPU build shows it, against torch: the build facts, the
flags' defaults, setting them (and the errors for non-bools), ``flags(...)`` blocks that
restore them, and cuBLAS's ``matmul`` settings tied to the float32 matmul precision."""

import warnings

import pytest
import torch
from twolibs import Raised, outcome

import numtorch as nt

LIBS = (nt, torch)
FLAGS = {
    "cudnn": ("enabled", "benchmark", "deterministic", "allow_tf32"),
    "mkldnn": ("enabled", "deterministic"),
    "opt_einsum": ("enabled", "strategy"),
}
MATMUL = (
    "allow_tf32",
    "allow_fp16_reduced_precision_reduction",
    "allow_fp16_reduced_precision_reduction_split_k",
    "allow_bf16_reduced_precision_reduction",
    "allow_bf16_reduced_precision_reduction_split_k",
)


def _state(lib):
    flags = {(m, a): getattr(getattr(lib.backends, m), a) for m, fl in FLAGS.items() for a in fl}
    matmul = {("matmul", a): getattr(lib.backends.cuda.matmul, a) for a in MATMUL}
    return {**flags, **matmul, "precision": lib.get_float32_matmul_precision()}


@pytest.fixture(autouse=True)
def _restore():
    """Each test leaves both libraries' backend settings as it found them."""
    saved = {lib: _state(lib) for lib in LIBS}
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib, state in saved.items():
            for key, value in state.items():
                if key == "precision":
                    continue
                module, attr = key
                if module == "matmul":
                    if attr.endswith("_split_k"):
                        continue
                    split_k = state[(module, attr + "_split_k")] if attr != "allow_tf32" else None
                    value = value if split_k is None else (value, split_k)
                    setattr(lib.backends.cuda.matmul, attr, value)
                elif lib is torch and module == "opt_einsum":
                    # torch's setattr leaves an instance attribute over its ContextProp,
                    # which later flags() blocks cannot see through: drop it and set again
                    vars(torch.backends.opt_einsum).pop(attr, None)
                else:
                    setattr(getattr(lib.backends, module), attr, value)
            if lib is torch:
                torch.backends.opt_einsum.set_flags(
                    *(state[("opt_einsum", a)] for a in FLAGS["opt_einsum"])
                )
            lib.set_float32_matmul_precision(state["precision"])
    assert {lib: _state(lib) for lib in LIBS} == saved


def _same(prog):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's oneDNN TF32 warning)
        got, ref = outcome(prog, nt), outcome(prog, torch)
    assert got == ref
    return got


@pytest.mark.parametrize(
    "fact",
    [
        "cudnn.is_available()",
        "cudnn.version()",
        "cudnn.benchmark_limit",
        "mps.is_available()",
        "mps.is_built()",
        "cuda.is_built()",
        "openmp.is_available()",
        "opt_einsum.is_available()",
        "opt_einsum.get_opt_einsum() is None",
        "cpu.get_cpu_capability()",
        "cudnn.is_acceptable(lib.zeros(2))",
    ],
)
def test_build_facts_match_pytorchs_cpu_build(fact):
    got = _same(lambda lib: eval(f"lib.backends.{fact}", {"lib": lib}))
    assert not isinstance(got, Raised)


def test_mkl_and_onednn_report_numtorchs_own_build():
    # numtorch's BLAS is NumPy's (not taken to be MKL) and it has no oneDNN.
    assert nt.backends.mkl.is_available() is nt.has_mkl is False
    assert nt.backends.mkldnn.is_available() is False
    assert nt.backends.openmp.is_available() is nt.has_openmp


def test_defaults_match():
    assert _state(nt) == _state(torch)


@pytest.mark.parametrize("module, attr", [(m, a) for m in ("cudnn", "mkldnn") for a in FLAGS[m]])
@pytest.mark.parametrize("value", [True, False, 1, "x", None])
def test_setting_a_flag_checks_it_is_a_bool(module, attr, value):
    def prog(lib):
        setattr(getattr(lib.backends, module), attr, value)
        return getattr(getattr(lib.backends, module), attr)

    got = _same(prog)
    assert isinstance(got, Raised) == (not isinstance(value, bool))
    assert _state(nt) == _state(torch)


@pytest.mark.parametrize(
    "module, kwargs",
    [
        ("cudnn", {}),
        ("cudnn", {"enabled": True, "deterministic": True}),
        ("cudnn", {"benchmark": True, "allow_tf32": False}),
        ("cudnn", {"enabled": 1}),
        ("mkldnn", {}),
        ("mkldnn", {"enabled": True, "deterministic": True}),
        ("mkldnn", {"enabled": "yes"}),
        ("opt_einsum", {}),
        ("opt_einsum", {"enabled": True}),
        ("opt_einsum", {"strategy": "greedy"}),
        ("opt_einsum", {"enabled": False}),
    ],
)
def test_flags_block_sets_and_restores(module, kwargs):
    def prog(lib):
        mod = getattr(lib.backends, module)
        with mod.flags(**kwargs):
            inside = {a: getattr(mod, a) for a in FLAGS[module]}
        return inside, {a: getattr(mod, a) for a in FLAGS[module]}

    before = _state(nt)
    got = _same(prog)
    assert _state(nt) == before == _state(torch)
    if not isinstance(got, Raised) and module == "cudnn":
        assert got[0]["enabled"] is kwargs.get("enabled", False)  # flags() turns it off


def test_flags_restore_after_an_exception_in_the_block():
    for lib in LIBS:
        lib.backends.cudnn.deterministic = False
        with pytest.raises(KeyError):
            with lib.backends.cudnn.flags(enabled=True, deterministic=True):
                assert lib.backends.cudnn.deterministic is True
                raise KeyError
        assert lib.backends.cudnn.deterministic is False


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_matmul_allow_tf32_follows_the_float32_matmul_precision(precision):
    def prog(lib):
        lib.set_float32_matmul_precision(precision)
        return lib.backends.cuda.matmul.allow_tf32

    assert _same(prog) is (precision != "highest")


@pytest.mark.parametrize(
    "attr", ["allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"]
)
@pytest.mark.parametrize(
    "value", [False, True, (False,), (False, False), [True, False], (), (1,), (True, 0), "x", 1]
)
def test_matmul_reduced_precision_settings(attr, value):
    def prog(lib):
        setattr(lib.backends.cuda.matmul, attr, value)
        return getattr(lib.backends.cuda.matmul, attr), getattr(
            lib.backends.cuda.matmul, attr + "_split_k"
        )

    _same(prog)
    assert _state(nt) == _state(torch)


@pytest.mark.parametrize("value", [True, 1, None])
def test_matmul_allow_tf32_checks_a_bool_and_unknown_names_are_refused(value):
    def set_tf32(lib):
        lib.backends.cuda.matmul.allow_tf32 = value
        return lib.backends.cuda.matmul.allow_tf32

    _same(set_tf32)
    _same(lambda lib: setattr(lib.backends.cuda.matmul, "allow_fp8", True))
    _same(lambda lib: lib.backends.cuda.matmul.allow_fp8)


def _settings_prog(call):
    def prog(lib):
        try:
            return call(lib)
        finally:
            lib.use_deterministic_algorithms(False)

    return prog


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.use_deterministic_algorithms(True, warn_only=1),
        lambda lib: lib.use_deterministic_algorithms(1),
        lambda lib: (
            lib.use_deterministic_algorithms(True, warn_only=True),
            lib.get_deterministic_debug_mode(),
        ),
        lambda lib: lib.set_float32_matmul_precision(3),
        lambda lib: lib.set_num_threads(0),
    ],
)
def test_settings_check_their_arguments_as_pytorch(call):
    _same(_settings_prog(call))
    assert nt.are_deterministic_algorithms_enabled() is False
