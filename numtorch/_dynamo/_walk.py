"""The walk of a backward pass's graph: one cache key per node (with its kind, the saved
arrays in order and the sizes its program is specialized to), and the trie of captured
graphs (PyTorch's shadow graph) that a pass looks its keys up in and a capture stores
them in."""

from __future__ import annotations

from .._core.device import _cuda_used
from .._core.tensor import Tensor
from ..autograd import engine
from ..autograd.graph import (
    _ACCUMULATE_SEQ,
    AccumulateGrad,
    CopySlices,
    Node,
    Saved,
    _SavedList,
    _SavedTuple,
)


class _Trie:
    __slots__ = ("children", "entry")

    def __init__(self) -> None:
        self.children: dict = {}
        self.entry: _Entry | None = None


class _Entry:
    """A captured graph: what ``compiler_fn`` made of it, and whether it serves any size."""

    __slots__ = ("fn", "graph", "dynamic", "sig")

    def __init__(self, fn, graph, dynamic: bool, sig) -> None:
        self.fn = fn
        self.graph = graph
        self.dynamic = dynamic
        self.sig = sig


_CACHE = _Trie()

# A node's kind in the walk: an op's node (its formulas are traced), a built-in node
# called as it is (a CopySlices, or a node whose saved values go through unpack hooks),
# a leaf's AccumulateGrad.
_OP, _OPAQUE, _LEAF = 0, 1, 2


class _Walk:
    """One backward call's graph as the cache and the compiled code see it: its nodes
    breadth first from the roots, each one's kind and where its sizes start in ``sig``,
    the root gradients and saved arrays in order (``arrays``), the sizes and layouts a
    program is specialized to; its keys."""

    __slots__ = (
        "roots",
        "inputs",
        "accumulate",
        "keep_graph",
        "stop",
        "nodes",
        "index",
        "kinds",
        "at",
        "arrays",
        "sig",
        "layouts",
        "keys",
        "variant",
        "entry",
    )

    def __init__(self, roots, grads, inputs, accumulate: bool, keep_graph: bool, stop) -> None:
        self.roots = roots
        self.inputs = inputs
        self.accumulate = accumulate
        self.keep_graph = keep_graph
        self.stop = stop  # nodes the walk does not go past (as leaves)
        self.nodes: list = []
        self.index: dict = {}
        for node, _ in roots:
            if node is not None and node not in self.index:
                self.index[node] = len(self.nodes)
                self.nodes.append(node)
        # each node's kind and where its sizes start in ``sig`` (None in a walk made for
        # a lookup alone: ``complete`` fills them in for a capture)
        self.kinds: list | None = []
        self.at: list | None = []
        self.arrays: list = []
        for g in grads:
            if g is None:
                self.arrays.append(None)
                continue
            if type(g) is not Tensor and g._level:
                raise _Break
            self.arrays.append(g._data)
        self.sig: list = []  # compared, not hashed: it holds lists
        self.layouts: list | None = None
        self.keys: list = []
        # the program to run, where a template matched (``_match``); the cache entry hit,
        # where a program run for exactly these sizes is to be remembered as a template
        self.variant = None
        self.entry = None


class _Break(Exception):
    """The pass must run eagerly (a custom autograd.Function, a freed graph, a stale
    saved tensor: eager raises the exact error)."""


def walk(roots, grads, inputs, accumulate: bool, keep_graph: bool, stop=None, full=True) -> _Walk:
    """The pass's walk: its keys (``keys``), nodes, kinds, saved arrays and sizes. It does
    not go past the nodes in ``stop``. Not ``full``: the kinds and size starts are left
    out (what a lookup and a replay need not)."""
    w = _Walk(roots, grads, inputs, accumulate, keep_graph, stop)
    if not full:
        w.kinds = w.at = None
    w.keys = _keys(w)
    return w


def complete(w: _Walk) -> None:
    """Fill in the kinds and size starts a lookup's walk left out (a second walk)."""
    if w.kinds is not None:
        return
    twin = _Walk(w.roots, [], w.inputs, w.accumulate, w.keep_graph, w.stop)
    twin.arrays = w.arrays[: len(w.roots)]
    _keys(twin)
    w.kinds, w.at = twin.kinds, twin.at


