#!/usr/bin/env bash
# Shows that two trainsim binaries write byte-identical files for everything the project
# ships: `run` (result, timeline, run timeline, Chrome trace) on every scenario in
# scenarios/ and scenarios/strategies/, variants of the strategies that take the other
# paths through the graph builder, five failure replays that take the replay's other paths,
# and the ten Megatron-LM SC'21 rows of tests/validation, `collective` for
# every operation and model, `sweep --top 2` and `plan` on every sweep spec, and `validate`
# on every measured run in tests/validation. A restructuring that must not change
# behaviour (issue 22) is checked with it: build the old commit, build the new one, run
#   scripts/same-outputs.sh OLD/trainsim NEW/trainsim [WORKDIR]
# It prints one line per case and exits 1 when any file differs.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "${1:?old trainsim binary}")
new=$(realpath "${2:?new trainsim binary}")
work=${3:-$(mktemp -d)}
mkdir -p "$work/cases" "$work/sweeps"

# The ten Megatron rows as scenario files, with the settings the validation test uses.
python3 - "$work/cases" <<'EOF'
import json, sys
for row in json.load(open("tests/validation/megatron_sc21_table1.json")):
    sc = row["scenario"]
    sc["training"]["attention_backend"] = "unfused"
    sc["training"]["cross_entropy"] = "unfused"
    sc["cluster"]["inter_node"]["multipath"] = 8
    json.dump(sc, open(f"{sys.argv[1]}/megatron-{row['id']}.json", "w"), indent=1)

# Each strategy picture with the switches that take other paths through the
# graph builder: ZeRO 1-3 with and without overlap, the asynchronous modes,
# expert data parallelism, several iterations, the schedules.
variants = {
    "zero3.json": [{"overlap_param_gather": False}, {"overlap_grad_reduce": False}],
    "tp.json": [{"zero_stage": 1}, {"zero_stage": 2, "overlap_param_gather": True},
                {"zero_stage": 1, "overlap_grad_reduce": False}],
    "ep.json": [{"ep": 4, "zero_stage": 1, "overlap_param_gather": True}, {"ep": 2}],
    "cp.json": [{"cp": 2, "zero_stage": 1}],
    "pp-1f1b.json": [{"pipeline_schedule": "gpipe"}, {"zero_stage": 1, "overlap_param_gather": True}],
    "pp-interleaved.json": [{"zero_stage": 1, "overlap_param_gather": True}],
    "async-ps.json": [{"staleness": 0}, {"server_placement": "dedicated", "staleness": 0},
                      {"overlap_grad_reduce": False, "num_servers": 1}],
    "tp.json#sgd": [{"mode": "local_sgd", "sync_period": 2, "tp": 1, "sequence_parallel": False}],
}
for name, changes in variants.items():
    base = json.load(open("scenarios/strategies/" + name.split("#")[0]))
    for i, change in enumerate(changes):
        sc = json.loads(json.dumps(base))
        sc["parallelism"].update(change)
        sc["simulation"]["iterations"] = 3
        sc["name"] += f" variant {i}"
        json.dump(sc, open(f"{sys.argv[1]}/strategy-{name.replace('.json', '').replace('#', '-')}-{i}.json", "w"), indent=1)

# The failure replay's other paths (faults/replay.cpp): asynchronous checkpoints,
# maintenance windows, elastic shrink with rejoins, hot spares, Weibull failures,
# degraded links and stragglers, each over a run long enough to meet them.
failures = {
    "async-maintenance": {"checkpoint_mode": "async", "maintenance_interval": "3h", "maintenance_duration": "20min"},
    "elastic": {"policy": "elastic_shrink", "repair_time": "2h", "checkpoint_interval": "20min"},
    "spares": {"policy": "hot_spare", "hot_spares": 1, "repair_time": "4h", "distribution": "weibull",
               "weibull_shape": 0.7},
    "degraded": {"policy": "wait_for_repair", "repair_time": "20min", "degraded_links_per_1000_node_days": 20000,
                 "degraded_link_duration": "30min", "degraded_link_bandwidth": 0.5, "straggler_fraction": 0.05,
                 "straggler_slowdown": 1.2},
    "async-elastic-maintenance": {"checkpoint_mode": "async", "policy": "elastic_shrink", "repair_time": "30min",
                                  "maintenance_interval": "2h", "maintenance_duration": "10min",
                                  "degraded_links_per_1000_node_days": 20000, "degraded_link_duration": "1h"},
}
base = json.load(open("scenarios/gpt2-124m-64xh100-failures.json"))
for name, change in failures.items():
    sc = json.loads(json.dumps(base))
    sc["failures"].update(change)
    sc["failures"]["failures_per_1000_node_days"] = 300
    sc["training"]["train_tokens"] = 3e11
    sc["name"] += f" ({name})"
    json.dump(sc, open(f"{sys.argv[1]}/failures-{name}.json", "w"), indent=1)
