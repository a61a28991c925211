"""The fast path of a cache hit: a backward pass's graph checked node by node against a
template of a graph met before (the same structure, attributes, sizes and saved values'
kinds), instead of walked into keys, looked up in the trie and its sizes compared.

A template is made from a pass that hit the cache and ran a program made for exactly its
sizes (a ``Variant``); a later pass that matches it runs that program. Whatever a
template cannot judge (hooks on a node, a node called as it is, attribute values
compared otherwise than by value or identity) is left to the full walk: no template is
made for such a graph, and a pass that does not match one takes the full walk.
"""

from __future__ import annotations

from itertools import count as counting
from itertools import islice, repeat
from operator import attrgetter, eq, gt, itemgetter

import numpy as np

from .._core.device import _cuda_used
from .._core.tensor import Tensor
from ..autograd import engine
from ..autograd.graph import _ACCUMULATE_SEQ, AccumulateGrad, CopySlices, Node
from ._walk import _Break, _hook_flags, _layout, _saved_arrays, _Walk

# Templates by the type of the first root's node, most recently matched first.
_TEMPLATES: dict = {}
_KEPT = 4


class _Template:
    """A graph met before, in the walk's breadth-first order: per node what a match must
    equal (its head: type, op, attributes, metadata), its edges (each a target and an
    input number; the target a node index, ``_NEW`` for a node not seen before, ``_NONE``
    for none), and its saved non-array values; the pass's roots, order, inputs, dtypes,
    and the program (``variant``) to run."""

    __slots__ = (
        "entry",
        "variant",
        "recs",
        "roots",
        "accumulate",
        "keep_graph",
        "order",
        "inputs",
        "dtypes",
        "types",
        "shapes",
        "layouts",
    )


def _plain(v) -> bool:
    """Whether ``==`` on v means what the trie's key comparison means (equal values, or
    the same object), so that a template may compare it."""
    t = type(v)
    if t in _SCALARS or isinstance(v, np.dtype):
        return True
    if t is tuple or t is list or isinstance(v, tuple):
        return all(_plain(x) for x in v)
    if t is dict:
        return all(_plain(k) and _plain(x) for k, x in v.items())
    if isinstance(v, Tensor) or isinstance(v, np.ndarray):
        return False
    return t.__eq__ is object.__eq__ and t.__hash__ is not None


_NEW, _NONE = -2, -1  # an edge's target: a node not seen before, no node

_SCALARS = frozenset((type(None), bool, int, float, complex, str, slice, type(...)))


def remember(w: _Walk, entry, variant) -> None:
    """Make a template of the walk ``w`` (a pass that hit ``entry`` and is about to run
    ``variant``, the program made for its sizes), if it can judge the graph."""
    if w.stop is not None:
        return
    try:
        t = _template(w, entry, variant)
    except _Break:
        return
    if t is None:
        return
    key = type(w.roots[0][0]) if w.roots else None
    kept = [k for k in _TEMPLATES.get(key, ()) if not (k.entry is entry and k.variant is variant)]
    _TEMPLATES[key] = [t, *kept[: _KEPT - 1]]


