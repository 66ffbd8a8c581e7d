#!/usr/bin/env python3
"""scripts/train-schedule-blocking.py: DeepSpeed's TrainSchedule is 1F1B when transfers are free."""
import importlib.util
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "train-schedule-blocking.py")
spec = importlib.util.spec_from_file_location("train_schedule_blocking", PATH)
schedule = importlib.util.module_from_spec(spec)
spec.loader.exec_module(schedule)

# Free transfers: (m + p - 1)(t_f + t_b) for every depth, the pipeline's fill and drain included.
for p, m in [(1, 4), (2, 64), (4, 32), (8, 64), (16, 256)]:
    assert schedule.step_time(p, m, 1.0, 2.0) == (m + p - 1) * 3.0, (p, m)
# Each stage's lists hold m forwards and m backwards, and a send for every receive.
for s in range(4):
    ops = [op for op, _ in schedule.instructions(4, s, 8)]
    assert ops.count("F") == 8 and ops.count("B") == 8, ops
    assert ops.count("send_act") == (8 if s < 3 else 0) and ops.count("recv_act") == (8 if s > 0 else 0), ops
# Two stages, one micro-batch, transfer x: F (1), send/recv (x), F (1), B (2), send/recv (x), B (2).
assert abs(schedule.step_time(2, 1, 1.0, 2.0, 0.25) - 6.5) < 1e-12
print("ok")