EOF

# Runs one case with both binaries, each in its own folder, and compares the folders.
status=0
check() {
  local name=$1
  shift
  local side
  for side in old new; do
    rm -rf "$work/$side/$name"
    mkdir -p "$work/$side/$name"
    local bin=$old
    [[ $side == new ]] && bin=$new
    (cd "$work/$side/$name" && "$bin" "$@" >stdout.txt 2>stderr.txt) || echo "exit $?" >>"$work/$side/$name/stdout.txt"
    # The wall-clock time a run reports of itself is the one figure allowed to differ.
    sed -E -i 's/ in [0-9]+\.[0-9]+ s/ in (wall time) s/' "$work/$side/$name/stdout.txt"
  done
  if diff -r "$work/old/$name" "$work/new/$name" >"$work/$name.diff" 2>&1; then
    echo "same       $name ($(find "$work/new/$name" -type f | wc -l) files)"
    rm -rf "$work/$name.diff" "$work/old/$name" "$work/new/$name"  # the timelines run to gigabytes
  else
    echo "DIFFERENT  $name (see $work/$name.diff)"
    status=1
  fi
}

here=$(pwd)
for f in scenarios/*.json scenarios/strategies/*.json "$work"/cases/*.json; do
  f=$(realpath "$f")
  check "run-$(basename "$f" .json)" run "$f" --out result.json --trace trace.json
done
for op in all_reduce all_gather reduce_scatter all_to_all broadcast reduce send_recv; do
  for model in analytic flow; do
    check "collective-$op-$model" collective --cluster "$here/scenarios/llama3-8b-64xh100.json" --op "$op" \
      --model "$model" -e 1G
  done
done
# Two spaces whose points the scenario reader's layout checks reject for every reason
# the enumeration does not prune first (CP on unfused attention, virtual stages,
# the schedule, ZeRO, overlap_param_gather, MoE's sizes and sequence parallelism).
cat >"$work/sweeps/rejections-dense.json" <<'JSON'
{"name": "reader rejections",
 "model": {"num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 1024, "num_attention_heads": 4,
           "num_query_groups": 4, "seq_length": 96, "vocab_size": 1000},
 "training": {"global_batch_size": 16, "train_tokens": "1B", "attention_backend": "unfused"},
 "clusters": [{"name": "8 A100", "gpu": "A100-SXM4-80GB", "num_nodes": 1}],
 "space": {"tp": [1, 2], "pp": [1, 2, 4], "mbs": [1, 2], "zero_stage": [0, 2], "cp": [1, 2],
           "num_layers_per_virtual_pipeline_stage": [null, 1, 8], "overlap_param_gather": [false, true],
           "pipeline_schedule": ["1f1b", "interleaved_1f1b", "gpipe"]}}
JSON
cat >"$work/sweeps/rejections-moe.json" <<'JSON'
{"name": "moe rejections",
 "model": {"num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 512, "num_attention_heads": 4,
           "num_query_groups": 4, "seq_length": 64, "vocab_size": 1000, "num_experts": 4, "moe_router_topk": 2},
 "training": {"global_batch_size": 32, "train_tokens": "1B"},
 "clusters": [{"name": "8 H100", "gpu": "H100-SXM5-80GB", "num_nodes": 1}],
 "space": {"tp": [1, 2], "ep": [1, 2, 4, 8], "mbs": [1], "zero_stage": [0, 3], "sequence_parallel": [false, true],
           "cp": [1, 4]}}
JSON
for f in scenarios/sweeps/*.json tests/integration/sweep_small.json tests/integration/sweep_small_failures.json \
  "$work"/sweeps/rejections-*.json; do
  f=$(realpath "$f")
  check "sweep-$(basename "$f" .json)" sweep "$f" --out sweep --top 2 -j 2
  check "plan-$(basename "$f" .json)" plan "$f" --out plan.json -j 2
done
for f in tests/validation/h100/train-gpt2-*m.json tests/validation/h100/pytorch-*.run.json; do
  check "validate-$(basename "$f" .json)" validate --measured "$here/$f" \
    --calibration "$here/scenarios/calibration/h100-sxm5-80gb.json" --out validation
done
exit $status
