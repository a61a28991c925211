"""Indexing ops, one module per family. Importing the package registers them in this
order (the op database's): basic (getitem), advanced (index, index_put), subscript
(Tensor.__getitem__ / __setitem__), copy_fill (copy, fill), gather_scatter, index_ops
(index_select, index_add/fill/copy), take_put (take, put, take_along_dim), masked
(masked_fill/scatter/select), positions (nonzero, argwhere, one_hot).

The names other modules use are importable from here."""

# The imports run in registration order, not sorted: first the families the indexing ops
# build on, then the modules here.
# ruff: noqa: F401, I001

from .. import comparison, creation, views
from ._common import check_index_dtype
from .basic import getitem_p, getitem_backward
from .advanced import index_p, index_put, index_put_, index_put_p
from .subscript import tensor_getitem, tensor_setitem
from .copy_fill import copy, fill_p, fill_, zero_
from .gather_scatter import (
    dim_family,
    gather,
    gather_p,
    scatter,
    scatter_,
    scatter_add_p,
    scatter_add_,
    scatter_add,
    scatter_p,
    scatter_reduce,
    scatter_reduce_,
    scatter_reduce_p,
    sr_stats_p,
)
from .index_ops import (
    index_add,
    index_add_,
    index_add_p,
    index_copy,
    index_copy_,
    index_copy_p,
    index_fill,
    index_fill_,
    index_fill_p,
    index_select,
    index_select_p,
    index_update_rule,
)
from .take_put import put_p, take_p, take_along_dim_p
from .masked import masked_fill_p, masked_scatter_p, masked_select_p
from .positions import argwhere_p, dynamic_shape, nonzero, nonzero_p, one_hot_p
