"""DP-SGD across processes: examples/dp_sgd.py's private training with each Poisson-sampled
batch split over the ranks.

Every rank draws the same Poisson sample and noise (one seeded generator each); rank r takes
the sampled examples r, r + N, ...; computes and clips their per-sample gradients; the
clipped sums are all-reduced; the Gaussian noise is added once, by rank 0, before the sum.
So it is examples/dp_sgd.py's training up to summation order, and epsilon is unchanged.

    numtorchrun --nproc-per-node 2 examples/dp_sgd_ranks.py --max-steps 20
"""

from __future__ import annotations

import importlib.util
import pathlib
import time

import numtorch as torch
import numtorch.distributed as dist

_spec = importlib.util.spec_from_file_location(
    "dp_sgd", pathlib.Path(__file__).with_name("dp_sgd.py")
)
dp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dp)


def private_step(model, x, y, args, rate, n, generator, rank: int, size: int) -> None:
    """One DP-SGD step; with ``size`` 1 it is examples/dp_sgd.py's step."""
    idx = (torch.rand(n, generator=generator) < rate).nonzero().flatten()
    mine = idx[rank::size]
    std = args.noise_multiplier * args.max_grad_norm
    params = dict(model.named_parameters())
    if len(mine):
        clipped = dp.clip(dp.per_sample_grads(model, x[mine], y[mine]), args.max_grad_norm)
        sums = {k: g.sum(0) for k, g in clipped.items()}
    else:
        sums = {k: torch.zeros_like(p) for k, p in params.items()}
    for k, p in params.items():  # every rank draws the noise: the generators stay in step
        noise = torch.normal(0.0, std, p.shape, generator=generator)
        if rank == 0:
            sums[k] = sums[k] + noise
    flat = torch.cat([s.flatten() for s in sums.values()])
    if size > 1:
        dist.all_reduce(flat)
    start = 0
    for p in params.values():
        p.grad = flat[start : start + p.numel()].view(p.shape) / (rate * n)
        start += p.numel()


def train(args, train_set, rank: int = 0, size: int = 1):
    """``args.max_steps`` private steps; returns the model."""
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    model = dp.DigitCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    x, y = train_set
    n = len(y)
    rate = args.batch_size / n
    for _ in range(args.max_steps):
        optimizer.zero_grad()
        private_step(model, x, y, args, rate, n, generator, rank, size)
        optimizer.step()
    return model


def main(argv=None):
    args = dp.parse(argv)
    args.max_steps = args.max_steps or 20
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    train_set, _ = dp.load_digits(args.seed)
    start = time.perf_counter()
    model = train(args, train_set, rank, size)
    wall = time.perf_counter() - start
    if rank == 0:
        print(f"{size} ranks: {args.max_steps} DP-SGD steps in {wall:.2f} s", flush=True)
    dist.destroy_process_group()
    return model


if __name__ == "__main__":
    main()
