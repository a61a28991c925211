"""numtorch.save / numtorch.load beside torch.save / torch.load on a small MLP's and a
ResNet-ish CNN's state dicts (to and from memory), best of several runs.

python benchmarks/bench_serialization.py
"""

from __future__ import annotations

import io

from bench_eager import best_of

import numtorch as nt

try:
    import torch
except ImportError:  # the table then shows numtorch alone
    torch = None


def mlp(T):
    return T.nn.Sequential(
        T.nn.Linear(784, 128), T.nn.ReLU(), T.nn.Linear(128, 64), T.nn.ReLU(), T.nn.Linear(64, 10)
    )


def resnetish(T):
    """Four stages of two conv-BN-ReLU blocks and a classifier head (~60 tensors)."""
    layers, cin = [], 3
    for cout in (16, 32, 64, 128):
        for _ in range(2):
            layers += [T.nn.Conv2d(cin, cout, 3, padding=1), T.nn.BatchNorm2d(cout), T.nn.ReLU()]
            cin = cout
    layers += [T.nn.AdaptiveAvgPool2d(1), T.nn.Flatten(), T.nn.Linear(cin, 10)]
    return T.nn.Sequential(*layers)


def save_load_ms(T, model) -> tuple[float, float]:
    sd = model.state_dict()
    buf = io.BytesIO()

    def save():
        buf.seek(0)
        buf.truncate()
        T.save(sd, buf)

    def load():
        buf.seek(0)
        T.load(buf)

    save()
    return best_of(save) * 1e3, best_of(load) * 1e3


def main() -> None:
    print(
        f"{'model':<12}{'numtorch save':>15}{'torch save':>12}{'numtorch load':>15}{'torch load':>12}"
    )
    for name, make in (("MLP", mlp), ("ResNet-ish", resnetish)):
        ns, nl = save_load_ms(nt, make(nt))
        ts, tl = save_load_ms(torch, make(torch)) if torch else (float("nan"),) * 2
        print(f"{name:<12}{ns:>12.2f} ms{ts:>9.2f} ms{nl:>12.2f} ms{tl:>9.2f} ms")


if __name__ == "__main__":
    main()
