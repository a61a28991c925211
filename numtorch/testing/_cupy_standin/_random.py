"""``cupy.random`` of the stand-in: CuPy's generators and functions, drawing with NumPy's
generators on the host and returning device arrays (the numbers differ from CuPy's, as
CuPy's differ from NumPy's)."""

from __future__ import annotations

import numpy as np

from ._array import ndarray, unwrap, wrap
from ._names import CLASSES, MODULES


def _draws(name: str):
    def draw(self, *args, **kwargs):
        return wrap(
            getattr(self._np, name)(*unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()})
        )

    draw.__name__ = name
    return draw


class RandomState:
    """cupy.random.RandomState (cuRAND's XORWOW in CuPy)."""

    def __init__(self, seed=None, method=None):
        self._np = np.random.RandomState(seed)

    def seed(self, seed=None) -> None:
        self._np.seed(seed)

    def shuffle(self, a) -> None:
        if type(a) is not ndarray:
            raise TypeError("The array must be cupy.ndarray")
        self._np.shuffle(a._a)

    def random_sample(self, size=None, dtype=float):
        return wrap(self._np.random_sample(size).astype(dtype, copy=False))

    def standard_normal(self, size=None, dtype=float):
        return wrap(self._np.standard_normal(size).astype(dtype, copy=False))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return wrap(self._np.uniform(unwrap(low), unwrap(high), size).astype(dtype, copy=False))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return wrap(self._np.normal(unwrap(loc), unwrap(scale), size).astype(dtype, copy=False))

    def rand(self, *size, dtype=float):
        return self.random_sample(size, dtype)

    def randn(self, *size, dtype=float):
        return self.standard_normal(size, dtype)


class BitGenerator:
    """cupy.random's bit generators: a seed for a NumPy Philox here."""

    def __init__(self, seed=None):
        self._np = np.random.Philox(seed)


class _cuRANDGenerator(BitGenerator):
    """CuPy's cuRAND bit generators; ``size`` (how many cuRAND states draw in parallel)
    changes CuPy's numbers, not the stand-in's."""

    def __init__(self, seed=None, *, size=-1):
        super().__init__(seed)


class XORWOW(_cuRANDGenerator):
    pass


class MRG32k3a(_cuRANDGenerator):
    pass


class Philox4x3210(_cuRANDGenerator):
    pass


class Generator:
    """cupy.random.Generator."""

    def __init__(self, bit_generator: BitGenerator):
        self.bit_generator = bit_generator
        self._np = np.random.Generator(bit_generator._np)

    def random(self, size=None, dtype=np.float64, out=None):
        r = self._np.random(size, dtype)
        if out is not None:
            out[...] = wrap(r)
            return out
        return wrap(r)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return wrap(self._np.standard_normal(size, dtype))


def _own_methods(cls, names):
    for n in names:
        if (
            not n.startswith("_")
            and n not in vars(cls)
            and hasattr(np.random.Generator, n) | hasattr(np.random.RandomState, n)
        ):
            setattr(cls, n, _draws(n))


_own_methods(RandomState, CLASSES["RandomState"])
_own_methods(Generator, CLASSES["Generator"])

_global = [None]


def get_random_state() -> RandomState:
    if _global[0] is None:
        _global[0] = RandomState()
    return _global[0]


def set_random_state(rs: RandomState) -> None:
    _global[0] = rs


def reset_states() -> None:
    _global[0] = None


def seed(seed=None) -> None:
    get_random_state().seed(seed)


def default_rng(seed=None) -> Generator:
    """A Generator: over ``seed`` when it is a bit generator, ``seed`` itself when it is a
    Generator, else over an XORWOW seeded by it (CuPy's)."""
    if isinstance(seed, BitGenerator):
        return Generator(seed)
    if isinstance(seed, Generator):
        return seed
    return Generator(XORWOW(seed))


def _module_draw(name):
    def draw(*args, **kwargs):
        return getattr(get_random_state(), name)(*args, **kwargs)

    draw.__name__ = name
    return draw


OWN = {
    "RandomState": RandomState,
    "Generator": Generator,
    "BitGenerator": BitGenerator,
    "XORWOW": XORWOW,
    "MRG32k3a": MRG32k3a,
    "Philox4x3210": Philox4x3210,
    "get_random_state": get_random_state,
    "set_random_state": set_random_state,
    "reset_states": reset_states,
    "seed": seed,
    "default_rng": default_rng,
    "random": _module_draw("random_sample"),
    "ranf": _module_draw("random_sample"),
    "sample": _module_draw("random_sample"),
}
OWN.update(
    {
        n: _module_draw(n)
        for n, kind in MODULES["cupy.random"].items()
        if kind == "function" and n not in OWN and hasattr(RandomState, n)
    }
)
