"""The median time of a GPU operation between CUDA events, shared by the PyTorch
reference scripts that time single operations (pytorch-gemm-reference.py,
pytorch-backward-gemms.py)."""
import statistics

import torch


def median_seconds(run, warmup, repeats, before_each=None):
    """Runs `run` `warmup` times, then `repeats` times each between a pair of events
    (after `before_each`, outside the events, when given: an L2 flush, say), and
    returns the median in seconds."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeats):
        if before_each is not None:
            before_each()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)
