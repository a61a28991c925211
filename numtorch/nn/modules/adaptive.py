"""nn.AdaptiveLogSoftmaxWithLoss: a softmax over many classes as a head over the frequent
ones plus one slot per cluster of rarer ones, each cluster with its own smaller softmax."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

from ..._core.tensor import Tensor
from ...ops.shape import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation (Grave et al.): classes below ``cutoffs[0]`` are
    scored by the head, the rest by clusters reached through the head's extra slots."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i, (lo, hi) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **kw),
                    Linear(hidden, hi - lo, bias=False, **kw),
                )
            )

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for proj in self.tail:
            for layer in proj:
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        """(log-probability of each row's target, the mean negative of it)."""
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size",
                    input_.size(),
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size",
                    input_.size(),
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        if n and (int(target.min()) < 0 or int(target.max()) > self.n_classes - 1):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        # A row's head slot is its class (shortlist) or its cluster's slot; rows of a
        # cluster add their log-probability within the cluster.
        head_slot = target.clone()
        within = input.new_zeros(n)
        for i, (lo, hi) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            rows = ((target >= lo) & (target < hi)).nonzero().flatten()
            if rows.numel() == 0:
                continue
            head_slot = head_slot.index_fill(0, rows, self.shortlist_size + i)
            logp = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            picked = logp.gather(1, (target.index_select(0, rows) - lo).unsqueeze(1))
            within = within.index_copy(0, rows, picked.squeeze(1))
        head_logp = F.log_softmax(self.head(input), dim=1)
        output = within + head_logp.gather(1, head_slot.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logp = F.log_softmax(head_output, dim=1)
        parts = [head_logp[:, : self.shortlist_size]]
        for i, proj in enumerate(self.tail):
            slot = head_logp[:, self.shortlist_size + i].unsqueeze(1)
            parts.append(F.log_softmax(proj(input), dim=1) + slot)
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class: (N, n_classes), or (n_classes,) unbatched."""
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (the head's choice when it is a shortlist
        class, which no clustered class can then beat)."""
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        choice = head_output.argmax(dim=1)
        far = choice >= self.shortlist_size
        if bool(far.any()):
            rows = far.nonzero().flatten()
            full = self._full_log_prob(x.index_select(0, rows), head_output.index_select(0, rows))
            choice = choice.index_copy(0, rows, full.argmax(dim=1))
        return choice if batched else choice.squeeze(0)
