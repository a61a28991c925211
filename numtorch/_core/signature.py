"""The public function of an op, generated from its declaration (inputs, attributes and
their defaults, ``out=``), and NumPy's keyword names (``axis=``, ``keepdims=``) that
PyTorch's argument parser takes for ``dim``/``keepdim``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any


def make_fn(op, out: bool) -> Callable:
    """The Python function for an op: binds arguments, then dispatches."""
    from .dispatch import dispatch
    from .out import write_out

    parts, kwonly = [], False
    for n in op.inputs:
        parts.append(n)
    for n, _, kind in op.attrs:
        if kind == inspect.Parameter.KEYWORD_ONLY and not kwonly:
            parts.append("*")
            kwonly = True
        parts.append(f"{n}=_d_{n}")
    if out:
        parts.append("out=None" if kwonly else "*, out=None")
    ins = "".join(f"{n}, " for n in op.inputs)
    attrs = ", ".join(f"'{n}': {n}" for n, _, _ in op.attrs)
    call = f"_dispatch(_op, ({ins}), {{{attrs}}})"
    body = (
        f"    return {call} if out is None else _write_out(out, {call}, _op, ({ins}))\n"
        if out
        else f"    return {call}\n"
    )
    owner, _, public = op.api.rpartition(".")
    aliases = _alias_code([n for n, _, _ in op.attrs], public, owner or "torch")
    if aliases:
        parts += [a[0] for a in aliases] if kwonly or out else ["*", *(a[0] for a in aliases)]
        body = "".join(a[1] for a in aliases) + body
    src = f"def {op.name}({', '.join(parts)}):\n{body}"
    env: dict[str, Any] = {"_dispatch": dispatch, "_op": op, "_write_out": write_out}
    env.update({f"_d_{n}": d for n, d, _ in op.attrs})
    env.update(_NO=_NO, _numpy_name=_numpy_name)
    exec(src, env)
    fn = env[op.name]
    fn.__qualname__ = op.name
    fn.__doc__ = f"The ``{op.api}`` operator."
    if aliases:
        _hide_aliases(fn)
    return fn


# PyTorch's argument parser takes NumPy's name for two of its own in every function it
# parses: ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=`` (not the other way
# round, and not for the functions PyTorch writes in Python: those are listed here).
NUMPY_NAMES = {"dim": "axis", "keepdim": "keepdims"}


PYTHON_IN_TORCH = frozenset(
    f"{owner}.{name}"
    for owner in ("torch", "Tensor")
    for name in ("norm", "split", "unique", "unique_consecutive", "unflatten")
) - {"torch.unflatten"}


_NO = object()  # an alias not given


def _alias_code(params: Sequence[str], public: str, owner: str) -> list[tuple[str, str]]:
    """(parameter, body line) for the aliases of ``params`` of ``owner.public`` (owner:
    ``torch``, ``Tensor``, ``linalg``, ...): a keyword-only parameter that costs one
    identity test per call when not given."""
    if f"{owner}.{public}" in PYTHON_IN_TORCH or owner.startswith("nn"):
        return []
    return [
        (
            f"{alias}=_NO",
            f"    if {alias} is not _NO:\n        {n} = _numpy_name('{public}', {n}, _d_{n}, {alias}, '{alias}')\n",
        )
        for n, alias in NUMPY_NAMES.items()
        if n in params and alias not in params
    ]


def numpy_aliases(op) -> dict[str, str]:
    """{NumPy's name: the attribute it stands for} that op's function takes."""
    owner, _, public = op.api.rpartition(".")
    owner = owner or "torch"
    params = [n for n, _, _ in op.attrs]
    if f"{owner}.{public}" in PYTHON_IN_TORCH or owner.startswith("nn"):
        return {}
    return {a: n for n, a in NUMPY_NAMES.items() if n in params and a not in params}


def _numpy_name(public: str, value, default, alias_value, alias: str):
    """The value of a parameter given by its NumPy name; given by both names, PyTorch's
    parser knows the NumPy one no more."""
    if value is not default:
        raise TypeError(f"{public}() got an unexpected keyword argument '{alias}'")
    return alias_value


def _hide_aliases(fn: Callable) -> None:
    """The signature without the alias parameters (PyTorch's, as ``inspect`` shows it)."""
    sig = inspect.signature(fn)
    hidden = set(NUMPY_NAMES.values())
    params = [
        p.replace(default=p.empty) if p.default is _NO else p
        for p in sig.parameters.values()
        if not (p.name in hidden and p.default is _NO)
    ]
    fn.__signature__ = sig.replace(parameters=params)


def _missing(public: str, values: tuple, names: tuple) -> None:
    """Python's error for required arguments not given (neither by an alias)."""
    gone = [f"'{n}'" for n, v in zip(names, values) if v is _NO]
    listed = gone[0] if len(gone) == 1 else ", ".join(gone[:-1]) + f" and {gone[-1]}"
    s = "s" if len(gone) > 1 else ""
    raise TypeError(f"{public}() missing {len(gone)} required positional argument{s}: {listed}")


def numpy_keywords(fn: Callable, public: str | None = None, owner: str = "torch") -> Callable:
    """``fn`` (a public function written in Python) taking NumPy's ``axis=``/``keepdims=``
    for its ``dim``/``keepdim`` as PyTorch's parser does: a wrapper with the same
    signature, or ``fn`` itself where it has neither or is PyTorch's Python too."""
    public = public or fn.__name__
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    aliases = _alias_code(list(sig.parameters), public, owner)
    if not aliases or getattr(fn, "__signature__", None) is not None:
        return fn
    parts, call, star, kwargs = [], [], False, None
    env: dict[str, Any] = {"_fn": fn, "_NO": _NO, "_numpy_name": _numpy_name}
    # A required parameter with an alias may come by its alias: it and the positional ones
    # after it take the default _NO, and are checked for once the aliases are resolved.
    required = [p.name for p in sig.parameters.values() if p.default is p.empty]
    first = min((required.index(n) for n in NUMPY_NAMES if n in required), default=None)
    late = [] if first is None else required[first:]
    for p in sig.parameters.values():
        env[f"_d_{p.name}"] = _NO if p.name in late else p.default
        if p.kind == p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
            call.append(f"*{p.name}")
            star = True
        elif p.kind == p.VAR_KEYWORD:
            kwargs = p.name
        elif p.kind == p.KEYWORD_ONLY:
            if not star:
                parts.append("*")
                star = True
            parts.append(f"{p.name}=_d_{p.name}")
            call.append(f"{p.name}={p.name}")
        else:
            parts.append(
                f"{p.name}=_d_{p.name}" if p.name in late or p.default is not p.empty else p.name
            )
            call.append(p.name if not star else f"{p.name}={p.name}")
    parts += [a[0] for a in aliases] if star else ["*", *(a[0] for a in aliases)]
    if kwargs:
        parts.append(f"**{kwargs}")
        call.append(f"**{kwargs}")
    body = "".join(a[1] for a in aliases)
    if late:
        names = ", ".join(late)
        body += f"    if _NO in ({names},):\n        _missing('{public}', ({names},), {tuple(late)!r})\n"
        env["_missing"] = _missing
    body += f"    return _fn({', '.join(call)})\n"
    name = fn.__name__ if fn.__name__.isidentifier() else "fn"
    exec(f"def {name}({', '.join(parts)}):\n{body}", env)
    wrapper = functools.update_wrapper(env[name], fn)
    del wrapper.__wrapped__  # (inspect shows the wrapper's own signature, less the aliases)
    _hide_aliases(wrapper)
    return wrapper


def numpy_keywords_in(namespace: dict, owner: str) -> None:
    """``numpy_keywords`` for every public function of a module's namespace (the package
    face's ``torch``, ``linalg`` and ``special``)."""
    for name, fn in list(namespace.items()):
        if not name.startswith("_") and inspect.isfunction(fn):
            namespace[name] = numpy_keywords(fn, name, owner)
