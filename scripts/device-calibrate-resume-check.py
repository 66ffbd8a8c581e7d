#!/usr/bin/env python3
"""Compares a calibration killed mid-run and finished with --resume against an
uninterrupted one of the same command on the same GPU (issue 29 item 2; run by
scripts/device-session.sh's calkill step).

Passes when the resumed profile is complete and holds exactly the measurements of
the uninterrupted one (GEMMs by dtype, accumulation and shape, kernels by name and
shape, copies, collectives, the launch overhead) and the same failed keys. Prints
the run-to-run spread of the GEMM medians between the two runs, which is the
noise any comparison of two calibrations must allow for.

Usage: device-calibrate-resume-check.py UNINTERRUPTED.json RESUMED.json [LOG]
  LOG: the resumed run's output, to report how many measurements it took over.
"""
import json
import re
import sys


def identity(section, row):
    if section == "gemm":
        return (row["dtype"], row.get("accumulation", ""), row["m"], row["n"], row["k"], row.get("layout", "forward"))
    if section == "kernels":
        return (row["name"], json.dumps(row.get("shape", {}), sort_keys=True))
    if section == "copies":
        return (row["kind"], row["bytes"])
    if section == "collectives":
        return (row["op"], row["scope"], row["ranks"], row.get("nodes", 0), row["bytes"])
    if section == "errors":
        return (row["key"],)
    raise KeyError(section)


def rows(profile, section):
    return {identity(section, r): r for r in profile.get(section, [])}


def quantile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    whole, resumed = (json.load(open(p)) for p in sys.argv[1:3])
    failures = 0
    if resumed.get("complete") is not True:
        print("FAILED: the resumed profile is not complete")
        failures += 1
    if len(sys.argv) > 3:
        m = re.search(r"# resumed: (\d+) measurements", open(sys.argv[3]).read())
        print(f"resumed run took over {m.group(1) if m else 'no'} measurements from the journal")
    for section in ("gemm", "kernels", "copies", "collectives", "errors"):
        a, b = rows(whole, section), rows(resumed, section)
        only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
        same = not only_a and not only_b
        print(f"{section:12s} uninterrupted {len(a):5d}  resumed {len(b):5d}  {'same keys' if same else 'DIFFER'}")
        if not same:
            failures += 1
            print(f"  only uninterrupted: {only_a[:5]}\n  only resumed: {only_b[:5]}")
    if ("launch_overhead_s" in whole) != ("launch_overhead_s" in resumed):
        print("FAILED: launch_overhead_s in one profile only")
        failures += 1
    a, b = rows(whole, "gemm"), rows(resumed, "gemm")
    ratios = [b[k]["seconds"] / a[k]["seconds"] for k in a if k in b and a[k]["seconds"] > 0]
    big = [b[k]["seconds"] / a[k]["seconds"] for k in a if k in b and a[k]["seconds"] > 100e-6]
    for name, r in (("all GEMMs", ratios), ("GEMMs over 100 us", big)):
        if r:
            print(f"{name}: resumed / uninterrupted median time, n={len(r)}: P10 {quantile(r, 0.1):.3f} "
                  f"P50 {quantile(r, 0.5):.3f} P90 {quantile(r, 0.9):.3f} min {min(r):.3f} max {max(r):.3f}")
    print("calibration resume check: " + ("OK" if failures == 0 else f"{failures} FAILED"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
