# %% [markdown]
# # Which parallel layout trains Llama-3 8B fastest on 64 H100?
#
# A notebook-style script (cells marked `# %%` run one by one in VS Code or Jupyter,
# or the whole file with `python3 examples/sweep_layouts.py`). It sweeps tensor,
# pipeline and micro-batch sizes, ZeRO stage and recomputation with `trainsim.sweep`,
# then plots every layout's iteration time against its memory per GPU and writes
# `sweep_layouts.png` (or the path given as the first argument).
#
# Needs the package and matplotlib: `pip install . matplotlib` (docs/python.md).

# %%
import sys
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt

import trainsim

spec = {
    "name": "Llama-3 8B on 64 H100",
    "model": "llama3-8b",
    "training": {"global_batch_size": 512, "precision": "bf16", "train_tokens": "100B"},
    "clusters": [{"name": "64 H100", "gpu": "H100-SXM5-80GB", "num_nodes": 8, "price_per_gpu_hour": 2.5}],
    "space": {"tp": "auto", "pp": "auto", "mbs": [1, 2, 4], "sequence_parallel": "auto", "zero_stage": [0, 1],
              "recompute_granularity": ["selective", "full"], "overlap_grad_reduce": True,
              "network_model": "analytic"},
}

# %% The points arrive as they are evaluated, on every core.
start = time.perf_counter()
sweep = trainsim.sweep(spec)
points = []
for point in sweep:
    points.append(point)
    if len(points) % 50 == 0:
        print(f"{len(points)} points, {time.perf_counter() - start:.1f} s")
fits = [p for p in points if p["memory"]["fits"]]
print(f"{len(points)} layouts ({len(fits)} fit in memory) in {time.perf_counter() - start:.1f} s")

# %% The five fastest layouts.
for p in sorted(fits, key=lambda p: p["iteration_time_s"])[:5]:
    print(f"{p['scenario']:<50} {p['iteration_time_s']:.3f} s/iteration  MFU {p['mfu']:.1%}  "
          f"bottleneck {p['bottleneck']['name']}")

# %% Iteration time against memory per GPU, one colour per tensor x pipeline size.
fig, ax = plt.subplots(figsize=(8.5, 4.5), dpi=100)
shapes = sorted({(p["layout"]["tensor_model_parallel_size"], p["layout"]["pipeline_model_parallel_size"])
                 for p in fits})
for tp, pp in shapes:
    group = [p for p in fits if (p["layout"]["tensor_model_parallel_size"], p["layout"]["pipeline_model_parallel_size"])
             == (tp, pp)]
    ax.scatter([p["memory"]["peak_bytes_per_gpu"] / 2**30 for p in group], [p["iteration_time_s"] for p in group],
               s=14, label=f"tp {tp} pp {pp}")
capacity = fits[0]["memory"]["capacity_bytes_per_gpu"] / 2**30 if fits else 80
ax.axvline(capacity, color="grey", linestyle="--", linewidth=1)
ax.set_xlabel("peak memory per GPU (GiB)")
ax.set_ylabel("iteration time (s)")
ax.set_yscale("log")
ax.set_title(f"{spec['name']}: {len(fits)} layouts that fit")
ax.legend(fontsize=7, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
fig.tight_layout()
out = sys.argv[1] if len(sys.argv) > 1 else "sweep_layouts.png"
fig.savefig(out)
print(f"wrote {out}")
