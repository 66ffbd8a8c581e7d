#!/usr/bin/env python3
"""scripts/corpus-microbatch-slopes.py on a hand-built corpus: the lines through exact points."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "corpus-microbatch-slopes.py")


def case(case_id, gbs, table="T1", repo="r"):
    return {"id": case_id, "source": {"repo": repo, "file": "f", "commit": "c", "table": table, "row": case_id},
            "scenario": {"name": case_id, "cluster": {"gpu": "H100-SXM5-80GB", "num_nodes": 1},
                         "training": {"global_batch_size": gbs, "micro_batch_size": 2},
                         "parallelism": {"tensor_model_parallel_size": 2, "data_parallel_size": "auto"}}}


def row(case_id, measured, predicted, held_out=False):
    return {"id": case_id, "gpus": 8, "measured_iteration_time_s": measured, "predicted_iteration_time_s": predicted,
            "held_out": held_out, "refused": None}


with tempfile.TemporaryDirectory() as d:
    # 8 GPUs at TP 2: DP 4, so m = gbs / (2 x 4): 2 and 4 micro-batches. Measured t = 0.1 + 0.05 m,
    # predicted t = 0.2 + 0.04 m: b -20%. The held-out point (m 8) and the other table's case
    # stay out; the other table's lone case makes no group.
    cases = [case("a-gbs16", 16), case("a-gbs32", 32), case("a-gbs64", 64), case("b-gbs16", 16, "T2", "r2")]
    with open(os.path.join(d, "tables.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f)
    report = {"cases": [row("a-gbs16", 0.2, 0.28), row("a-gbs32", 0.3, 0.36), row("a-gbs64", 9.0, 9.0, True),
                        row("b-gbs16", 0.5, 0.5)]}
    with open(os.path.join(d, "corpus.json"), "w", encoding="utf-8") as f:
        json.dump(report, f)
    out = subprocess.run([sys.executable, SCRIPT, d, os.path.join(d, "corpus.json")], capture_output=True,
                         text=True, check=True).stdout
    lines = [line for line in out.splitlines() if line.startswith("a-gbs16")]
    assert len(lines) == 1, out
    fields = lines[0].split()
    assert fields[1:7] == ["2/4", "0.0500", "0.0400", "-20.0%", "0.100", "0.200"], fields
    assert "1 groups" in out, out
    held = subprocess.run([sys.executable, SCRIPT, d, os.path.join(d, "corpus.json"), "--with-held-out"],
                          capture_output=True, text=True, check=True).stdout
    assert "2/4/8" in held, held

    # --across-data-parallel: the same layout on 2 nodes (16 GPUs: DP 8, m = 1 at gbs 16) in
    # another table of the same study joins the group (the other study's case does not); m 1/2/4 (gbs 16 on 2 nodes, 16 and 32
    # on 1), measured 0.15/0.2/0.3 lie on t = 0.1 + 0.05 m.
    two_nodes = case("c-gbs16-2n", 16, "T3")
    two_nodes["scenario"]["cluster"]["num_nodes"] = 2
    with open(os.path.join(d, "tables.json"), "w", encoding="utf-8") as f:
        json.dump(cases + [two_nodes], f)
    report["cases"].append(dict(row("c-gbs16-2n", 0.15, 0.24), gpus=16))
    with open(os.path.join(d, "corpus.json"), "w", encoding="utf-8") as f:
        json.dump(report, f)
    alone = subprocess.run([sys.executable, SCRIPT, d, os.path.join(d, "corpus.json")], capture_output=True,
                           text=True, check=True).stdout
    assert "1 groups" in alone, alone
    across = subprocess.run([sys.executable, SCRIPT, d, os.path.join(d, "corpus.json"), "--across-data-parallel"],
                            capture_output=True, text=True, check=True).stdout
    lines = [line for line in across.splitlines() if "1/2/4" in line]
    assert len(lines) == 1, across
    assert lines[0].split()[2:3] == ["0.0500"], lines[0]
print("ok")
