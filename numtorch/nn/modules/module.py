"""nn.Module: attribute routing into parameters, buffers and submodules, their walks, the
state dict, hooks and dtype/device conversion."""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..._core import dtype as dt
from ..._core.tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.conversion import to_args
from ...ops.creation import empty_like
from ..parameter import Buffer, Parameter, is_lazy


def typename(obj) -> str:
    """torch.typename: 'torch.FloatTensor' for a tensor, the qualified type name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    name = type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


# Bumped by every change to any module's attributes, parameters, buffers, children or
# hooks: numtorch.compile's guards re-check a module only when it moved.
STATE = [0]


class RemovableHandle:
    """Removes one hook from the dicts that hold it (torch.utils.hooks.RemovableHandle)."""

    _ids = itertools.count()

    def __init__(self, hooks_dict: dict, *, extra_dict=None):
        self.id = next(RemovableHandle._ids)
        self._refs = [weakref.ref(hooks_dict)]
        extra = extra_dict if isinstance(extra_dict, (list, tuple)) else [extra_dict]
        self._refs += [weakref.ref(d) for d in extra if d is not None]

    def remove(self) -> None:
        STATE[0] += 1
        for ref in self._refs:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        # the dicts themselves, so that a deep copy or pickle of the module refers to its
        # own copies of them
        return (self.id, tuple(ref() for ref in self._refs))

    def __setstate__(self, state) -> None:
        self.id, dicts = state
        self._refs = [weakref.ref(OrderedDict() if d is None else d) for d in dicts]
        RemovableHandle._ids = itertools.count(max(next(RemovableHandle._ids), self.id + 1))

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def reset_grads(params, set_to_none: bool) -> None:
    """Each tensor's gradient set to None, or detached and zeroed in place."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "".join("\n" + " " * n + line for line in lines[1:])