def lookup(w: _Walk) -> _Entry | None:
    """The trie entry the walk's keys lead to (a captured graph), or None."""
    trie = _CACHE
    for key in w.keys:
        try:
            trie = trie.children.get(key)
        except TypeError:  # an unhashable attribute
            trie = trie.children.get(_freeze(key))
        if trie is None:
            return None
    return trie.entry


def _keys(w: _Walk) -> list:
    """The walk's keys in order: its roots', one per node breadth first (filling in the
    node's kind, its saved arrays and sizes), then the pass's own (the order nodes run
    in, where the gradients go, dtypes, array types); ``w`` then holds the sizes and
    layouts (``sig``, ``layouts``)."""
    keys: list = []
    add = keys.append
    nodes, index, arrays, metas = w.nodes, w.index, w.arrays, w.sig
    full = w.kinds is not None  # (else the kinds go to a list thrown away)
    kinds, at, stop = (w.kinds if full else []).append, w.at.append if full else None, w.stop
    add((tuple(None if n is None else (index[n], nr) for n, nr in w.roots), w.accumulate))
    push, find, meta = nodes.append, index.get, metas.append
    count = len(nodes)
    ordered = True  # sequence numbers fall along the walk (leaves aside)
    last = 1 << 64
    for node in nodes:  # (breadth first: the loop reaches the nodes appended as it goes)
        if full:
            at(len(metas))
        if stop and node in stop:
            kinds(_LEAF)
            add((_LEAF,))
            continue
        cls = type(node)
        if cls is AccumulateGrad:  # (leaves share one sequence number: they run first)
            if node._seq != _ACCUMULATE_SEQ:
                ordered = False
            kinds(_LEAF)
            add((_LEAF, _hook_flags(node), node.variable._grad is None))
            continue
        edges = []
        edge = edges.append
        for nxt, nr in node.next_functions:
            j = find(nxt)
            if j is None:
                if nxt is None:
                    edge(-1)
                    continue
                j = index[nxt] = count
                count += 1
                push(nxt)
            edge((j, nr) if nr else j)
        seq = node._seq
        if seq >= last:
            ordered = False
        last = seq
        hooks = _hook_flags(node) if node._any_hooks else 0
        saved = node.saved
        if saved is None:
            raise _Break  # freed: eager raises
        if cls is CopySlices:
            kinds(_OPAQUE)
            metas.append((node._out_meta, node.fn.in_meta))
            add((_OPAQUE, node.fn._op, _freeze(node.attrs), hooks, *edges))
            continue
        if node._opaque:
            kinds(_OPAQUE)
            metas.append(node._out_meta)
            add((_OPAQUE, _Same(node.program), hooks, *edges))
            continue
        op = node._op if cls is not Node else None
        if op is None or op.recorder is not None:
            # a user-defined Function: its backward may read values
            raise _Break("the graph has a custom autograd.Function")
        attrs = node.attrs
        sized = op.size_attrs
        if sized:  # sizes are the program's business, not the key's
            metas.append(tuple(attrs.get(n) for n in sized))
            attrs = {n: v for n, v in attrs.items() if n not in sized}
        if saved:
            raws: list = []
            kind = _OP if _saved_arrays(saved, arrays, raws, metas) else _OPAQUE
            key = (op, tuple(attrs.items()), hooks, kind, tuple(raws), *edges)
        else:
            kind = _OP
            key = (op, hooks, *attrs.items(), *edges)
        meta(node._out_meta)
        meta(node.in_meta)
        if full:
            kinds(kind)
        add(key)
    if not ordered:  # the engine runs nodes by sequence number
        add(tuple(sorted(range(len(nodes)), key=lambda k: nodes[k]._seq)))
    if w.inputs is not None:  # where the gradients to capture or accumulate are
        edges = (
            engine.edge_of(t) if isinstance(t, Tensor) else (t.node, t.output_nr) for t in w.inputs
        )
        add(tuple(None if n not in index else (index[n], nr) for n, nr in edges))
    add((w.keep_graph, tuple(None if a is None else a.dtype for a in arrays)))
    if _cuda_used[0]:  # a program made for NumPy arrays is not one for CuPy arrays
        add(tuple(type(a) for a in arrays))
    metas.append([None if a is None else a.shape for a in arrays])
    w.layouts = [None if a is None or a.flags.c_contiguous else _layout(a) for a in arrays]
    return keys


