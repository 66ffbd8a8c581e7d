#!/usr/bin/env bash
# Engine speed (issue 22, item 7): `trainsim run -q` on every scenario in scenarios/,
# scenarios/strategies/ and scenarios/validation/ (the PyTorch and trainer rows of
# tests/validation/), the ten Megatron-LM SC'21 rows of tests/validation/ with the
# validation test's settings and the 136 recipes of the validation corpus
# (tests/validation/corpus/*_tables.json), each pinned
# to one core, best of N runs. Prints one line per case (seconds, peak memory, and
# whether the summary of `run` equals that of `run --exact`, which simulates every
# micro-batch where `run` extrapolates the steady state) and how many take longer
# than the target of 1 s. Exits 1 only when a summary differs from the exact one.
# Usage: scripts/bench-run-speed.sh [TRAINSIM] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/test/trainsim}")
repeats=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, sys
out = sys.argv[1]
for row in json.load(open("tests/validation/megatron_sc21_table1.json")):
    sc = row["scenario"]
    sc["training"]["attention_backend"] = "unfused"
    sc["training"]["cross_entropy"] = "unfused"
    sc["cluster"]["inter_node"]["multipath"] = 8
    json.dump(sc, open(f"{out}/{row['id']}.json", "w"))
import glob, os
os.makedirs(f"{out}/corpus")
for table in sorted(glob.glob("tests/validation/corpus/*_tables.json")):
    doc = json.load(open(table))
    for case in doc["cases"] if isinstance(doc, dict) else doc:
        if case.get("scenario"):
            json.dump(case["scenario"], open(f"{out}/corpus/{case['id']}.json", "w"))
PY
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
slow=0
total=0
differ=0
printf '%-48s %9s %10s %6s\n' case "seconds" "peak MiB" exact
for f in scenarios/*.json scenarios/strategies/*.json scenarios/validation/gpt2-*m-*.json "$work"/*.json "$work"/corpus/*.json; do
  best=
  rss=0
  for _ in $(seq "$repeats"); do
    /usr/bin/time -o "$work/time.txt" -f "%e %M" taskset -c "$cpu" "$bin" run -q "$f" > /dev/null 2>&1 ||
      { echo "$f: trainsim run failed" >&2; exit 1; }
    read -r t kb < "$work/time.txt"
    if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
    rss=$kb
  done
  total=$((total + 1))
  if awk -v a="$best" 'BEGIN { exit !(a >= 1.0) }'; then slow=$((slow + 1)); fi
  "$bin" run "$f" > "$work/default.txt" 2>&1 || true
  "$bin" run --exact "$f" > "$work/exact.txt" 2>&1 || true
  # The failure replay says how long its Monte Carlo took.
  sed -E -i 's/ in [0-9]+\.[0-9]+ s/ in (wall time) s/' "$work/default.txt" "$work/exact.txt"
  same=same
  cmp -s "$work/default.txt" "$work/exact.txt" || { same=DIFFERS; differ=$((differ + 1)); }
  printf '%-48s %9s %10d %6s\n' "$(basename "$f" .json)" "$best" $((rss / 1024)) "$same"
done
echo "$slow of $total cases take 1 s or more (best of $repeats, one core: $cpu; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo "$differ of $total summaries differ from run --exact"
[[ $differ -eq 0 ]]
