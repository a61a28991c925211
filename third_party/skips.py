"""pytest plugin: the third-party tests numtorch skips, each with its reason.

Only tests that need CUDA, downloads, TorchScript internals or torch's C++ are skipped
(issue 33). Keys are substrings of pytest node ids.
"""

from __future__ import annotations

import os

import pytest

SKIPS: dict[str, str] = {}

# Skipped on the oracle too: the same tests cannot run on CPU-only PyTorch either.
BOTH: dict[str, str] = {}


def pytest_collection_modifyitems(config, items):
    table = BOTH if os.environ.get("NUMTORCH_THIRD_PARTY_ORACLE") else {**SKIPS, **BOTH}
    for item in items:
        for key, reason in table.items():
            if key in item.nodeid:
                item.add_marker(pytest.mark.skip(reason=reason))
                break
