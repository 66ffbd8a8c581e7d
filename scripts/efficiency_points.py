"""Measured rows -> a hardware preset's efficiency points, shared by the scripts that derive them
(profile-gemm-curve.py, profile-attention-curve.py, simumax-b200-curves.py).

octave_points: the rule trainsim applies to a calibration profile's GEMMs
(hw::measured_matmul_efficiency, sim/hardware/profile_efficiency.cpp): rows grouped by octave
of F (floor(log2 F)), one point per octave at the geometric mean of its F with the median of
its rows' efficiencies (capped at 1).
attention_entries: per head dimension and direction, one point per FLOPs, rows at the same
FLOPs averaged (as hw::LogCurve does with a profile's rows).
"""
import math
import statistics
from collections import defaultdict


def octave_points(rows):
    """rows: (flops, efficiency) pairs -> [[F, efficiency], ...] ascending."""
    octaves = defaultdict(list)
    for flops, efficiency in rows:
        octaves[math.floor(math.log2(flops))].append((flops, efficiency))
    points = []
    for octave in sorted(octaves):
        group = octaves[octave]
        mean_log = sum(math.log(f) for f, _ in group) / len(group)
        points.append([float(f"{math.exp(mean_log):.4g}"), round(min(statistics.median(e for _, e in group), 1.0), 3)])
    return points


def attention_entries(rows):
    """rows: (head_dim, direction, flops, efficiency) -> the attention_efficiency array.

    head_dim is an int, or a (query and key width, value width) pair where the two
    differ (multi-head latent attention): its entry gets a value_head_dim.
    """
    curves = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for head_dim, direction, flops, efficiency in rows:
        curves[head_dim if isinstance(head_dim, tuple) else (head_dim, head_dim)][direction][flops].append(efficiency)
    out = []
    for dims in sorted(curves):
        entry = {"head_dim": dims[0]}
        if dims[1] != dims[0]:
            entry["value_head_dim"] = dims[1]
        for direction in ("forward", "backward"):
            entry[direction] = [[float(f"{flops:.4g}"), round(sum(e) / len(e), 3)]
                                for flops, e in sorted(curves[dims][direction].items())]
        out.append(entry)
    return out
