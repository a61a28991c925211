"""The public function of an op, generated from its declaration (inputs, attributes and
their defaults, ``out=``), and NumPy's keyword names (``axis=``, ``keepdims=``, ``x=``,
``x2=``, ...) that PyTorch's argument parser takes for its own."""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any


def make_fn(op, out: bool) -> Callable:
    """The Python function for an op: binds arguments, then dispatches."""
    from .autocast_state import uncast
    from .dispatch import dispatch
    from .out import check_out, write_out
    from .pyargs import attr_kinds, has, positional_match

    owner, _, public = op.api.rpartition(".")
    inputs = public_inputs(op)
    names = [*inputs, *(n for n, _, _ in op.attrs)]
    aliases = numpy_names_of(names, public, owner or "torch")
    # A required input with a NumPy name may come by it: it and the inputs after it take
    # the default _NO, and are looked for among the unknown keywords (``**_kw``).
    first = min((inputs.index(n) for n in aliases if n in inputs), default=len(inputs))
    late = inputs[first:]
    method = op.api.startswith("Tensor.")
    key = api_key(op.api)
    # Where PyTorch parses the call and the call can be rebuilt as it was made, a failure
    # of the body is judged as PyTorch's parser would judge the call (``rejudge``): its
    # TypeError comes first. Extra positional arguments come in ``*_p`` for that judge, and
    # a missing input as _NO.
    pos_attrs = [n for n, _, k in op.attrs if k != inspect.Parameter.KEYWORD_ONLY]
    judged = has(key) and positional_match(key, len(inputs) - method, pos_attrs)
    early = [] if not judged else [n for n in inputs if n not in late]
    parts, kwonly = [], False
    for n in inputs:
        parts.append(f"{n}=_NO" if n in late or n in early else n)
    shown = list(parts)  # (the signature inspect shows: PyTorch's)
    for n, _, kind in op.attrs:
        if kind == inspect.Parameter.KEYWORD_ONLY and not kwonly:
            shown.append("*")
            kwonly = True
        shown.append(f"{n}=_d_{n}")
    if out:
        shown.append("out=None" if kwonly else "*, out=None")
    kinds = attr_kinds(api_key(op.api), [n for n, _, _ in op.attrs])
    required = [n for n, d, _ in op.attrs if d is inspect.Parameter.empty]
    # Where PyTorch's parser checks an attribute (or one is required), the function knows
    # which attributes came by position (``*_p``), so that a refusal words the call as it
    # was made.
    guarded = bool(kinds or required)
    by_pos = [n for n, _, k in op.attrs if k != inspect.Parameter.KEYWORD_ONLY] if guarded else []
    # (an op whose positional attributes are not PyTorch's, in its order, is not PyTorch's
    # function itself but the kernel of a public one: its calls are numtorch's own)
    # (a method-only op's function is the method: its first input is self)
    guarded = guarded and positional_match(api_key(op.api), len(inputs) - method, by_pos)
    by_pos = by_pos if guarded else []
    if guarded:
        parts.append("*_p")
        parts += [f"{n}=_NO" if n in by_pos else f"{n}=_d_{n}" for n, _, _ in op.attrs]
        if out:
            parts.append("out=None")
    elif judged:
        parts += [f"{n}=_d_{n}" for n in pos_attrs]
        parts.append("*_p")
        parts += [f"{n}=_d_{n}" for n, _, _ in op.attrs if n not in pos_attrs]
        if out:
            parts.append("out=None")
    else:
        parts = list(shown)
    ins = "".join(f"{n}, " for n in inputs)
    attrs = ", ".join(f"'{n}': {n}" for n, _, _ in op.attrs)
    call = f"_dispatch(_op, ({ins}), {{{attrs}}})"
    # (an out= form is never cast by autocast: PyTorch's autocast kernels are functional)
    out_call = call if op.autocast is None else f"_uncast(_dispatch, _op, ({ins}), {{{attrs}}})"
    body = (
        # (PyTorch's checks of out=, before the kernel)
        f"    if out is not None:\n        _check_out(_op, out, ({ins}), {{{attrs}}})\n"
        f"        return _write_out(out, {out_call}, _op, ({ins}), {{{attrs}}})\n"
        f"    return {call}\n"
        if out
        else f"    return {call}\n"
    )
    env: dict[str, Any] = {"_dispatch": dispatch, "_op": op, "_write_out": write_out}
    body = _guard_code(op, kinds, by_pos, ins, attrs, "out" if out else "None", env) + body
    if judged and not guarded:  # (extra positional arguments, which nothing binds)
        body = f"    if _p: _too_many(_key, _method, ({ins}), _p, _op.name)\n" + body
    if early:
        test = " or ".join(f"{n} is _NO" for n in early)
        names_ = tuple(early)
        body = (
            f"    if {test}: _missing(_op.name, ({''.join(n + ', ' for n in early)}), {names_!r})\n"
            + body
        )
        env["_missing"] = _missing
    env["_check_out"] = check_out
    env["_uncast"] = uncast
    env.update({f"_d_{n}": _NO if n in required else d for n, d, _ in op.attrs})
    if aliases:
        parts.append("**_kw")
        shown.append("**_kw")
        defaults = {n: _NO for n in late} | {n: _NO if n in required else d for n, d, _ in op.attrs}
        body = _resolve_code(names, aliases, late, defaults, public, "_kw", True, env) + body
    if guarded:
        body = _bind_code(by_pos, ins, env) + body
    if judged:
        body = _rejudge_code(op, ins, attrs, pos_attrs, guarded, out, bool(aliases), body, env)
    src = f"def {op.name}({', '.join(parts)}):\n{body}"
    exec(src, env)
    fn = env[op.name]
    fn.__qualname__ = op.name
    fn.__doc__ = f"The ``{op.api}`` operator."
    if guarded or judged:
        exec(f"def _shown({', '.join(shown)}): pass", env)
        fn.__signature__ = inspect.signature(env.pop("_shown"))
    if aliases or guarded or judged:
        _hide_aliases(fn)
    return fn


