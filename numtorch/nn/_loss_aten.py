"""torch's top-level forms of the losses (``torch.kl_div``, ``torch.ctc_loss``, ...): the
functional losses with ATen's positional parameters and its integer ``reduction``.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable

from ._loss_ctc import ctc_loss
from ._loss_likelihood import binary_cross_entropy_with_logits, kl_div, poisson_nll_loss
from ._loss_margin import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    triplet_margin_loss,
)


def _aten_loss(fn: Callable, params: str) -> Callable:
    """``torch.<name>``: ``fn`` with ATen's positional parameters (space-separated
    ``params``, ``name=default`` for optional ones) and its integer ``reduction`` (0 none,
    1 mean, 2 sum; torch's binding defaults it to 0)."""
    names = [p.split("=")[0] for p in params.split()]
    defaults = {
        n: ast.literal_eval(d) for n, _, d in (p.partition("=") for p in params.split()) if d
    }

    def aten(*args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{fn.__name__}() takes {len(names)} positional arguments")
        bound = {**defaults, **dict(zip(names, args)), **kwargs}
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(
                f"{fn.__name__}() missing {len(missing)} required positional "
                f"argument: {', '.join(map(repr, missing))}"
            )
        if "reduction" in bound:
            bound["reduction"] = ("none", "mean", "sum")[bound["reduction"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # F's deprecation notes are not ATen's
            return fn(**bound)

    aten.__name__ = aten.__qualname__ = fn.__name__
    aten.__doc__ = f"``torch.{fn.__name__}({', '.join(params.split())})``, reduction an int."
    return aten


ATEN_LOSSES = {
    f.__name__: _aten_loss(f, params)
    for f, params in (
        (binary_cross_entropy_with_logits, "input target weight=None pos_weight=None reduction=0"),
        (cosine_embedding_loss, "input1 input2 target margin=0.0 reduction=0"),
        (
            ctc_loss,
            "log_probs targets input_lengths target_lengths blank=0 reduction=0 "
            "zero_infinity=False",
        ),
        (hinge_embedding_loss, "input target margin=1.0 reduction=0"),
        (kl_div, "input target reduction=0 log_target=False"),
        (margin_ranking_loss, "input1 input2 target margin=0.0 reduction=0"),
        (poisson_nll_loss, "input target log_input full eps reduction"),
        (
            triplet_margin_loss,
            "anchor positive negative margin=1.0 p=2 eps=1e-06 swap=False reduction=0",
        ),
    )
}
