#!/usr/bin/env bash
# Shared-cluster speed (issue 27): a month of a 1,000-job trace on a 4,096-GPU
# cluster (512 DGX H100 nodes, 400G rail-optimized fat tree) replayed by
# `trainsim cluster` under fifo, backfill and priority (--compare), target under
# a minute on 2 cores. The trace is synthetic, in Helios's cluster_log.csv format
# (docs/cluster.md, "Traces"), seeded: arrivals uniform over 30 days, GPU counts
# 1/8/16/32/64/128/256/512/1024 with weights 20/25/15/12/10/8/5/3/2 %, run times
# log-uniform from 1 hour to 5 days (about 60% of the cluster's GPU-hours). These
# numbers only size the benchmark; they are not a claim about any real cluster.
# Nodes fail at Kokolis et al.'s 6.5 per 1000 node-days (docs/reliability.md) and are
# out 24 h each (an assumption of the benchmark).
# Prints the wall time and the summary.
# Usage: scripts/bench-cluster-trace.sh [TRAINSIM] [JOBS] [PLACEMENT (topology_aware|blind)]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/test/trainsim}")
jobs=${2:-1000}
placement=${3:-topology_aware}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$jobs" <<'PY'
import json, math, random, sys, datetime
out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(27)
sizes = [1, 8, 16, 32, 64, 128, 256, 512, 1024]
weights = [20, 25, 15, 12, 10, 8, 5, 3, 2]
t0 = datetime.datetime(2020, 9, 1)
rows = []
for i in range(n):
    submit = t0 + datetime.timedelta(seconds=rng.uniform(0, 30 * 86400))
    gpus = rng.choices(sizes, weights)[0]
    run = math.exp(rng.uniform(math.log(3600), math.log(5 * 86400)))
    rows.append((submit, gpus, run))
rows.sort()
fmt = "%Y-%m-%d %H:%M:%S"
with open(f"{out}/cluster_log.csv", "w") as f:
    f.write("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n")
    for i, (submit, gpus, run) in enumerate(rows):
        end = submit + datetime.timedelta(seconds=int(run))
        f.write(f"{i},u0,vc0,{gpus},{gpus * 4},{max(1, gpus // 8)},COMPLETED,{submit.strftime(fmt)},"
                f"{submit.strftime(fmt)},{end.strftime(fmt)},{int(run)},0\n")
def scenario(model, gbs, mbs, par):
    return {"model": model, "training": {"global_batch_size": gbs, "micro_batch_size": mbs, "precision": "bf16"},
            "parallelism": dict(par, dp="auto"), "simulation": {"network_model": "analytic"}}
json.dump({
    "name": "4096 H100, a synthetic month of 1000 jobs",
    "cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 512, "gpus_per_node": 8,
                "inter_node": {"topology": "rail_optimized", "nics_per_node": 8, "nic_bandwidth": "400Gbps"},
                "price_per_gpu_hour": 2.99},
    "scheduler": {"policy": "backfill"},
    "failures": {"failures_per_1000_node_days": 6.5, "repair_time": "24h"},
    "trace": {"format": "helios", "path": "cluster_log.csv", "templates": [
        {"max_gpus": 8, "scenario": scenario("gpt2-124m", 128, 8, {})},
        {"max_gpus": 64, "scenario": scenario("llama3-8b", 512, 1, {"tp": 2, "sequence_parallel": True,
                                                                   "recompute_granularity": "full", "zero_stage": 1})},
        {"max_gpus": 4096, "scenario": scenario("llama3-70b", 512, 1, {"tp": 8, "pp": 4, "sequence_parallel": True,
                                                                      "recompute_granularity": "full", "zero_stage": 1})}]}
}, open(f"{out}/workload.json", "w"), indent=1)
PY
start=$(date +%s.%N)
"$bin" cluster "$work/workload.json" --compare --placement "$placement"
end=$(date +%s.%N)
printf 'wall %.1f s for %s jobs, three policies (target: under 60 s on 2 cores)\n' "$(echo "$end - $start" | bc)" "$jobs"