def _rejudge_code(
    op, ins: str, attrs: str, pos_attrs: list, guarded: bool, out: bool, kw: bool, body: str, env
) -> str:
    """The body in a ``try`` whose ``except`` asks PyTorch's parser about the call as it
    was made (its TypeError, where it refuses it), then re-raises the failure."""
    from .pyargs import rejudge, too_many

    env.update(
        _rejudge=rejudge,
        _too_many=too_many,
        _NO=_NO,
        _key=api_key(op.api),
        _method=op.api.startswith("Tensor."),
        _rejudge_spec=(
            {n: d for n, d, _ in op.attrs},
            tuple(pos_attrs),
            guarded,
            _NO,
            _python_name(api_key(op.api)),
        ),
    )
    inner = "".join("    " + line + "\n" for line in body.splitlines())
    return (
        "    try:\n"
        + inner
        + "    except Exception as _e:\n"
        + "        if not _e.__dict__.get('judged'):\n"
        + f"            _rejudge(_key, _method, ({ins}), {{{attrs}}}, _rejudge_spec, "
        + f"{'out' if out else 'None'}, {'_kw' if kw else '{}'}, _p, _e)\n"
        + "        raise\n"
    )


def _bind_code(by_pos: list, ins: str, env: dict) -> str:
    """The body lines that bind the attributes given by position (``_p``) as Python would
    bind them by their names, and give those not given their defaults."""
    from .pyargs import multiple_values, too_many

    env.update(_too_many=too_many, _multiple=multiple_values, _NO=_NO)
    lines = [
        "    if _p:",
        "        _n = len(_p)",
        f"        if _n > {len(by_pos)}: _too_many(_key, _method, ({ins}), _p, _op.name)",
    ]
    pad = "        "
    for i, n in enumerate(by_pos):
        if i:
            lines.append(f"{pad}if _n > {i}:")
            pad += "    "
        lines.append(f"{pad}if {n} is not _NO: _multiple(_key, '{n}')")
        lines.append(f"{pad}{n} = _p[{i}]")
    lines += [f"    if {n} is _NO: {n} = _d_{n}" for n in by_pos]
    return "\n".join(lines) + "\n"


def api_key(api: str) -> str:
    """The key of PyTorch's parser for an op's public path (``sum``: ``torch.sum``)."""
    return api if "." in api else f"torch.{api}"


