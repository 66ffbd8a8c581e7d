#!/usr/bin/env python3
"""Builds the corpus cases of Hagemann et al.'s parallelization-layout sweep: Llama 13B/30B/65B
trained on 32-256 A100 80GB in Aleph Alpha's "Scaling" framework, one case per successful run
that used FlashAttention-2 and the fused RMSNorm kernel (the kernels trainsim's fused op list
prices), from the per-run sheets the authors published.

Source: "Efficient Parallelization Layouts for Large-Scale Distributed Model Training"
(Hagemann, Weinbach, Dobler, Schall, de Melo; arXiv 2311.05610, WANT@NeurIPS 2023, COLM 2024);
data: github.com/JohannesHa/COLM-submission-efficient-parallelization-layouts @ 641316d (data/*.xlsx,
data/seqpara/*.xlsx: trial id, world size, average step time, TFLOP/s by two formulas, MFU,
activation checkpointing, kernels, micro-batch size, model (tensor) parallel size, pipeline
size, and in data/seqpara/ sequence parallelism).

What the sheets do not state, and how each case fills it in (every case's "note" repeats it):
  - Global batch: 2048 sequences at 2048 tokens, 512 at 8192 (4,194,304 tokens a step), derived
    from the published TFLOP/s and MFU with the framework's own formulas
    (Aleph-Alpha/scaling src/scaling/transformer/utils/get_tflops.py: MFU = B s (6P + 12 L h s) /
    (t W 312e12), Megatron TFLOP/s = (6 B s P + 60 B s^2 h L) / (t W 1e12)); most runs give these
    values to 0.1%.
  - Vocabulary 128000, untied embeddings, SwiGLU, RMSNorm (the framework's example config and
    the parameter counts the two formulas imply); 30B's FFN 17888 (= 2.6875 h), 13B 13824, 65B
    22016; heads as LLaMA (40, 52, 64).
  - Hardware: DGX A100 80GB (NVSwitch, 8 x 200 Gb/s HDR per node: the A100 preset's platform);
    "DGX A100" from a summary of the paper, 80 GB because 65B at TP 2 x PP 4 without
    recomputation ran.
  - The framework (Aleph-Alpha/scaling @ 737f855, its 2024 public version; the 2023 code is not
    public): ZeRO-1 whose fp32 gradient all-reduce runs after the last micro-batch, followed by
    a bucketed all-gather of the updated parameters; blocking tensor-parallel collectives; a
    synchronous 1F1B pipeline; the step timer wraps the whole train step. trainsim expresses
    it as zero_stage 1 without overlap (a reduce-scatter where the framework all-reduces: the
    data-parallel traffic is 6 bytes a parameter instead of 10), tp_backward "sync"; rotary
    embeddings as the rotate-half PyTorch ops in the model's bf16 (src/scaling/core/nn/rotary.py,
    apply_rotary_pos_emb): apply_rope_fusion false; SwiGLU as silu(x W_in) * (x W_gate) in PyTorch
    ops (src/scaling/core/nn/mlp.py, ParallelSwiGLUMLP): bias_activation_fusion false (its two
    input linears are one GEMM of twice the width in trainsim).

usage:
  build_hagemann_layouts.py CLONE       write hagemann_layouts.json next to this file from a clone
                                        of the data repository (needs openpyxl)
  build_hagemann_layouts.py CLONE --fits TRAINSIM
                                        run every sheet row (out-of-memory ones too) with the same
                                        scenario through TRAINSIM and count where its peak memory
                                        per GPU (80 GiB) agrees with the sheets' OOM flags
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = "JohannesHa/COLM-submission-efficient-parallelization-layouts"
COMMIT = "641316d743c24de0ebe9a7180a1e84223e916b2e"
MODELS = {
    "13B": dict(num_layers=40, hidden_size=5120, ffn_hidden_size=13824, num_attention_heads=40),
    "30B": dict(num_layers=60, hidden_size=6656, ffn_hidden_size=17888, num_attention_heads=52),
    "65B": dict(num_layers=80, hidden_size=8192, ffn_hidden_size=22016, num_attention_heads=64),
}
KERNEL = "flash_attention2 + RMS kernel"
NOTE = ("Aleph Alpha's Scaling framework (the 2023 code is not public; behaviour read in Aleph-Alpha/scaling "
        "@737f855, 2024): ZeRO-1 with an fp32 gradient all-reduce after the last micro-batch, not overlapped, then a "
        "bucketed all-gather of the updated parameters: expressed as zero_stage 1 without overlap, whose "
        "reduce-scatter moves 6 bytes a parameter over the data-parallel group where the framework moves 10; "
        "blocking tensor-parallel collectives (tp_backward sync); synchronous 1F1B; rotary embeddings as the "
        "rotate-half PyTorch ops in bf16 (rotary.py apply_rotary_pos_emb: apply_rope_fusion false); SwiGLU as "
        "silu(x W_in) * (x W_gate) in PyTorch ops (mlp.py ParallelSwiGLUMLP: bias_activation_fusion false; its two "
        "input linears one GEMM of twice the width here). Global batch {gbs} sequences "
        "derived from the published TFLOP/s and MFU with the framework's formulas (get_tflops.py), not stated; "
        "vocabulary 128000, untied embeddings (the framework's config; the parameter count the formulas imply); "
        "DGX A100 80GB assumed (a summary of the paper says DGX A100; 65B at TP 2 x PP 4 without recomputation "
        "ran). Loss kernel not stated (trainsim's fused loss). No memory published (the sheets flag OOM runs).")


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def sheet_rows(path):
    """(row values, column index, model size, sequence, global batch) of each run of a sheet
    with the priced kernels and no activation checkpointing, out-of-memory runs included."""
    import openpyxl  # only the builder needs it

    rows = list(openpyxl.load_workbook(path, data_only=True).worksheets[0].iter_rows(values_only=True))
    title, header = rows[0][0], rows[1]
    col = {name: i for i, name in enumerate(header)}
    size = next(k for k in MODELS if f"_{k}_" in os.path.basename(path))
    seq = 8192 if "8k_seq" in os.path.basename(path) else 2048
    gbs = 512 if seq == 8192 else 2048
    for r in rows[2:]:
        if r[col["kernel"]] == KERNEL and r[col["activation_checkpointing_type"]] == "disabled":
            yield title, r, col, size, seq, gbs


def layout_of(r, col):
    world = int(r[col["World Size"]])
    mbs, tp, pp = (int(r[col[k]]) for k in ("micro_batch_size", "model_parallel_size", "pipe_parallel_size"))
    sp = bool(r[col["sequence_parallel"]]) if "sequence_parallel" in col else False
    return world, mbs, tp, pp, sp and tp > 1


def scenario_of(name, size, seq, gbs, world, mbs, tp, pp, sp):
    model = dict(MODELS[size], name=f"llama-{size.lower()}-aa", num_query_groups=MODELS[size]["num_attention_heads"],
                 seq_length=seq, max_position_embeddings=seq, vocab_size=128000, swiglu=True,
                 untie_embeddings=True, normalization="RMSNorm", position_embedding_type="rope",
                 add_bias_linear=False, hidden_dropout=0.0, attention_dropout=0.0)
    return {
        "name": name,
        "cluster": {"gpu": "A100-SXM4-80GB", "num_nodes": world // 8},
        "model": model,
        "training": {"global_batch_size": gbs, "micro_batch_size": mbs, "precision": "bf16",
                     "grad_reduce_dtype": "fp32", "attention_backend": "flash2", "tp_backward": "sync",
                     "apply_rope_fusion": False, "bias_activation_fusion": False},
        "parallelism": {"tensor_model_parallel_size": tp, "pipeline_model_parallel_size": pp,
                        "data_parallel_size": "auto", "sequence_parallel": sp, "zero_stage": 1,
                        "overlap_grad_reduce": False, "overlap_param_gather": False,
                        "recompute_granularity": "none", "pipeline_schedule": "1f1b"},
    }


def cases_of(path, clone):
    rel = os.path.relpath(path, clone)
    out = []
    for title, r, col, size, seq, gbs in sheet_rows(path):
        t = num(r[col["Average Step Time"]])
        if t is None:
            continue
        world, mbs, tp, pp, sp = layout_of(r, col)
        dp = world // (tp * pp)
        trial = int(r[col["Trial ID"]])
        case_id = (f"hagemann-a100-llama-{size.lower()}-{world}g-seq{seq}-mbs{mbs}-tp{tp}-pp{pp}"
                   f"{'-sp' if sp else ''}-t{trial}")
        out.append({
            "id": case_id,
            "source": {"repo": REPO, "file": rel, "commit": COMMIT, "table": title, "row": f"Trial ID {trial}"},
            "configuration": (f"Llama {size} (LLaMA shapes, vocabulary 128000), {world} A100 80GB, bf16, sequence {seq}, "
                              f"micro-batch {mbs}, TP {tp}, PP {pp}, DP {dp}, global batch {gbs} "
                              f"({gbs // (mbs * dp)} micro-batches per pipeline), sequence parallel {sp}, "
                              f"no activation checkpointing, kernels '{KERNEL}'"),
            "note": NOTE.format(gbs=gbs),
            "measured": {"iteration_time_s": t, "mfu": num(r[col["Average MFU"]]),
                         "tflops_per_gpu": num(r[col["Average TFlops Megatron"]])},
            "derivation": "iteration_time_s = 'Average Step Time' as published (seconds a global step)",
            "fidelity": "approximate",
            "tags": ["A100", "bf16", "dense", "hagemann", "approximate"],
            "scenario": scenario_of(case_id, size, seq, gbs, world, mbs, tp, pp, sp),
        })
    return out


def sheets(clone):
    return sorted(glob.glob(os.path.join(clone, "data", "*.xlsx")) +
                  glob.glob(os.path.join(clone, "data", "seqpara", "*.xlsx")))


def fits(clone, trainsim):
    """Counts trainsim's fits / does-not-fit against the sheets' out-of-memory flags."""
    import subprocess
    import tempfile

    capacity = 80 * 2**30
    counts = {(ran, fit): 0 for ran in (True, False) for fit in (True, False)}
    with tempfile.TemporaryDirectory() as tmp:
        for path in sheets(clone):
            for _, r, col, size, seq, gbs in sheet_rows(path):
                step = r[col["Average Step Time"]]
                ran = num(step) is not None
                if not ran and not (isinstance(step, str) and "OOM" in step):
                    continue
                world, mbs, tp, pp, sp = layout_of(r, col)
                if gbs % (mbs * world // (tp * pp)):
                    continue  # no whole number of micro-batches: not a layout trainsim can run
                scenario = os.path.join(tmp, "scenario.json")
                with open(scenario, "w", encoding="utf-8") as f:
                    json.dump(scenario_of("fits", size, seq, gbs, world, mbs, tp, pp, sp), f)
                subprocess.run([trainsim, "run", scenario, "--out", scenario + ".out"], check=True,
                               capture_output=True)
                with open(scenario + ".out", encoding="utf-8") as f:
                    peak = json.load(f)["memory"]["peak_bytes_per_gpu"]
                counts[(ran, peak <= capacity)] += 1
    ran, oom = counts[(True, True)] + counts[(True, False)], counts[(False, True)] + counts[(False, False)]
    print(f"{ran} ran: {counts[(True, True)]} fit, {counts[(True, False)]} over 80 GiB; "
          f"{oom} out of memory: {counts[(False, False)]} over 80 GiB, {counts[(False, True)]} fit; "
          f"{counts[(True, True)] + counts[(False, False)]} of {ran + oom} agree")


def main():
    if len(sys.argv) == 4 and sys.argv[2] == "--fits":
        fits(sys.argv[1], sys.argv[3])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    clone = sys.argv[1]
    cases = []
    for path in sheets(clone):
        cases.extend(cases_of(path, clone))
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate ids"
    with open(os.path.join(HERE, "hagemann_layouts.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
