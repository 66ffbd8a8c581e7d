#!/usr/bin/env python3
"""Writes one sweep spec per Megatron-LM SC'21 Table 1 row (docs/sweep.md,
"Megatron-LM's published layouts") into a folder, default megatron-sweeps/:
    scripts/megatron-sweep-specs.py [FOLDER]
    for f in megatron-sweeps/*.json; do build/release/trainsim sweep "$f" --out "${f%.json}.sweep"; done
"""
import copy
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
rows = json.load(open(os.path.join(here, "..", "tests", "validation", "megatron_sc21_table1.json")))
out = sys.argv[1] if len(sys.argv) > 1 else "megatron-sweeps"
os.makedirs(out, exist_ok=True)
for i, row in enumerate(rows):
    sc = row["scenario"]
    pp0 = sc["parallelism"]["pipeline_model_parallel_size"]
    layers = sc["model"]["num_layers"]
    cluster = copy.deepcopy(sc["cluster"])
    cluster["name"] = row["id"]
    cluster["inter_node"]["multipath"] = 8  # as tests/validation/megatron_validation_test.cpp
    training = copy.deepcopy(sc["training"])
    mbs0 = training.pop("micro_batch_size")  # swept
    training["attention_backend"] = "unfused"
    training["cross_entropy"] = "unfused"
    training["train_tokens"] = 3e11
    par = sc["parallelism"]
    vpp0 = par.get("num_layers_per_virtual_pipeline_stage")
    if i < 5:  # seconds per point at most: a wider space
        space = {"tp": [1, 2, 4, 8], "pp": [p for p in [1, 2, 4, 8] if layers % p == 0],
                 "mbs": sorted({1, 2, 4, 8, mbs0})}
    else:
        space = {"tp": [8], "pp": sorted({p for p in [pp0 // 2, pp0, pp0 * 2] if p >= 1 and layers % p == 0}),
                 "mbs": sorted({max(1, mbs0 // 2), mbs0})}
    # The published layout (tests/validation/megatron_sc21_table1.json, from
    # Megatron-LM's examples/sc21 scripts) is always in the space: its schedule,
    # its layers per virtual stage and its DDP overlap.
    space.update({"recompute_granularity": "full", "zero_stage": 0,
                  "overlap_grad_reduce": par["overlap_grad_reduce"], "network_model": "analytic"})
    if vpp0:
        space["pipeline_schedule"] = ["1f1b", "interleaved_1f1b"]
        space["vpp"] = [vpp0]
    else:
        space["pipeline_schedule"] = "1f1b"
    spec = {"name": row["id"], "model": sc["model"], "training": training, "clusters": [cluster], "space": space}
    with open(os.path.join(out, f"{i:02d}-{row['id']}.json"), "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