def _guard_code(op, kinds: dict, by_pos: list, ins: str, attrs: str, out: str, env: dict) -> str:
    """The body lines that check the attributes PyTorch's parser checks (dtypes, ints, int
    lists) quickly, and send a call that fails to ``judge_op_call``: PyTorch's TypeError,
    or the values as Python ints and numtorch dtypes."""
    from .pyargs import QUICK_ENV, judge_op_call, narrowing, quick_test

    key = api_key(op.api)
    env.update(_key=key, _method=key.startswith("Tensor."))
    required = [n for n, d, _ in op.attrs if d is inspect.Parameter.empty]
    if not kinds and not required:
        return ""
    tests = [f"{n} is not _NO" for n in required]
    tests += [quick_test(n, k) for n, k in kinds.items()]
    kwonly = {n for n, _, k in op.attrs if k == inspect.Parameter.KEYWORD_ONLY}
    names = kwonly | ({"out"} if out == "out" else set())
    narrow = sorted((narrowing(key) | narrowing(f"Tensor.{op.name}")) & names)
    if narrow and by_pos:  # (keywords that come only with the attributes by keyword)
        given = " or ".join(
            "out is not None" if n == "out" else f"{n} is not _d_{n}" for n in narrow
        )
        tests.append(f"not (_p and ({given}))")
    checks = " and ".join(tests)
    env.update(
        _by_pos=tuple(by_pos),
        _kinds=kinds,
        _attr_spec=(
            {n: _NO if n in required else d for n, d, _ in op.attrs},
            _NO,
            op.name,
            # (PyTorch's Python function, which Python binds: its name for a missing one)
            _python_name(key),
        ),
        _judge=judge_op_call,
        _NO=_NO,
        **QUICK_ENV,
    )
    lhs = "".join(f"{n}, " for n in kinds)
    rhs = "".join(f"_a['{n}'], " for n in kinds)
    code = (
        f"    if not ({checks}):\n"
        f"        _a = _judge(_key, _method, _kinds, ({ins}), {{{attrs}}}, _attr_spec, {out}, "
        f"_by_pos[:{'len(_p)' if by_pos else '0'}])\n"
    )
    return code + (f"        {lhs}= {rhs}\n" if kinds else "")


def method_of(fn: Callable, name: str) -> Callable:
    """An op's public function as the Tensor method ``name``: the same code, its refusals
    worded as PyTorch's parser of ``Tensor.<name>`` words them."""
    env = getattr(fn, "__globals__", {})
    if "_judge" not in env and "_rejudge" not in env:
        return fn
    key = f"Tensor.{name}"
    twin_env = {**env, "_key": key, "_method": True}
    if "_attr_spec" in env:
        twin_env["_attr_spec"] = (*env["_attr_spec"][:3], _python_name(key))
    if "_rejudge_spec" in env:
        twin_env["_rejudge_spec"] = (*env["_rejudge_spec"][:4], _python_name(key))
    twin = types.FunctionType(fn.__code__, twin_env, fn.__name__)
    twin.__defaults__, twin.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    twin.__dict__.update(fn.__dict__)
    twin.__qualname__, twin.__doc__ = fn.__qualname__, fn.__doc__
    return twin


# The kernels of torch's namespace call PyTorch's ``input`` ``x`` (and add, sub and mul's
# ``input``, ``other`` ``a``, ``b``): the public function takes PyTorch's names.
KERNEL_NAMES = {("x",): ("input",), ("a", "b"): ("input", "other")}


def public_inputs(op) -> tuple:
    """The names of op's inputs in its public function (PyTorch's)."""
    if "." in op.api:
        return op.inputs
    return KERNEL_NAMES.get(op.inputs, op.inputs)


# PyTorch's argument parser takes NumPy's names for four of its own in every function it
# parses: ``axis=`` for ``dim=``, ``keepdims=`` for ``keepdim=``, ``x=``, ``a=`` or ``x1=``
# for ``input=`` and ``x2=`` for ``other=`` (looked for in this order, only where the
# parameter itself was not given; not the other way round, and not in the functions
# PyTorch writes in Python: those are listed here).
NUMPY_NAMES = {
    "dim": ("axis",),
    "keepdim": ("keepdims",),
    "input": ("x", "a", "x1"),
    "other": ("x2",),
}


PYTHON_IN_TORCH = frozenset(
    f"{owner}.{name}"
    for owner in ("torch", "Tensor")
    for name in (
        "lstsq",
        "matrix_rank",
        "module_load",
        "norm",
        "solve",
        "split",
        "stft",
        "symeig",
        "unique",
        "unique_consecutive",
        "unflatten",
    )
) - {"torch.unflatten"}

# torch.nn.functional is Python but for these, which are PyTorch's parsed builtins.
PARSED_IN_NN = frozenset(
    (
        "adaptive_avg_pool1d",
        "avg_pool1d",
        "avg_pool2d",
        "avg_pool3d",
        "bilinear",
        "celu_",
        "channel_shuffle",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_tbc",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "cosine_similarity",
        "elu_",
        "gelu",
        "hardshrink",
        "hardtanh_",
        "leaky_relu_",
        "linear",
        "logsigmoid",
        "native_channel_shuffle",
        "one_hot",
        "pairwise_distance",
        "pdist",
        "pixel_shuffle",
        "pixel_unshuffle",
        "prelu",
        "relu_",
        "rrelu_",
        "scaled_dot_product_attention",
        "selu_",
        "softplus",
        "softshrink",
        "threshold_",
    )
)


