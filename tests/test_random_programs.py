"""Random programs against PyTorch (tests/progfuzz.py): short programs over the public API on
odd inputs, run on numtorch and torch in six modes (forward, backward(), func.grad,
func.jvp, vmap, vmap(grad)) and compared on values, dtypes, shapes, gradients and errors.

CI runs a fixed-seed slice of base programs, drawn without the ops of ``progfuzz.KNOWN_OPEN``
(each names its open bug), and a slice of each program class (tests/progfuzz_classes.py:
aliasing in-place ops, writes into fresh tensors, clamps with ties, non-finite inputs, bad
argument forms), where a failure of a recorded open bug (``CLASS_OPEN``) is reported, not
failed. Each open bug also has a pinned seed, ``OPEN_BUG_SEEDS``, marked xfail(strict): its
program fails for that bug alone, so a fix elsewhere shows as an XPASS; then drop the seed and
the bug's ``CLASS_OPEN`` entry. ``NUMTORCH_FUZZ_SECONDS=600 python -m pytest -p no:xdist -s
tests/test_random_programs.py -k fresh`` runs fresh seeds, known-open ops included, for that
long and prints every distinct failure as a runnable repro (so does
``python tests/progfuzz.py 600``).
"""

from __future__ import annotations

import os

import progfuzz as pf
import pytest

CHUNKS, PER_CHUNK = 40, 6
CLASS_CHUNKS, CLASS_PER_CHUNK = 3, 20

# (class, seed): the open bug its program fails for, alone (the first words of its CLASS_OPEN
# entry in tests/progfuzz_classes.py; the branch named there is fixing it).
OPEN_BUG_SEEDS: dict[tuple[str, int], str] = {}

# Seeds of the slice whose programs fail for an open bug no op key or failure text isolates
# (found by this fuzzer; the repro is what ``pf.shrink`` gives). The slice skips them; drop an
# entry once its bug is fixed.
KNOWN_OPEN_SEEDS: dict[int, str] = {}


def _report(groups: dict, known: bool) -> str:
    parts = []
    for (mode, _gist, keys), (why, text, seed) in groups.items():
        if (why is not None) == known:
            parts.append(f"--- seed {seed}, {mode}, ops {list(keys)}" + (f", {why}" if why else ""))
            parts.append(text)
    return "\n".join(parts)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_programs(chunk):
    seeds = [
        s for s in range(chunk * PER_CHUNK, (chunk + 1) * PER_CHUNK) if s not in KNOWN_OPEN_SEEDS
    ]
    n, groups = pf.fuzz(seeds=seeds, exclude=pf.KNOWN_OPEN, log=lambda m: None, cls="base")
    assert n == len(seeds)
    new = _report(groups, known=False)
    assert not new, "numtorch and torch differ; shrunk repros:\n" + new


@pytest.mark.parametrize("cls", sorted(pf.CLASSES))
@pytest.mark.parametrize("chunk", range(CLASS_CHUNKS))
def test_class_programs(cls, chunk):
    seeds = range(chunk * CLASS_PER_CHUNK, (chunk + 1) * CLASS_PER_CHUNK)
    n, groups = pf.fuzz(seeds=seeds, exclude=pf.KNOWN_OPEN, log=lambda m: None, cls=cls)
    assert n == len(seeds)
    new = _report(groups, known=False)
    assert not new, "numtorch and torch differ; shrunk repros:\n" + new


@pytest.mark.parametrize(
    "cls, seed",
    [
        pytest.param(
            cls, seed, marks=pytest.mark.xfail(strict=True, reason=why), id=f"{cls}-{seed}"
        )
        for (cls, seed), why in OPEN_BUG_SEEDS.items()
    ],
)
def test_open_bug_seed(cls, seed):
    """The pinned program of an open bug agrees with torch in every mode (torch's own recorded
    divergences aside): it fails until the bug is fixed."""
    p = pf.generate(seed, cls=cls)
    fails = [f for f in pf.check(p) if pf.torch_divergence(p, f) is None]
    assert not fails, "\n".join(pf.repro(p, f) for f in fails)


def test_classes_are_drawn_in_the_default_mix():
    drawn = {pf.draw_class(seed) for seed in range(200)}
    assert drawn == {"base", *pf.CLASSES}
    assert all(pf.generate(seed).cls == pf.draw_class(seed) for seed in range(5))


@pytest.mark.skipif(
    not os.environ.get("NUMTORCH_FUZZ_SECONDS"), reason="set NUMTORCH_FUZZ_SECONDS to run"
)
def test_random_programs_fresh_seeds():
    n, groups = pf.fuzz(float(os.environ["NUMTORCH_FUZZ_SECONDS"]))
    print(f"\n{n} programs, {len(groups)} distinct failures")
    print("known open:\n" + _report(groups, known=True))
    new = _report(groups, known=False)
    assert not new, "numtorch and torch differ; shrunk repros:\n" + new


def test_generator_is_seeded():
    for cls in (None, "base", *pf.CLASSES):
        a, b = pf.generate(7, cls=cls), pf.generate(7, cls=cls)
        assert a.lines == b.lines and (a.X == b.X).all() and (a.B == b.B).all()
        assert a.in_dims == b.in_dims and a.cls == b.cls


def test_failures_shrink_to_a_runnable_repro():
    """A program with a planted difference (numpy's .T is not torch's for 3-d) shrinks to the
    one line that differs, and its repro runs and shows it."""
    p = pf.generate(3, cls="base")
    p.lines = [("x", "y = y.exp()"), ("planted", "y = y.permute(*range(y.dim())[::-1])")] + [
        ("x", "y = y + 1")
    ]
    fails = pf.check(p, ["forward"])
    assert not fails  # both libraries agree on a valid program
    p.lines.insert(1, ("planted", "y = y.flip(0) if lib.__name__ == 'numtorch' else y"))
    p.X = p.X.reshape(-1)[:3].copy() if p.X.size >= 3 else pf.np.arange(3.0)
    fails = pf.check(p, ["forward"])
    assert fails and fails[0].kind == "result differs"
    q = pf.shrink(p, fails[0])
    assert q.keys() == ["planted"]
    ns = pf._exec(pf.script(q, "forward"))
    assert ns["run"](pf.nt)[0].shape == ns["run"](pf.torch)[0].shape
