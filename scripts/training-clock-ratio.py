#!/usr/bin/env python3
"""A GPU preset's training_clock_ratio from the SM clock sampled during a training step
(docs/model.md, "Clock under training load").

Reads the nvidia-smi CSV that scripts/device-kernel-curves.sh writes while the llama step
runs (timestamp, clocks.sm, power.draw, ...), keeps the samples drawn under load (power
above --load-watts, default 300 W: the step's kernels, not the idle gaps, the compiles
or the host's set-up), and prints their mean SM clock over the boost clock the isolated
kernel curves ran at (--boost-mhz, default 1980: the H100's and H200's clocks.max.sm).

Usage: training-clock-ratio.py llama-clocks.csv [--load-watts W] [--boost-mhz F]
"""
import argparse
import csv
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--load-watts", type=float, default=300.0)
    ap.add_argument("--boost-mhz", type=float, default=1980.0)
    a = ap.parse_args()
    clocks = []
    with open(a.csv, encoding="utf-8") as f:
        rows = csv.reader(f, skipinitialspace=True)
        next(rows)
        for row in rows:
            if len(row) < 3 or not row[1].endswith("MHz") or not row[2].endswith("W"):
                continue
            mhz, watts = float(row[1].split()[0]), float(row[2].split()[0])
            if watts > a.load_watts:
                clocks.append(mhz)
    if not clocks:
        sys.exit(f"{a.csv}: no sample above {a.load_watts} W")
    mean = statistics.fmean(clocks)
    print(f"{len(clocks)} samples above {a.load_watts:.0f} W: SM clock mean {mean:.1f} MHz, "
          f"median {statistics.median(clocks):.0f}, min {min(clocks):.0f}, max {max(clocks):.0f}")
    print(f"training_clock_ratio {mean / a.boost_mhz:.3f}  (mean / {a.boost_mhz:.0f} MHz)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
