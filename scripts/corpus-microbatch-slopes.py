#!/usr/bin/env python3
"""Split the corpus's step times into a per-micro-batch part and a per-iteration part.

Runs that differ only in their global batch size (so in the number of micro-batches m each
pipeline runs, everything else equal) lie on a line t = a + b m: b is what one more
micro-batch costs (its forward and backward on the busiest stage), a what the iteration pays
once (pipeline fill and drain, the exposed data-parallel reduction, the optimizer step).
Fitting that line to the measured times and to trainsim's predictions tells which of the two
a prediction gets wrong, from the published measurements alone (docs/validation.md,
"Per micro-batch and per iteration").

Usage:
  trainsim validate --corpus tests/validation/corpus --out DIR
  scripts/corpus-microbatch-slopes.py tests/validation/corpus DIR/corpus.json [--only TEXT]

Groups are runs of one source table (one software release, one machine) and need at least two
batch sizes; held-out cases are left out unless --with-held-out; a group with three or more also prints the largest
residual of the measured line (how straight the measured times are).

--across-data-parallel also groups runs of one study (repository and commit, any table) that differ only in their
number of nodes: at a fixed global batch more data-parallel replicas run fewer micro-batches each (Hagemann et al.'s
sweep measured most layouts at two GPU counts). Their per-iteration part then also holds the data-parallel
reduction at two group sizes, which a ring prices alike to within (d - 1) / d.
"""
import argparse
import glob
import json
import os
import sys


def load_cases(corpus_dir):
    cases = {}
    for path in sorted(glob.glob(os.path.join(corpus_dir, "*.json"))):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, list):
            continue
        for case in data:
            if isinstance(case, dict) and "scenario" in case and "id" in case:
                cases[case["id"]] = case
    return cases


def group_key(case, across_data_parallel=False):
    """Same source table (one software release, one machine) and the same scenario but for the batch; with
    across_data_parallel, the same study and scenario but for the batch and the number of nodes."""
    s = json.loads(json.dumps(case["scenario"]))
    s.pop("name", None)
    s.get("training", {}).pop("global_batch_size", None)
    kept = ("repo", "file", "commit", "table")
    if across_data_parallel and isinstance(s.get("cluster"), dict):
        s["cluster"].pop("num_nodes", None)
        kept = ("repo", "commit")
    source = {k: v for k, v in case.get("source", {}).items() if k in kept}
    return json.dumps([source, s], sort_keys=True)


def micro_batches(scenario, gpus):
    t = scenario.get("training", {})
    p = scenario.get("parallelism", {})
    model_parallel = 1
    for key in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size"):
        model_parallel *= int(p.get(key, 1))
    dp = p.get("data_parallel_size", "auto")
    dp = gpus // model_parallel if dp == "auto" else int(dp)
    return t["global_batch_size"] / (t["micro_batch_size"] * dp)


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    return a, b, max(abs(y - (a + b * x)) for x, y in zip(xs, ys))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir")
    parser.add_argument("report", help="corpus.json written by trainsim validate --corpus ... --out DIR")
    parser.add_argument("--only", default="", help="only groups with a case id containing this text")
    parser.add_argument("--with-held-out", action="store_true",
                        help="also use the held-out cases (tests/validation/corpus/held_out.json); left out by default")
    parser.add_argument("--across-data-parallel", action="store_true",
                        help="also group runs of one study that differ only in their number of nodes")
    args = parser.parse_args()

    cases = load_cases(args.corpus_dir)
    with open(args.report, encoding="utf-8") as f:
        report = json.load(f)
    groups = {}
    for row in report["cases"]:
        case = cases.get(row["id"])
        if case is None or row.get("refused") or not row.get("predicted_iteration_time_s"):
            continue
        if row["held_out"] and not args.with_held_out:
            continue
        m = micro_batches(case["scenario"], row["gpus"])
        point = (m, row["measured_iteration_time_s"], row["predicted_iteration_time_s"], row["id"], row["held_out"])
        groups.setdefault(group_key(case, args.across_data_parallel), []).append(point)

    print(f"{'group (first id)':<58} {'m':>10} {'b meas':>9} {'b pred':>9} {'b err':>7} "
          f"{'a meas':>9} {'a pred':>9} {'resid':>7}")
    printed = 0
    for points in groups.values():
        points.sort()
        if len({p[0] for p in points}) < 2 or (args.only and not any(args.only in p[3] for p in points)):
            continue
        xs = [p[0] for p in points]
        a_m, b_m, resid = fit(xs, [p[1] for p in points])
        a_p, b_p, _ = fit(xs, [p[2] for p in points])
        held = " (+held out)" if any(p[4] for p in points) else ""
        ms = "/".join(f"{x:g}" for x in xs)
        resid_text = f"{resid:7.3f}" if len(points) > 2 else f"{'-':>7}"
        print(f"{points[0][3] + held:<58} {ms:>10} {b_m:9.4f} {b_p:9.4f} {(b_p / b_m - 1) * 100:+6.1f}% "
              f"{a_m:9.3f} {a_p:9.3f} {resid_text}")
        printed += 1
    print(f"{printed} groups; b: seconds per micro-batch, a: seconds per iteration, b err: predicted / measured - 1; "
          "resid: the measured line's largest residual (s)")
    return 0 if printed else 1


if __name__ == "__main__":
    sys.exit(main())
