#!/usr/bin/env python3
"""A GPU preset's overlap_compute_slowdown and overlap_memory_slowdown from the
measurements of scripts/pytorch-overlap-contention.py (docs/model.md, "Compute beside
communication").

For stand-ins of C blocks (default 16: the SMs NCCL uses on a DGX with 8 NICs,
NVIDIA/nccl issue #689), over every file given (runs on one GPU kind) and both
stand-ins (hold: SMs held; copy: SMs and HBM bandwidth held):
  overlap_compute_slowdown  the median slowdown of the tensor-core kernels (GEMMs
                            and attention: rows with FLOPs)
  overlap_memory_slowdown   the median slowdown of the memory-bound kernels (rows
                            without FLOPs: one elementwise add per stand-in and run, so
                            with one run it is the midpoint of the hold and copy rows)
and the table by C and stand-in, so the choice of C can be read against the rest.

Usage: overlap-slowdown.py [--blocks C] overlap.json [overlap-rerun.json ...]
"""
import argparse
import json
import statistics
import sys


def slowdowns(rows, blocks, tensor_core, kind=None):
    return [r["slowdown"] for r in rows
            if r["blocks"] == blocks and (r["flops"] > 0) == tensor_core and kind in (None, r["kind"])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=16)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    rows, devices = [], set()
    for f in a.files:
        with open(f, encoding="utf-8") as h:
            doc = json.load(h)
        devices.add(doc["device"])
        rows += doc["rows"]
    if len(devices) != 1:
        sys.exit(f"the files are of several GPUs: {sorted(devices)}")
    print(f"{devices.pop()}, {len(a.files)} run(s): median slowdown beside C blocks")
    print("   C  kind  tensor-core  memory-bound")
    for blocks in sorted({r["blocks"] for r in rows}):
        for kind in ("hold", "copy"):
            tc, mem = slowdowns(rows, blocks, True, kind), slowdowns(rows, blocks, False, kind)
            if tc and mem:
                print(f"  {blocks:2d}  {kind:4s}  {statistics.median(tc):11.3f}  {statistics.median(mem):12.3f}")
    tc, mem = slowdowns(rows, a.blocks, True), slowdowns(rows, a.blocks, False)
    if not tc or not mem:
        sys.exit(f"no rows with {a.blocks} blocks")
    print(f"overlap_compute_slowdown {statistics.median(tc):.3f}  (median of {len(tc)} rows at C = {a.blocks})")
    print(f"overlap_memory_slowdown  {statistics.median(mem):.3f}  (median of {len(mem)} rows at C = {a.blocks})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
