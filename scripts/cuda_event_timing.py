"""The median time of a GPU operation between CUDA events, shared by the PyTorch
scripts that time single operations (pytorch-gemm-reference.py,
pytorch-backward-gemms.py, pytorch-grouped-gemm-stages.py, pytorch-long-attention.py,
pytorch-overlap-contention.py, pytorch-llama-step.py)."""
import statistics

import torch


def busy(cycles=2_000_000):
    """A before_each that keeps the GPU busy (about 1 ms at 2 GHz) while the host queues
    the start event, the operation and the end event: the events then time the
    kernels, not Python's dispatch before them."""
    return lambda: torch.cuda._sleep(cycles)


def median_seconds(run, warmup, repeats, before_each=None):
    """Runs `run` `warmup` times, then `repeats` times each between a pair of events
    (after `before_each`, outside the events, when given: an L2 flush, say), and
    returns the median in seconds."""
    return statistics.median(event_seconds(run, warmup, repeats, before_each))


def event_seconds(run, warmup, repeats, before_each=None):
    """The `repeats` times of median_seconds, in seconds."""
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
    return times
