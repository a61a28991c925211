"""torch.nn (modules come later); ``functional`` is filled from op modules' API dicts."""

from . import functional, init, utils  # noqa: F401
