"""torch._dynamo.config against torch: its settings' defaults, setting and patching them,
and the errors for names it does not have."""

from __future__ import annotations

import pytest
import torch
from twolibs import assert_same_error

import numtorch as nt
from numtorch._dynamo import config as nt_config


@pytest.mark.parametrize("name", sorted(nt_config.get_config_copy()))
def test_defaults_match_torch(name):
    assert getattr(nt._dynamo.config, name) == getattr(torch._dynamo.config, name)


def test_module_is_the_attribute():
    import numtorch._dynamo.config as by_import

    assert by_import is nt._dynamo.config


def test_set_and_patch():
    c = nt._dynamo.config
    c.verbose = True
    try:
        with c.patch(verbose=False, cache_size_limit=3):
            assert (c.verbose, c.cache_size_limit) == (False, 3)
        with c.patch("cache_size_limit", 4):
            assert c.cache_size_limit == 4

        @c.patch({"suppress_errors": True})
        def read():
            return c.suppress_errors

        assert read() is True
        assert (c.verbose, c.cache_size_limit, c.suppress_errors) == (True, 8, False)
        assert c.get_config_copy()["verbose"] is True
    finally:
        c.verbose = False


@pytest.mark.parametrize("how", ["get", "set", "patch"])
def test_unknown_names(how):
    def prog(L):
        c = L._dynamo.config
        if how == "get":
            return c.no_such_setting
        if how == "set":
            c.no_such_setting = 1
        else:
            with c.patch(no_such_setting=1):
                pass

    assert_same_error(prog)
