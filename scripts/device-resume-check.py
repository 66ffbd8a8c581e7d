#!/usr/bin/env python3
"""Checkpoint/resume check of trainsim-train (scripts/device-session.sh, step "check").

Reads DIR/resume-{full,again,rest}.json: two uninterrupted 6-step runs and the second
half of a run that stopped at step 3, saved and resumed. The attention backward sums dQ
with fp32 atomics, so the two uninterrupted runs need not agree to the last bit; their
difference is the run-to-run spread. The resumed run must agree with the first within
4 x that spread (plus 1e-6 relative): a lost optimizer state or data position moves the
loss far more. Exit 1 when a step differs.

  python3 scripts/device-resume-check.py build/device-session
"""
import json
import sys


def losses(d, name):
    with open(f"{d}/{name}.json") as f:
        return {s["step"]: s["loss"] for s in json.load(f)["steps"]}


def main():
    d = sys.argv[1]
    full, again, rest = losses(d, "resume-full"), losses(d, "resume-again"), losses(d, "resume-rest")
    ok = bool(rest)
    for s in sorted(rest):
        spread = abs(full[s] - again[s])
        diff = abs(full[s] - rest[s])
        good = diff <= 4 * spread + 1e-6 * abs(full[s])
        ok &= good
        print(f"step {s}: uninterrupted {full[s]!r}  again {again[s]!r}  resumed {rest[s]!r}  "
              f"|resumed - uninterrupted| {diff:.3g} vs run-to-run {spread:.3g}  {'OK' if good else 'DIFFERENT'}")
    print("checkpoint/resume", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
