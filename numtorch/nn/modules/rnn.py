"""Recurrent layers: RNN, LSTM, GRU (stacked, bidirectional, packed input) and their
one-step cells. Each forward is one call into the recurrent cores of ``nn._recurrent``."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable

from ..._core.tensor import Tensor
from ...ops.creation import empty, zeros
from .. import init
from .._recurrent import (
    gru,
    gru_cell,
    lstm,
    lstm_cell,
    rnn_relu,
    rnn_relu_cell,
    rnn_tanh,
    rnn_tanh_cell,
)
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_CORES = {"LSTM": lstm, "GRU": gru, "RNN_TANH": rnn_tanh, "RNN_RELU": rnn_relu}


_State = Tensor | tuple[Tensor, Tensor]


def _each(hx, fn: Callable[[Tensor], Tensor], pair: bool):
    """fn of the state, or of each of the two where ``pair`` (LSTM's (h, c))."""
    return tuple(fn(h) for h in hx) if pair else fn(hx)


def _permute(hx, permutation: Tensor | None):
    """The initial / final states in another batch order (a tuple of them for LSTM)."""
    if permutation is None:
        return hx
    return _each(hx, lambda h: h.index_select(1, permutation), isinstance(hx, (tuple, list)))


def _reset_uniform(module: Module) -> None:
    """Every parameter drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


def _check_type(name: str, value, kind: type) -> None:
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


class RNNBase(Module):
    """The stacked recurrent layers' common part: parameters ``weight_ih_l{k}[_reverse]``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``weight_hr_l{k}`` with LSTM
    projections), their checks, and forward on tensors or packed sequences."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dirs = 2 if bidirectional else 1
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not (0 <= dropout <= 1)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=2,
            )
        _check_type("bias", bias, bool)
        _check_type("batch_first", batch_first, bool)
        for name, size in (("input_size", input_size), ("hidden_size", hidden_size)):
            _check_type(name, size, int)
            if size <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gates = _GATES[mode] * hidden_size
        real = proj_size or hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(dirs):
                fan = input_size if layer == 0 else real * dirs
                shapes = {"weight_ih": (gates, fan), "weight_hh": (gates, real)}
                if bias:
                    shapes.update(bias_ih=(gates,), bias_hh=(gates,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{'_reverse' if direction else ''}"
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        """The parameters in the order the recurrent cores take them (read at each call, so
        a swapped-in tensor, as functional_call makes, is used)."""
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: the weights are never copied into one buffer here."""

    def reset_parameters(self) -> None:
        _reset_uniform(self)

    # ------------------------------------------------------------------ checks
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        want = 2 if batch_sizes is not None else 3
        if input.dim() != want:
            raise RuntimeError(f"input must have {want} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def _state_shape(self, batch: int, size: int) -> tuple:
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    def _expected(self, input: Tensor, batch_sizes: Tensor | None, size: int) -> tuple:
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        return self._state_shape(batch, size)

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple:
        return self._expected(input, batch_sizes, self.proj_size or self.hidden_size)

    def check_hidden_size(
        self, hx: Tensor, expected_hidden_size: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: _State, permutation: Tensor | None) -> _State:
        return _permute(hx, permutation)

    # ------------------------------------------------------------------ forward
    def _zeros(self, input: Tensor, batch: int) -> _State:
        like = {"dtype": input.dtype, "device": input.device}
        h = zeros(self._state_shape(batch, self.proj_size or self.hidden_size), **like)
        if self.mode != "LSTM":
            return h
        return h, zeros(self._state_shape(batch, self.hidden_size), **like)

    def _hx_dims(self, hx, batched: bool) -> None:
        """The unbatched / batched check of the initial state's rank (RNN and GRU's)."""
        want = 3 if batched else 2
        if hx.dim() != want:
            kind = "batched 3-D" if batched else "unbatched 2-D"
            raise RuntimeError(
                f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor"
            )

    def _dims_error(self, input: Tensor) -> str:
        return f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead"

    def forward(
        self, input: Tensor | PackedSequence, hx: _State | None = None
    ) -> tuple[Tensor | PackedSequence, _State]:
        if isinstance(input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            hx = (
                self._zeros(input, int(batch_sizes[0]))
                if hx is None
                else _permute(hx, sorted_indices)
            )
            batched = True
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                raise ValueError(self._dims_error(input))
            batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
            if hx is None:
                hx = self._zeros(input, input.size(batch_dim))
            else:
                self._hx_dims(hx, batched)
                if not batched:
                    hx = _each(hx, lambda h: h.unsqueeze(1), isinstance(hx, (tuple, list)))
        self.check_forward_args(input, hx, batch_sizes)
        head = (input,) if batch_sizes is None else (input, batch_sizes)
        tail = () if batch_sizes is not None else (self.batch_first,)
        result = _CORES[self.mode](
            *head,
            hx,
            self._flat_weights,
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
            *tail,
        )
        output, hidden = result[0], (tuple(result[1:]) if self.mode == "LSTM" else result[1])
        if batch_sizes is not None:
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, _permute(hidden, unsorted_indices)
        if not batched:
            output = output.squeeze(batch_dim)
            hidden = _each(hidden, lambda h: h.squeeze(1), isinstance(hidden, tuple))
        return output, hidden

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)


def _no_proj(kwargs: dict) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    """An Elman RNN (tanh or relu): ``RNN(input_size, hidden_size, num_layers=1,
    nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0, bidirectional=False,
    device=None, dtype=None)``."""

    def __init__(self, *args, **kwargs) -> None:
        _no_proj(kwargs)
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__("RNN_" + self.nonlinearity.upper(), *args, **kwargs)

    def _dims_error(self, input: Tensor) -> str:
        return f"RNN: Expected input to be 2D or 3D, got {input.dim()}D tensor instead"


class LSTM(RNNBase):
    """A long short-term memory layer, with optional projections (``proj_size``); forward
    returns ``(output, (h_n, c_n))``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple:
        return self._expected(input, batch_sizes, self.hidden_size)

    def check_forward_args(
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None
    ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def _hx_dims(self, hx, batched: bool) -> None:
        want = 3 if batched else 2
        if hx[0].dim() != want or hx[1].dim() != want:
            kind = "batched 3-D" if batched else "unbatched 2-D"
            raise RuntimeError(
                f"For {kind} input, hx and cx should also be {want}-D but got "
                f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
            )


class GRU(RNNBase):
    """A gated recurrent unit layer."""

    def __init__(self, *args, **kwargs) -> None:
        _no_proj(kwargs)
        super().__init__("GRU", *args, **kwargs)


# ------------------------------------------------------------------ cells
class RNNCellBase(Module):
    """One step of a recurrent layer: ``weight_ih``, ``weight_hh``, ``bias_ih``,
    ``bias_hh`` of ``num_chunks`` gates."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(empty((gates, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(empty((gates, hidden_size), device=device, dtype=dtype))
        for name in ("bias_ih", "bias_hh"):
            if bias:
                setattr(self, name, Parameter(empty(gates, device=device, dtype=dtype)))
            else:
                self.register_parameter(name, None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        _reset_uniform(self)

    _cell: Callable  # (input, hx, weight_ih, weight_hh, bias_ih, bias_hh) -> the new state

    def _core(self) -> Callable:
        return self._cell

    def _check_hx(self, hx) -> None:
        if hx.dim() not in (1, 2):
            raise ValueError(
                f"{type(self).__name__}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead"
            )

    def forward(self, input: Tensor, hx: _State | None = None) -> _State:
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            self._check_hx(hx)
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        lstm_ = isinstance(self, LSTMCell)
        if hx is None:
            h = zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (h, h) if lstm_ else h
        elif not batched:
            hx = _each(hx, lambda h: h.unsqueeze(0), lstm_)
        out = self._core()(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else _each(out, lambda o: o.squeeze(0), lstm_)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN (tanh or relu)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _core(self) -> Callable:
        cell = {"tanh": rnn_tanh_cell, "relu": rnn_relu_cell}.get(self.nonlinearity)
        if cell is None:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return cell


class LSTMCell(RNNCellBase):
    """One LSTM step; forward returns ``(h', c')``."""

    _cell = staticmethod(lstm_cell)

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def _check_hx(self, hx) -> None:
        for idx, value in enumerate(hx):
            if value.dim() not in (1, 2):
                raise ValueError(
                    f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                )


class GRUCell(RNNCellBase):
    """One GRU step."""

    _cell = staticmethod(gru_cell)

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)