def kept_sig(w: _Walk) -> tuple:
    """The walk's sizes and layouts as a captured graph keeps them, to compare later walks'
    with: entries of equal value made one object, so that a comparison reads a few objects
    again and again, not as many as the graph has nodes (most nodes' sizes repeat)."""
    pool: dict = {}
    sig = []
    for v in w.sig:
        k = (type(v), repr(v))
        same = pool.setdefault(k, v)
        sig.append(same if same is v or same == v else v)
    return sig, w.layouts


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _freeze(x)) for k, x in v.items())
    if isinstance(v, slice):
        return (slice, v.start, v.stop, v.step)
    try:
        hash(v)
    except TypeError:
        return _Same(v)
    return v


class _Same:
    """An unhashable value in a key: only the same object hits again (held, so that its
    id is not reused)."""

    __slots__ = ("v",)

    def __init__(self, v) -> None:
        self.v = v

    def __hash__(self) -> int:
        return id(self.v)

    def __eq__(self, other) -> bool:
        return type(other) is _Same and other.v is self.v


def _saved_arrays(saved, arrays: list, raws: list, metas: list) -> bool:
    """Append a node's saved arrays (version-checked), its saved sizes and its other saved
    values; False when a saved value goes through unpack hooks (the node is then called
    as it is)."""
    n = len(arrays)
    for name, v in saved.items():
        t = type(v)
        if t is Saved:
            _saved_array(v, arrays)
        elif t is _SavedTuple or t is _SavedList:
            for s in v.t:
                if type(s) is Saved:
                    _saved_array(s, arrays)
                elif isinstance(s, Saved):
                    del arrays[n:]
                    return False
                else:
                    raws.append(s)
        elif isinstance(v, Saved):
            del arrays[n:]
            return False
        elif name.endswith("_shape"):
            metas.append(v)
        else:
            raws.append(v)
    return True


def _saved_array(s: Saved, arrays: list) -> None:
    if s.is_output:
        if s.t.v != s.version:
            raise _Break
        arrays.append(s.data)
    else:
        t = s.t
        if t._ver.v != s.version or t._level:
            raise _Break
        arrays.append(t._data)


def _hook_flags(node: Node) -> tuple:
    """Which hooks a node and (for a leaf) its tensor have: the calls its program makes."""
    var = getattr(node, "variable", None)
    return (
        bool(node._pre_hooks),
        bool(node._post_hooks),
        node._hooked,
        var is not None and bool(var._hooks),
        var is not None and bool(var.__dict__.get("_post_acc_hooks")),
    )


def _layout(a) -> tuple:
    """A non-contiguous array's layout apart from its sizes: its dims from outermost in
    memory, each with whether it steps by one element. vjp formulas may branch on it (as
    PyTorch's mm backward does on a column-major factor), so a program is made per layout,
    as per size; like a size, a new layout is a new capture only of a static graph."""
    st = a.strides
    order = sorted(range(a.ndim), key=lambda d: -abs(st[d]))
    return tuple((d, st[d] == a.itemsize) for d in order)


def store(w: _Walk, entry: _Entry) -> None:
    """Keep ``entry`` in the trie under the walk's keys."""
    t = _CACHE
    for k in w.keys:
        try:
            nxt = t.children.get(k)
        except TypeError:  # an unhashable attribute
            k = _freeze(k)
            nxt = t.children.get(k)
        if nxt is None:
            nxt = t.children[k] = _Trie()
        t = nxt
    t.entry = entry