def _template(w: _Walk, entry, variant) -> _Template | None:
    nodes, index = w.nodes, w.index
    recs: list = []
    count = len({n for n, _ in w.roots if n is not None})
    ordered, last = True, 1 << 64
    arrays: list = []
    heads: dict = {}  # (equal heads, specs and records made one object each: a match
    specs: dict = {}  # reads a few, hot in cache)
    pool: dict = {}
    counts: list = []  # per node, how many nodes the walk had found when it got there
    for node in nodes:
        counts.append(count)
        cls = type(node)
        if cls is AccumulateGrad:
            head = _leaf_head(node)
            if not head[0]:
                ordered = False
            recs.append(heads.setdefault(head, (None, head, None)))
            continue
        if cls is CopySlices or cls is Node or node._opaque or node._any_hooks:
            return None
        op = node._op
        if op is None or op.recorder is not None:
            return None
        saved = node.saved
        if saved is None:
            return None
        attrs, out_meta, in_meta = node.attrs, node._out_meta, node.in_meta
        key = (cls, op, tuple(attrs.items()), out_meta, tuple(in_meta), not saved)
        head = _pooled(heads, key)
        if head is None:
            head = (cls, op, dict(attrs), out_meta, in_meta, False)
            # (nothing saved: the shared empty dict, compared with the head)
            head = (*head, saved) if not saved else head
            if not (_plain(head[2]) and _plain(head[3]) and _plain(head[4])):
                return None
            _pool(heads, key, head)
        spec = None
        if saved:
            raws: list = []
            metas: list = []
            if not _saved_arrays(saved, arrays, raws, metas):
                return None
            key = (tuple(raws), tuple(metas))
            spec = _pooled(specs, key)
            if spec is None:
                spec = (raws, metas)
                if not (_plain(raws) and _plain(metas)):
                    return None
                _pool(specs, key, spec)
        edges = []
        for nxt, nr in node.next_functions:
            j = _NONE if nxt is None else index[nxt]
            if j == count:
                j = _NEW
                count += 1
            edges.append((j, nr))
        seq = node._seq
        if seq >= last:
            ordered = False
        last = seq
        rec = (head, tuple(edges), spec)
        recs.append(pool.setdefault((id(head), rec[1], id(spec)), rec))
    _find_runs(recs, counts)
    t = _Template()
    t.entry, t.variant, t.recs = entry, variant, recs
    t.roots = tuple(None if n is None else (index[n], nr) for n, nr in w.roots)
    t.accumulate, t.keep_graph = w.accumulate, w.keep_graph
    t.order = None if ordered else _order(nodes)
    t.inputs = None if w.inputs is None else _inputs_key(w.inputs, index)
    t.dtypes = tuple(None if a is None else a.dtype for a in w.arrays)
    t.types = tuple(type(a) for a in w.arrays) if _cuda_used[0] else None
    t.shapes = variant.sig[0][-1]
    t.layouts = variant.sig[1]
    return t


_RUN = object()  # a record's spec where a run starts (its head None, its edges the run's)
_SHORTEST = 16  # the shortest run worth checking in C


def _find_runs(recs: list, counts: list) -> None:
    """Mark the runs of the records: equal records of nodes that save nothing, each node
    the last one found when the walk gets to it and finding exactly one new node (a
    chain: node k+1 is node k's edge). A match checks a run in C, a chunk at a time."""
    k, n = 0, len(recs)
    while k < n:
        rec = recs[k]
        head, edges, spec = rec
        news = [q for q, (j, _) in enumerate(edges) if j == _NEW] if head is not None else []
        if spec is not None or len(news) != 1 or counts[k] != k + 1:
            k += 1
            continue
        end = k + 1
        while end < n and recs[end] is rec:
            end += 1
        if end - k >= _SHORTEST:
            recs[k] = (None, (k, end - k, rec, news[0]), _RUN)
        k = end


def _match_run(nodes: list, run: tuple, last: int):
    """Check a run of nodes (see ``_find_runs``) from its first, the walk's last node,
    finding the nodes its edges lead to: (the last sequence number, whether the run's
    are falling from ``last``), or None where the run differs."""
    k, n, (head, edges, _), p = run
    if len(nodes) != k + 1:
        return None
    src = map(nodes.__getitem__, counting(k))  # (reads each node once the last appended it)
    nodes.extend(islice(map(_target, map(itemgetter(p), map(_next, src))), n))
    if len(nodes) != k + n + 1:
        return None
    fixed = [(None if j == _NONE else nodes[j], nr) for j, nr in edges]
    ordered = True
    for c in range(k, k + n, _CHUNK):  # (a chunk's nodes stay in cache between passes)
        e = min(c + _CHUNK, k + n)
        seg = nodes[c:e]
        if not all(map(eq, map(_plain_head, seg), repeat(head))):
            return None
        cols = [
            zip(nodes[c + 1 : e + 1], repeat(nr)) if q == p else repeat(fixed[q])
            for q, (_, nr) in enumerate(edges)
        ]
        if not all(map(eq, map(_next, seg), zip(*cols))):
            return None
        seqs = list(map(_seqs, seg))
        if seqs[0] >= last or not all(map(gt, seqs, islice(seqs, 1, None))):
            ordered = False
        last = seqs[-1]
    return last, ordered


_CHUNK = 256
_saving_head = attrgetter("__class__", "_op", "attrs", "_out_meta", "in_meta", "_any_hooks")
_plain_head = attrgetter("__class__", "_op", "attrs", "_out_meta", "in_meta", "_any_hooks", "saved")
_next = attrgetter("next_functions")
_seqs = attrgetter("_seq")
_target = itemgetter(0)


