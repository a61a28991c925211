"""What numtorch knows of GPU memory beyond CuPy's pool: peaks and running totals per GPU,
kept by an allocator installed with ``cupy.cuda.set_allocator`` when a GPU is first used (it
takes each block from CuPy's default pool, as CuPy's own allocator does)."""

from __future__ import annotations

from collections import defaultdict

# per GPU index: the most bytes in use and reserved seen, and the bytes handed out in all
peak_used: defaultdict = defaultdict(int)
peak_reserved: defaultdict = defaultdict(int)
allocated_total: defaultdict = defaultdict(int)
_installed: list = [None, None]  # the CuPy module it is installed in, and its allocator then

ROUND = 512  # CuPy's pool hands out blocks in multiples of 512 bytes


def install(cp) -> None:
    """Route CuPy's allocations through the tracking allocator (once per CuPy module)."""
    if _installed[0] is cp:
        return
    _installed[:] = cp, cp.cuda.get_allocator()
    pool = cp.get_default_memory_pool()

    def malloc(size: int):
        mem = pool.malloc(size)
        dev = cp.cuda.runtime.getDevice()
        allocated_total[dev] += -(-size // ROUND) * ROUND
        used = pool.used_bytes()
        if used > peak_used[dev]:
            peak_used[dev] = used
        reserved = pool.total_bytes()
        if reserved > peak_reserved[dev]:
            peak_reserved[dev] = reserved
        return mem

    cp.cuda.set_allocator(malloc)


def forget() -> None:
    """Start over (another CuPy is chosen): the CuPy left gets its allocator back; no peaks."""
    cp, before = _installed
    if cp is not None:
        cp.cuda.set_allocator(before)
    _installed[:] = None, None
    peak_used.clear()
    peak_reserved.clear()
    allocated_total.clear()
