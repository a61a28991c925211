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
from .basic import getitem, getitem_backward
from .advanced import index_op, index_put, index_put_, index_put_op
from .subscript import tensor_getitem, tensor_setitem
from .copy_fill import copy, fill, fill_, zero_
from .gather_scatter import (
    dim_family,
    gather,
    gather_op,
    scatter,
    scatter_,
    scatter_add,
    scatter_add_,
    scatter_add_fn,
    scatter_op,
    scatter_reduce,
    scatter_reduce_,
    scatter_reduce_op,
    sr_stats,
)
from .index_ops import (
    index_add,
    index_add_,
    index_add_op,
    index_copy,
    index_copy_,
    index_copy_op,
    index_fill,
    index_fill_,
    index_fill_op,
    index_select,
    index_select_op,
    index_update_rule,
)
from .take_put import put_op, take, take_along_dim
from .masked import masked_fill_op, masked_scatter_op, masked_select
from .positions import argwhere, dynamic_shape, nonzero, nonzero_op, one_hot