def _leaf_head(node) -> tuple:
    return (node._seq == _ACCUMULATE_SEQ, _hook_flags(node), node.variable._grad is None)


def _pooled(pool: dict, key):
    """The value pooled under ``key``, or None."""
    try:
        return pool.get(key)
    except TypeError:  # (an unhashable value inside: not pooled)
        return None


def _pool(pool: dict, key, v) -> None:
    try:
        pool[key] = v
    except TypeError:
        pass


def _order(nodes: list) -> tuple:
    return tuple(sorted(range(len(nodes)), key=lambda k: nodes[k]._seq))


def _inputs_key(inputs, index: dict) -> tuple:
    edges = (engine.edge_of(t) if isinstance(t, Tensor) else (t.node, t.output_nr) for t in inputs)
    return tuple(None if n not in index else (index[n], nr) for n, nr in edges)


def match(roots, grads, inputs, accumulate: bool, keep_graph: bool):
    """(the entry, a walk carrying the program to run) for a pass that matches a template
    made before, or None."""
    templates = _TEMPLATES.get(type(roots[0][0]) if roots else None)
    if not templates:
        return None
    try:
        w = _Walk(roots, grads, inputs, accumulate, keep_graph, None)
    except _Break:
        return None
    for k, t in enumerate(templates):
        try:
            same = _matches(t, w)
        except _Break:
            return None
        except (AttributeError, IndexError, TypeError, ValueError):  # (no node; other edges)
            same = False
        if not same:
            del w.nodes[len(w.index) :], w.arrays[len(roots) :]
            continue
        if k:
            templates.insert(0, templates.pop(k))
        w.kinds = w.at = None
        w.sig, w.layouts = t.variant.sig
        w.variant = t.variant
        return t.entry, w
    return None


def _matches(t: _Template, w: _Walk) -> bool:
    """Whether the walk's graph is the template's (filling in the walk's nodes and saved
    arrays as the full walk would)."""
    if t.accumulate != w.accumulate or t.keep_graph != w.keep_graph:
        return False
    index = w.index
    if tuple(None if n is None else (index[n], nr) for n, nr in w.roots) != t.roots:
        return False
    nodes, arrays = w.nodes, w.arrays
    push = nodes.append
    ordered, last = True, 1 << 64
    # one pass, each node's objects read once (they are cold: the forward made them)
    walk = zip(nodes, t.recs)
    for node, (head, edges, spec) in walk:
        if head is None and spec is _RUN:
            done = _match_run(nodes, edges, last)
            if done is None:
                return False
            last, falling = done
            ordered = ordered and falling
            next(islice(walk, edges[1] - 2, None), None)  # (past the run's other nodes)
            continue
        if head is None:  # a leaf (its head in ``edges``)
            if type(node) is not AccumulateGrad or edges != _leaf_head(node):
                return False
            if not edges[0]:
                ordered = False
            continue
        if (_plain_head if spec is None else _saving_head)(node) != head:
            return False
        if spec is not None:
            saved = node.saved
            if not saved:
                return False
            raws: list = []
            metas: list = []
            if not _saved_arrays(saved, arrays, raws, metas):
                return False
            if raws != spec[0] or metas != spec[1]:
                return False
        for (nxt, nr), (j, want) in zip(node.next_functions, edges, strict=True):
            if nr != want:
                return False
            if j < 0:
                if j == _NEW:
                    push(nxt)  # (a node seen before: the check of duplicates below)
                elif nxt is not None:
                    return False
            elif nodes[j] is not nxt:
                return False
        seq = node._seq
        if seq >= last:
            ordered = False
        last = seq
    n = len(nodes)
    if n != len(t.recs) or len(set(map(id, nodes))) != n:  # (id: no cold node read)
        return False
    if (w.inputs is None) != (t.inputs is None):
        return False
    if t.inputs is not None:
        index = dict(zip(nodes, range(n)))
        if len(index) != n or _inputs_key(w.inputs, index) != t.inputs:
            return False
    if (None if ordered else _order(nodes)) != t.order:
        return False
    if tuple(None if a is None else a.dtype for a in arrays) != t.dtypes:
        return False
    if t.types is not None or _cuda_used[0]:
        if t.types != tuple(type(a) for a in arrays):
            return False
    if [None if a is None else a.shape for a in arrays] != t.shapes:
        return False
    layouts = [None if a is None or a.flags.c_contiguous else _layout(a) for a in arrays]
    return layouts == t.layouts
