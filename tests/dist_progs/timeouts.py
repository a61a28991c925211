"""Run on 2 ranks: rank 1 sleeps past the 1 s timeout; rank 0's waits raise, never hang."""

import time
from datetime import timedelta

import numtorch as torch
import numtorch.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=1))
if dist.get_rank() == 1:
    time.sleep(2)
    print("rank 1 woke", flush=True)
else:
    for name, call in [
        ("all_reduce", lambda: dist.all_reduce(torch.ones(2))),
        ("barrier", lambda: dist.barrier()),
        ("recv", lambda: dist.recv(torch.zeros(2), src=1)),
        ("all_gather_object", lambda: dist.all_gather_object([None, None], "x")),
    ]:
        t0 = time.monotonic()
        try:
            call()
        except dist.DistBackendError as e:
            assert f"Timed out waiting 1000ms for {name}" in str(e), str(e)
            assert 0.9 < time.monotonic() - t0 < 3, time.monotonic() - t0
            print(f"{name} timed out", flush=True)
    w = dist.all_reduce(torch.ones(2), async_op=True)
    try:
        w.wait(timeout=timedelta(seconds=0.3))
    except dist.DistBackendError as e:
        assert "Timed out waiting 300ms" in str(e) and w.exception() is e
        print("work timed out", flush=True)
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=0.5))
    except dist.DistBackendError as e:
        assert str(e) == "Rank 1 failed to pass monitoredBarrier in 500 ms", str(e)
        print("monitored_barrier named rank 1", flush=True)