def _add_hook(
    hooks: OrderedDict, hook, prepend: bool, extra: tuple = (), flags: tuple = ()
) -> RemovableHandle:
    STATE[0] += 1
    handle = RemovableHandle(hooks, extra_dict=list(extra))
    hooks[handle.id] = hook
    for d, on in zip(extra, flags):
        if on:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# Hooks every module runs before its own (torch.nn.modules.module's register_module_*).
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """hook(module, args) -> None or new args, before every module's forward (and before
    its own forward pre-hooks)."""
    return _add_hook(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(
    hook: Callable, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """hook(module, args, output) -> None or new output (with_kwargs: hook(module, args,
    kwargs, output)), after every module's forward and before its own forward hooks;
    always_call: also when the call raised."""
    return _add_hook(
        _global_forward_hooks,
        hook,
        False,
        (_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called),
        (with_kwargs, always_call),
    )


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """hook(module, grad_output) -> None or new grad_output, for every module, before its
    own backward pre-hooks."""
    return _add_hook(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """hook(module, grad_input, grad_output) -> None or new grad_input, for every module,
    before its own full backward hooks."""
    return _add_hook(_global_backward_hooks, hook, False)


_HOOK_DICTS = (
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_backward_hooks",
    "_backward_pre_hooks",
    "_state_dict_hooks",
    "_state_dict_pre_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)


class Module:
    """Base class of every layer and model (torch.nn.Module)."""

    training: bool
    _version: int = 1
    call_super_init: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if not self.call_super_init and (args or kwargs):
            if kwargs:
                raise TypeError(
                    f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                    f"'{next(iter(kwargs))}'"
                )
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_is_full_backward_hook"] = None
        for name in _HOOK_DICTS:
            d[name] = OrderedDict()

    forward: Callable[..., Any]

    def _forward_unimplemented(self, *input: Any) -> None:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    forward = _forward_unimplemented

    # ------------------------------------------------------------------ registration
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None) under name."""
        STATE[0] += 1
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (or None) under name; a non-persistent one stays out of the state
        dict."""
        STATE[0] += 1
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def _check_name(self, kind: str, name, own: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in own:
            raise KeyError(f"attribute '{name}' already exists")

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or None) under name."""
        STATE[0] += 1
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value) -> None:
        STATE[0] += 1
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "__dict__", "_buffers", "_modules")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, "__dict__", "_parameters", "_buffers")
            self._modules[name] = value
        elif name in d.get("_modules", ()):
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            self._modules[name] = value
        elif isinstance(value, Buffer) or name in d.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, *places: str) -> None:
        for place in places:
            (self.__dict__ if place == "__dict__" else self.__dict__[place]).pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for place in ("_parameters", "_buffers", "_modules"):
            own = d.get(place)
            if own is not None and name in own:
                return own[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        STATE[0] += 1
        for place in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[place]:
                del self.__dict__[place][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ------------------------------------------------------------------ lookup
    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path ('' is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or with strict=False, add) the submodule at a dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        if not isinstance(module, Module):
            raise ValueError(
                "`module` is not an nn.Module, found " + str(type(module)).replace("'", "")
            )
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def _member(self, target: str):
        """(owning submodule, name, value) of the attribute at a dotted path."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name, getattr(mod, name)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path."""
        _, name, param = self._member(target)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path."""
        mod, name, buf = self._member(target)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buf

    def get_extra_state(self) -> Any:
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not Module.get_extra_state

    # ------------------------------------------------------------------ walks
    def _named_members(self, members, prefix="", recurse=True, remove_duplicate=True):
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        seen = set()
        for mod_prefix, mod in mods if recurse else [(prefix, self)]:
            for k, v in members(mod):
                if v is None or id(v) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mod_prefix + ("." if mod_prefix else "") + k, v)

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs of this module and, with recurse, its
        descendants."""
        return self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs of this module and, with recurse, its descendants."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, mod in self._modules.items():
            if mod is not None and id(mod) not in seen:
                seen.add(id(mod))
                yield name, mod

    def children(self) -> Iterator[Module]:
        for _, mod in self.named_children():
            yield mod

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) pairs of this module and all its descendants, self first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, mod in self._modules.items():
            if mod is None:
                continue
            yield from mod.named_modules(
                memo, prefix + ("." if prefix else "") + name, remove_duplicate
            )

    def modules(self) -> Iterator[Module]:
        for _, mod in self.named_modules():
            yield mod

    def __hash__(self) -> int:
        return id(self)

    # ------------------------------------------------------------------ modes and grads
    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and its descendants."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for mod in self.children():
            mod.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None, or to zeros in place)."""
        reset_grads(self.parameters(), set_to_none)

    def share_memory(self) -> Module:
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call fn on every descendant, then on self."""
        for mod in self.children():
            mod.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ conversion
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace every parameter's and buffer's values by fn(values), keeping the
        Parameter objects (and their grads converted alike)."""
        if recurse:
            for mod in self.children():
                mod._apply(fn)
        for p in self._parameters.values():
            if p is None or is_lazy(p):
                continue
            with no_grad():
                new = fn(p)
            p._data = new._data
            if p._grad is not None:
                with no_grad():
                    p._grad = fn(p._grad)
        for k, b in self._buffers.items():
            if b is not None and not is_lazy(b):
                self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``; only floating and complex ones change dtype."""
        device, dtype, _ = to_args(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )

        def convert(t: Tensor) -> Tensor:
            keep = dtype is None or not (t.is_floating_point() or t.is_complex())
            return t.to(device=device, dtype=None if keep else dtype)

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Move parameters and buffers to ``device`` without copying their values: each gets
        uninitialized storage of its shape and dtype there (a module built on the meta
        device then takes ``reset_parameters()``)."""
        return self._apply(lambda t: empty_like(t, device=device), recurse)

    def _cast(self, dtype: dt.dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._cast(dt.float32)

    def double(self) -> Module:
        return self._cast(dt.float64)

    def half(self) -> Module:
        return self._cast(dt.float16)

    def bfloat16(self) -> Module:
        return self._cast(dt.bfloat16)

    def type(self, dst_type) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    # ------------------------------------------------------------------ hooks
    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """hook(module, args) -> None or new args; with_kwargs: hook(module, args, kwargs)
        -> None or (new args, new kwargs)."""
        return _add_hook(
            self._forward_pre_hooks,
            hook,
            prepend,
            (self._forward_pre_hooks_with_kwargs,),
            (with_kwargs,),
        )

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """hook(module, args, output) -> None or new output; with_kwargs: hook(module, args,
        kwargs, output); always_call: also when forward raised."""
        return _add_hook(
            self._forward_hooks,
            hook,
            prepend,
            (self._forward_hooks_with_kwargs, self._forward_hooks_always_called),
            (with_kwargs, always_call),
        )

    def register_full_backward_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """hook(module, grad_output) -> None or new grad_output, before the module's
        input gradients are computed."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) -> None or new grad_input, once the
        gradients with respect to the module's inputs are computed."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single "
                "Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, prefix, keep_vars), before state_dict collects this module."""
        return _add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata), after state_dict collected this
        module (a hook may modify the dict in place)."""
        return _add_hook(self._state_dict_hooks, hook, False)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs), before this module loads its entries."""
        return _add_hook(self._load_state_dict_pre_hooks, hook, False)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, incompatible_keys), after load_state_dict loaded this module."""
        return _add_hook(self._load_state_dict_post_hooks, hook, False)

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _global_forward_pre_hooks
            or _global_forward_hooks
            or _global_backward_hooks
            or _global_backward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    _call_impl = __call__

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        """The call with its hooks (PyTorch's order): the global then the module's forward
        pre-hooks, the backward hooks' setup, forward, the global then the module's forward
        hooks. Where any of it raises, the always-called forward hooks that have not run
        yet run (an error of theirs becomes a warning) and the error propagates."""
        result = None
        called = set()
        try:
            for key, hook in [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
                if key in self._forward_pre_hooks_with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if not (isinstance(res, tuple) and len(res) == 2):
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, "
                                f"new_kwargs), but got {res}."
                            )
                        args, kwargs = res
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            backward = None
            hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
            pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
            if hooks or pre_hooks:
                from ._backward_hooks import BackwardHook

                backward = BackwardHook(self, hooks, pre_hooks)
                args = backward.setup_inputs(args)
            result = self.forward(*args, **kwargs)
            for key, hook in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                if key in self._forward_hooks_always_called or (
                    key in _global_forward_hooks_always_called
                ):
                    called.add(key)
                if (
                    key in self._forward_hooks_with_kwargs
                    or key in _global_forward_hooks_with_kwargs
                ):
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
            if backward is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or a "
                        f"tuple of Tensors but received {type(result)}",
                        stacklevel=2,
                    )
                result = backward.setup_outputs(result)
            return result
        except Exception:
            kinds = (
                (_global_forward_hooks, _global_forward_hooks_always_called, (), "global module"),
                (
                    self._forward_hooks,
                    self._forward_hooks_always_called,
                    self._forward_hooks_with_kwargs,
                    "module",
                ),
            )
            for hooks, always, with_kwargs, what in kinds:
                for key, hook in list(hooks.items()):
                    if key not in always or key in called:
                        continue
                    try:
                        if key in with_kwargs:
                            res = hook(self, args, kwargs, result)
                        else:
                            res = hook(self, args, result)
                        if res is not None:
                            result = res
                    except Exception as e:
                        warnings.warn(
                            f"{what} forward hook with ``always_call=True`` raised an "
                            "exception that was silenced as another error was raised in "
                            f"forward: {e}",
                            stacklevel=2,
                        )
            raise

    # ------------------------------------------------------------------ state dict
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of dotted name -> tensor of every parameter and persistent
        buffer (detached unless keep_vars)."""
        if args:  # the deprecated positional form (destination, prefix, keep_vars)
            given = list(args) + [destination, prefix, keep_vars][len(args) :]
            destination, prefix, keep_vars = given[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, mod in self._modules.items():
            if mod is not None:
                mod.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            res = hook(self, destination, prefix, local_metadata)
            if res is not None:
                destination = res
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                self,
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local = {k: v for k, v in {**self._parameters, **persistent}.items() if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if is_lazy(param):
                with no_grad():
                    param.materialize(value.shape, dtype=param._pending_dtype)
            if value.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{value.size()}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + "_extra_state"
        if self._has_extra_state():
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix) :].partition(".")
                if (head not in self._modules) if dot else (head not in local):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy (or with assign, set) parameters and buffers from state_dict; strict
        requires the keys to match exactly. Returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(mod: Module, local_state: dict, prefix: str = "") -> None:
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = assign
            mod._load_from_state_dict(local_state, prefix, meta, True, missing, unexpected, errors)
            for name, child in mod._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(
                        child,
                        {k: v for k, v in local_state.items() if k.startswith(child_prefix)},
                        child_prefix,
                    )
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in mod._load_state_dict_post_hooks.values():
                hook(mod, keys)

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------ printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's own settings, printed inside its repr's parentheses."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({key}): " + _addindent(repr(mod), 2) for key, mod in self._modules.items()
        ]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"