_NO = object()  # an argument not given


def _python_name(key: str) -> str | None:
    """``key`` where PyTorch's function of that key is Python (Python binds its arguments,
    and words a missing one), else None."""
    owner, _, public = key.rpartition(".")
    return None if _parsed(public, owner) else key


def _parsed(public: str, owner: str) -> bool:
    """Whether PyTorch's ``owner.public`` goes through its argument parser."""
    if owner.startswith("nn"):
        return public in PARSED_IN_NN
    return f"{owner}.{public}" not in PYTHON_IN_TORCH


def numpy_names_of(params: Sequence[str], public: str, owner: str) -> dict[str, tuple]:
    """{parameter: its NumPy names} for ``owner.public`` (owner: ``torch``, ``Tensor``,
    ``linalg``, ``nn.functional``, ...) with parameters ``params``."""
    if not _parsed(public, owner):
        return {}
    out = {}
    for n in params:
        names = tuple(a for a in NUMPY_NAMES.get(n, ()) if a not in params)
        if names:
            out[n] = names
    return out


def numpy_aliases(op) -> dict[str, str]:
    """{NumPy's name: the attribute it stands for} that op's function takes."""
    owner, _, public = op.api.rpartition(".")
    inputs = public_inputs(op)
    aliases = numpy_names_of([*inputs, *(n for n, _, _ in op.attrs)], public, owner or "torch")
    return {a: n for n, names in aliases.items() if n not in inputs for a in names}


def input_aliases(op) -> dict[str, str]:
    """{name: input} for op's inputs (by kernel name) under their public names and NumPy
    names."""
    owner, _, public = op.api.rpartition(".")
    inputs = public_inputs(op)
    aliases = numpy_names_of([*inputs, *(n for n, _, _ in op.attrs)], public, owner or "torch")
    by = dict(zip(inputs, op.inputs))
    by.update({a: k for n, k in zip(inputs, op.inputs) for a in aliases.get(n, ())})
    return by


def _resolve_code(
    params: Sequence[str],
    aliases: dict,
    late: Sequence[str],
    defaults: dict,
    public: str,
    kw: str,
    strict: bool,
    env: dict,
) -> str:
    """The body lines that take the parameters not given from their NumPy names in the
    keywords ``kw``: run only when there is a keyword the signature does not know (or a
    required parameter is missing)."""
    slots = [n for n in params if n in aliases or n in late]
    spec = (
        public,
        tuple(slots),
        tuple(aliases.get(n, ()) for n in slots),
        tuple(defaults[n] for n in slots),
        strict,
    )
    env.update(_NO=_NO, _numpy_names=_numpy_names, _spec=spec)
    test = " or ".join([kw, *(f"{n} is _NO" for n in late)])
    lhs = "".join(f"{n}, " for n in slots)
    return f"    if {test}:\n        {lhs}= _numpy_names(_spec, {kw}, ({lhs}))\n"


def _numpy_names(spec: tuple, kw: dict, values: tuple) -> tuple:
    """The values of the slots, each one not given taken from the first of its NumPy names
    in ``kw`` (popped). PyTorch's errors: a keyword left over names the first keyword
    the function does not know by its own name (an alias given beside its parameter
    too); a required parameter given by neither name, Python's missing-argument error."""
    public, slots, aliases, defaults, strict = spec
    first = next(iter(kw), None)  # (a function with its own **kwargs: the first alias left)
    out = list(values)
    used = False
    for i, names in enumerate(aliases):
        if out[i] is defaults[i]:
            for a in names:
                if a in kw:
                    out[i] = kw.pop(a)
                    used = True
                    break
    if kw and not strict:
        first = next((k for k in kw if any(k in names for names in aliases)), None)
    if kw and first is not None:
        e = TypeError(f"{public}() got an unexpected keyword argument '{first}'")
        raise _judged(e) if used else e
    if any(v is _NO for v in out):
        _missing(public, tuple(out), slots)
    return tuple(out)


