"""torch._dynamo.utils: the counters compiled autograd and compile keep."""

from __future__ import annotations

from collections import Counter, defaultdict

# counters["compiled_autograd"]["captures"] / ["compiles"], as PyTorch's.
counters: defaultdict[str, Counter] = defaultdict(Counter)
