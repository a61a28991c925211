"""torch.torch_version: ``TorchVersion``, the str ``torch.__version__`` is, that compares as a
version against strings, tuples of numbers and ``packaging`` versions."""

from __future__ import annotations

import collections.abc
import re
from typing import Any

from .version import __version__ as _internal_version

__all__ = ["TorchVersion"]

# PEP 440, as packaging.version reads it (case-insensitive, with its alternative spellings).
_PEP440 = re.compile(
    r"""
    \s*v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?
    (?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?
    (?:[-_.]?dev[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_INF = float("inf")


class _InvalidVersion(ValueError):
    pass


def _version_key(text: str) -> tuple:
    """The sort key PEP 440 gives ``text``; raises _InvalidVersion for a string it rejects."""
    m = _PEP440.fullmatch(text)
    if m is None:
        raise _InvalidVersion(text)
    release = [int(p) for p in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    post = m["post_n1"] or m["post_n2"] or ("0" if m["post_l"] else None)
    dev = m["dev_n"] or ("0" if m.group(0).lower().find("dev") >= 0 else None)
    if m["pre_l"]:
        pre = (_PRE_RANK[m["pre_l"].lower()], int(m["pre_n"] or 0))
    elif post is None and dev is not None:
        pre = (-_INF, 0)  # 1.0.dev0 sorts before 1.0a0
    else:
        pre = (_INF, 0)
    local = ()
    if m["local"]:
        parts = re.split(r"[-_.]", m["local"].lower())
        # numeric segments sort above alphanumeric ones
        local = (1, *((1, int(p), "") if p.isdigit() else (0, 0, p) for p in parts))
    return (
        int(m["epoch"] or 0),
        tuple(release),
        pre,
        -_INF if post is None else int(post),
        _INF if dev is None else int(dev),
        local,
    )


def _compare_key(self_key: tuple, other_key: tuple, method: str) -> bool:
    # release tuples of different lengths compare as if padded with zeros
    width = max(len(self_key[1]), len(other_key[1]))

    def padded(key: tuple) -> tuple:
        return (key[0], key[1] + (0,) * (width - len(key[1])), *key[2:])

    return getattr(padded(self_key), method)(padded(other_key))


def _as_text(other: Any) -> str:
    if isinstance(other, str):
        return other
    if hasattr(other, "release") and hasattr(other, "epoch"):  # packaging.version.Version
        return str(other)
    if isinstance(other, collections.abc.Iterable):
        return ".".join(str(item) for item in other)
    raise _InvalidVersion(other)


class TorchVersion(str):
    """A version string that compares as a version: ``TorchVersion('2.13.0') > (2, 1)``,
    ``> '1.13'``, ``> packaging.version.Version('2.0')``; strings that are no version compare
    as strings."""

    __slots__ = ()

    def _cmp_wrapper(self, other: Any, method: str) -> bool:
        try:
            return _compare_key(_version_key(self), _version_key(_as_text(other)), method)
        except _InvalidVersion:
            return getattr(super(), method)(other)

    def __gt__(self, other: Any) -> bool:
        return self._cmp_wrapper(other, "__gt__")

    def __lt__(self, other: Any) -> bool:
        return self._cmp_wrapper(other, "__lt__")

    def __eq__(self, other: Any) -> bool:
        return self._cmp_wrapper(other, "__eq__")

    def __ge__(self, other: Any) -> bool:
        return self._cmp_wrapper(other, "__ge__")

    def __le__(self, other: Any) -> bool:
        return self._cmp_wrapper(other, "__le__")

    __hash__ = str.__hash__


__version__ = TorchVersion(_internal_version)