def _hide_aliases(fn: Callable) -> None:
    """The signature without the catch-all for NumPy's names and with the required
    parameters required (PyTorch's, as ``inspect`` shows it)."""
    sig = inspect.signature(fn)
    params = [
        p.replace(default=p.empty) if p.default is _NO else p
        for p in sig.parameters.values()
        if not (p.kind == p.VAR_KEYWORD and p.name == "_kw")
    ]
    fn.__signature__ = sig.replace(parameters=params)


def _missing(public: str, values: tuple, names: tuple) -> None:
    """Python's error for required arguments not given (neither by an alias)."""
    gone = [f"'{n}'" for n, v in zip(names, values) if v is _NO]
    listed = gone[0] if len(gone) == 1 else ", ".join(gone[:-1]) + f" and {gone[-1]}"
    s = "s" if len(gone) > 1 else ""
    raise TypeError(f"{public}() missing {len(gone)} required positional argument{s}: {listed}")


def _judged(e: TypeError) -> TypeError:
    """e, marked as the refusal of a call that used NumPy's names: the function's ``except``
    does not judge the call again (rebuilt, it would have lost its keywords' names)."""
    e.judged = True
    return e


def numpy_keywords(fn: Callable, public: str | None = None, owner: str = "torch") -> Callable:
    """``fn`` (a public function written in Python) taking NumPy's names for its
    ``input``/``other``/``dim``/``keepdim`` as PyTorch's parser does: a wrapper with the
    same signature, or ``fn`` itself where it has none of them or is PyTorch's Python too."""
    public = public or fn.__name__
    rewrap = getattr(fn, "_rewrap", None)
    if rewrap is not None:  # a parsed function: its check sees the call as the user made it
        inner = numpy_keywords(fn.__wrapped__, public, owner)
        return fn if inner is fn.__wrapped__ else rewrap(inner)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    params = list(sig.parameters)
    aliases = numpy_names_of(params, public, owner)
    if not aliases or getattr(fn, "__signature__", None) is not None:
        return fn
    parts, call, star, kwargs = [], [], False, None
    env: dict[str, Any] = {"_fn": fn}
    # A required parameter with an alias may come by its alias: it and the positional ones
    # after it take the default _NO, and are checked for once the aliases are resolved.
    required = [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind == p.POSITIONAL_OR_KEYWORD
    ]
    first = min((required.index(n) for n in aliases if n in required), default=None)
    late = [] if first is None else required[first:]
    defaults = {}
    for p in sig.parameters.values():
        env[f"_d_{p.name}"] = defaults[p.name] = _NO if p.name in late else p.default
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
            parts.append(p.name if p.default is p.empty else f"{p.name}=_d_{p.name}")
            call.append(f"{p.name}={p.name}")
        else:
            parts.append(
                f"{p.name}=_d_{p.name}" if p.name in late or p.default is not p.empty else p.name
            )
            call.append(p.name if not star else f"{p.name}={p.name}")
    strict = kwargs is None
    kwargs = kwargs or "_kw"
    parts.append(f"**{kwargs}")
    if not strict:
        call.append(f"**{kwargs}")
    body = _resolve_code(params, aliases, late, defaults, public, kwargs, strict, env)
    body += f"    return _fn({', '.join(call)})\n"
    name = fn.__name__ if fn.__name__.isidentifier() else "fn"
    exec(f"def {name}({', '.join(parts)}):\n{body}", env)
    wrapper = functools.update_wrapper(env[name], fn)
    del wrapper.__wrapped__  # (inspect shows the wrapper's own signature, less the aliases)
    _hide_aliases(wrapper)
    return wrapper


def numpy_keywords_in(namespace: dict, owner: str) -> None:
    """``numpy_keywords`` for every public function of a module's namespace (the package
    face's ``torch``, ``linalg``, ``special`` and ``nn.functional``)."""
    from .pyargs import with_parser

    for name, fn in list(namespace.items()):
        if not name.startswith("_") and inspect.isfunction(fn):
            fn = numpy_keywords(fn, name, owner)
            if _parsed(name, owner):
                fn = with_parser(fn, f"{owner}.{name}")
            namespace[name] = fn
            if not _found_by_name(fn):  # (generated, or a wrapper): pickled as this name
                fn.__module__, fn.__qualname__ = namespace["__name__"], name


def _found_by_name(fn) -> bool:
    """Whether ``fn.__module__`` and ``fn.__qualname__`` lead back to ``fn`` (how pickle
    finds a function)."""
    obj = sys.modules.get(fn.__module__ or "")
    for part in fn.__qualname__.split("."):
        obj = getattr(obj, part, None)
    return obj is fn
