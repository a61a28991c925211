"""The probs/logits parametrisation of the Bernoulli and categorical families: exactly one
of the two is given and stored, the other is derived on first use (and skipped by
argument validation when it was not given)."""

from __future__ import annotations

from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

_ONE_OF = "Either `probs` or `logits` must be specified, but not both."


def one_of(probs, logits):
    """``(name, value)`` of the one parameter given, or PyTorch's ValueError."""
    if (probs is None) == (logits is None):
        raise ValueError(_ONE_OF)
    return ("probs", probs) if probs is not None else ("logits", logits)


def store_probs_or_logits(dist, probs, logits, *others):
    """Broadcast the one given of ``probs``/``logits`` with ``others`` (tensors or
    numbers), store it under its name and as ``dist._param``; return ``others``
    broadcast."""
    name, value = one_of(probs, logits)
    *others, param = broadcast_all(*others, value)
    setattr(dist, name, param)
    dist._param = param
    return others


class GivenParam:
    """``param_shape`` and ``_new`` read off ``_param``, the parameter given."""

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def param_shape(self):
        return self._param.size()


class BinaryProbsLogits:
    """``probs`` and ``logits`` of a binary outcome, each derived from the other."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)
