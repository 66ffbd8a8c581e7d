#!/usr/bin/env python3
"""scripts/efficiency_points.py on hand-built rows: each head dimension keeps its own points."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from efficiency_points import attention_entries, octave_points  # noqa: E402

rows = [(128, "forward", 1e10, 0.2), (128, "forward", 1e10, 0.4), (128, "backward", 2.5e10, 0.1),
        ((192, 128), "forward", 3e10, 0.5), ((192, 128), "backward", 7.5e10, 0.3)]
expected = [{"head_dim": 128, "forward": [[1e10, 0.3]], "backward": [[2.5e10, 0.1]]},
            {"head_dim": 192, "value_head_dim": 128, "forward": [[3e10, 0.5]], "backward": [[7.5e10, 0.3]]}]
got = attention_entries(rows)
assert got == expected, got
# 9e9 and 1.6e10 share the octave 2^33 (8.59e9 to 1.72e10): geometric mean 1.2e10, median 0.5.
points = octave_points([(9e9, 0.4), (1.6e10, 0.6), (4e10, 0.7)])
assert points == [[1.2e10, 0.5], [4e10, 0.7]], points
print("ok")
