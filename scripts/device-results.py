#!/usr/bin/env python3
"""Bring one scripts/device-session.sh call's results into the repository and print the
figures issues 5 and 6 are judged by (docs/calibration.md, docs/validation.md).

  scripts/device-results.py DEVICE-SESSION.tar.gz [--trainsim build/release/trainsim]
                            [--no-install]

- unpacks the tarball into build/device-session/ (the folder the session wrote);
- installs the measured profile as scenarios/calibration/<gpu>.json (h100-sxm5-80gb.json
  on an H100) and the PyTorch steps as tests/validation/pytorch_<gpu>_gpt2.json and
  tests/validation/pytorch_<gpu>_gemm.json, each written to a temporary file and renamed
  (--no-install leaves the repository alone);
- prints the harness's GEMMs against ../shared/validation/PUBLIC_DATA.md's H100 table and
  PyTorch on the same card (within 3% or faster), the device copy against 95% of 3034 GB/s,
  `trainsim run` on scenarios/validation/gpt2-*-1x<gpu>.json with the profile against the
  PyTorch steps (within 10%), `trainsim validate` on each PyTorch run (class by class), and
  for each trainsim-train run `trainsim validate`
  (step within 5%, peak memory within 10%) and the trainer against PyTorch (within 1.3x);
- with --merge PROFILE (repeatable: a later trainsim-calibrate run, e.g. a table measured
  again after a fix), replaces the session profile's GEMM rows of every (dtype,
  accumulation) and kernel rows of every name PROFILE measured by PROFILE's, and records
  where they came from in the profile's "merged_from" (command, date, host, device, what
  was taken);
- exits 1 when an expected file is missing or a command fails, after printing what it can.
"""
import argparse
import gzip
import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
RES = ROOT / "build" / "device-session"
# ../shared/validation/PUBLIC_DATA.md, section 3: PyTorch 2.11 on the lent H100, one
# event pair per product, median of 50 (TFLOP/s); and its 4 GiB device-to-device copy.
H100_GEMM_REFERENCE = {
    (8192, 8192, 8192, "bf16"): 698.9,
    (4096, 4096, 4096, "bf16"): 624.7,
    (2048, 2048, 2048, "bf16"): 385.1,
    (16384, 3072, 768, "bf16"): 512.9,
    (8192, 50304, 768, "bf16"): 642.6,
    (4096, 16384, 4096, "bf16"): 658.1,
    (8192, 8192, 8192, "tf32"): 348.0,
}
H100_COPY_REFERENCE_GBPS = 3034.0
SIZES = ("124m", "350m", "774m")
problems = []


def load(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, data):
    """Writes to PATH.tmp, then renames: never a half-written file."""
    tmp = pathlib.Path(str(path) + ".tmp")
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def pct(value, reference):
    return 100.0 * (value / reference - 1.0)


def unpack(tarball):
    if RES.exists():
        shutil.rmtree(RES)
    with tarfile.open(tarball) as t:
        for m in t.getmembers():
            if not m.name.startswith("build/device-session") or ".." in pathlib.Path(m.name).parts:
                sys.exit(f"{tarball}: unexpected member {m.name!r} (expected build/device-session/...)")
        t.extractall(ROOT, filter="data")


def gemm_kind(row):
    return row["dtype"], row.get("accumulation", "default"), row.get("layout", "forward")


def merge(profile, other, source):
    """Rows of a later profile OTHER replace the session's: its GEMMs by (dtype,
    accumulation, layout), its kernels by name; the profile records what came from where."""
    if other.get("device", {}).get("name") != profile.get("device", {}).get("name"):
        sys.exit(f"{source}: measured on {other.get('device', {}).get('name')!r}, the session on "
                 f"{profile.get('device', {}).get('name')!r}: not merged")
    taken = []
    kinds = sorted({gemm_kind(r) for r in other.get("gemm", [])})
    if kinds:
        kept = [r for r in profile.get("gemm", []) if gemm_kind(r) not in kinds]
        taken += [f"gemm {d}" + ("" if acc == "default" else f" ({acc} accumulation)") +
                  ("" if lay == "forward" else f" ({lay} layout)") for d, acc, lay in kinds]
        print(f"{source}: {len(other['gemm'])} gemm rows replace {len(profile.get('gemm', [])) - len(kept)}")
        profile["gemm"] = kept + other["gemm"]
    names = sorted({r["name"] for r in other.get("kernels", [])})
    if names:
        kept = [r for r in profile.get("kernels", []) if r["name"] not in names]
        taken += [f"kernels {n}" for n in names]
        print(f"{source}: {len(other['kernels'])} kernel rows replace {len(profile.get('kernels', [])) - len(kept)}")
        profile["kernels"] = kept + other["kernels"]
    if not taken:
        sys.exit(f"{source}: no gemm or kernel rows to merge")
    profile.setdefault("merged_from", []).append({
        "command": other.get("command"), "date": other.get("date"), "host": other.get("host"),
        "device": other.get("device"), "versions": other.get("versions"), "taken": taken})


def gemm_table(profile, pytorch_gemm):
    # fp8 rows with fast accumulation are named as PyTorch's reference names them.
    rows = {(r["m"], r["n"], r["k"], r["dtype"] + ("_fast" if r.get("accumulation") == "fast" else "")): r["tflops"]
            for r in profile.get("gemm", []) if r.get("layout", "forward") == "forward"}
    torch_rows = {(r["m"], r["n"], r["k"], r["dtype"]): r["tflops"] for r in (pytorch_gemm or {}).get("rows", [])}
    print("\nGEMMs: harness against PUBLIC_DATA.md's H100 table and PyTorch on this card (issue 5: within 3% or faster)")
    print(f"{'M x N x K':22s} {'dtype':5s} {'harness':>8s} {'H100 table':>10s} {'':>7s} {'PyTorch':>8s} {'':>7s}")
    for shape, ref in H100_GEMM_REFERENCE.items():
        m, n, k, dt = shape
        got = rows.get(shape)
        if got is None:
            print(f"{f'{m} x {n} x {k}':22s} {dt:5s} {'not measured':>8s}")
            problems.append(f"GEMM {shape} not in the profile")
            continue
        t = torch_rows.get(shape)
        ok = got >= 0.97 * ref
        print(f"{f'{m} x {n} x {k}':22s} {dt:5s} {got:8.1f} {ref:10.1f} {pct(got, ref):+6.1f}% "
              f"{(f'{t:8.1f} {pct(got, t):+6.1f}%' if t else '')}  {'OK' if ok else 'BELOW 97%'}")
        if not ok:
            problems.append(f"GEMM {shape}: {got:.1f} TFLOP/s < 97% of {ref}")


def copy_line(profile):
    d2d = [c for c in profile.get("copies", []) if c.get("kind") == "device_to_device"]
    if not d2d:
        problems.append("no device_to_device copy in the profile")
        return
    big = max(d2d, key=lambda c: c["bytes"])
    ok = big["gbps"] >= 0.95 * H100_COPY_REFERENCE_GBPS
    print(f"\nDevice copy of {big['bytes'] / 2**30:.2f} GiB: {big['gbps']:.0f} GB/s, "
          f"{pct(big['gbps'], H100_COPY_REFERENCE_GBPS):+.1f}% against the H100's {H100_COPY_REFERENCE_GBPS:.0f} "
          f"({'OK' if ok else 'BELOW 95%'}); launch overhead {(profile.get('launch_overhead_s') or float('nan')) * 1e6:.2f} us")
    if not ok:
        problems.append("device copy below 95% of the reference")


def session_runs(prefix):
    """(size, parsed RES/PREFIX-SIZE.json) for each GPT-2 size the session measured."""
    for size in SIZES:
        path = RES / f"{prefix}-{size}.json"
        if path.exists():
            yield size, load(path)
        else:
            problems.append(f"{path.name} missing")


def pytorch_reference(gpu, device):
    rows = []
    for size, r in session_runs("pytorch-gpt2"):
        c = r["config"]
        rows.append({
            "scenario": f"scenarios/validation/gpt2-{size}-1x{gpu}.json",
            "model": f"gpt2-{size}",
            "parameters": c["parameters"],
            "batch": c["batch"],
            "seq": c["seq"],
            "vocab": c["vocab"],
            "step_time_s": r["step_time_s"],
            "step_time_min_s": r["step_time_min_s"],
            "step_time_max_s": r["step_time_max_s"],
            "steps_timed": len(r["step_times_s"]),
            "peak_memory_bytes": r["peak_memory_bytes"],
            "kernel_class_s": r["kernel_class_s"],
        })
    framework = next((load(p)["framework"] for p in sorted(RES.glob("pytorch-gpt2-*[0-9]m.json"))), "unknown")
    return {
        "source": f"Measured on the lent {device} with scripts/pytorch-gpt-step.py through scripts/device-session.sh "
                  f"({framework}): bf16 autocast over fp32 weights, SDPA attention, fused AdamW, no dropout, tied "
                  "embeddings; 8 warm-up steps, then the median of 30 steps each timed between CUDA events on fresh "
                  "random tokens. kernel_class_s: mean GPU time per step by kernel class over 3 profiled steps "
                  "(torch.profiler).",
        "device": device,
        "rows": rows,
    }


def run(cmd):
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        problems.append(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    return p


def predictions(trainsim, gpu, profile_path, reference):
    print(f"\nPyTorch eager against `trainsim run --calibration {profile_path.name}` (issue 5: within 10%)")
    print(f"{'model':10s} {'PyTorch':>10s} {'predicted':>10s} {'error':>7s}")
    for row in reference["rows"]:
        out = RES / f"predicted-{row['model']}.json"
        p = run([trainsim, "run", row["scenario"], "--calibration", str(profile_path), "--out", str(out), "-q"])
        if p.returncode != 0:
            continue
        t = load(out)["iteration_time_s"]
        err = pct(t, row["step_time_s"])
        print(f"{row['model']:10s} {row['step_time_s'] * 1e3:8.2f}ms {t * 1e3:8.2f}ms {err:+6.1f}%"
              f"  {'OK' if abs(err) <= 10 else 'OUTSIDE 10%'}")


def pytorch_validate(trainsim, profile_path):
    print("\nPyTorch eager runs against `trainsim validate` (the pytorch_eager op list, class by class)")
    for size in SIZES:
        run_file = RES / f"pytorch-gpt2-{size}.run.json"
        if not run_file.exists():
            problems.append(f"{run_file.name} missing")
            continue
        p = run([trainsim, "validate", "--measured", str(run_file), "--calibration", str(profile_path),
                 "--out", str(RES / f"validate-pytorch-{size}")])
        print("  " + p.stdout.replace("\n", "\n  ").rstrip())


def pytorch_traces(trainsim, gpu, profile_path, install):
    """The profiler traces of the PyTorch steps (pytorch-gpt-step.py --profile-trace) against
    `trainsim validate --measured TRACE --scenario` (docs/pytorch-traces.md); the 124M one is
    installed gzip'd as tests/validation/<gpu>/pytorch-gpt2-124m.trace.json.gz, the recorded trace the
    tests hold the reader to."""
    print("\nPyTorch profiler traces against `trainsim validate --scenario` (pytorch_eager scenarios)")
    short = gpu.split("-")[0].lower()
    for size in SIZES:
        trace = RES / f"pytorch-gpt2-{size}.trace.json"
        # The session's steps pad the vocabulary to 50304: the H200's scenarios of that
        # vocabulary are the -v50304 ones (gpt2-*-1xh200.json keep 50257).
        scenario = ROOT / "scenarios" / "validation" / f"gpt2-{size}-1x{short}-v50304.json"
        if not scenario.exists():
            scenario = ROOT / "scenarios" / "validation" / f"gpt2-{size}-1x{short}.json"
        if not trace.exists() or not scenario.exists():
            problems.append(f"{trace.name} or {scenario.name} missing")
            continue
        p = run([trainsim, "validate", "--measured", str(trace), "--scenario", str(scenario), "--calibration",
                 str(profile_path), "--out", str(RES / f"validate-trace-{size}")])
        print("  " + p.stdout.replace("\n", "\n  ").rstrip())
        if install and size == "124m":
            target = ROOT / "tests" / "validation" / short / (trace.name + ".gz")
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(trace, "rb") as src, gzip.GzipFile(str(target) + ".tmp", "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            os.replace(str(target) + ".tmp", target)
            print(f"  installed {target.relative_to(ROOT)}")


def trainer(trainsim, profile_path, reference):
    torch_step = {r["model"]: r["step_time_s"] for r in reference["rows"]}
    print("\ntrainsim-train: measured, against PyTorch (issue 6: within 1.3x) and `trainsim validate`")
    for size, r in session_runs("train-gpt2"):
        run_file = RES / f"train-gpt2-{size}.json"
        step = r["step_time_s"]["median"]
        t = torch_step.get(f"gpt2-{size}")
        ratio = f"{step / t:.3f}x PyTorch's {t * 1e3:.2f} ms" if t else "no PyTorch step"
        print(f"gpt2-{size}: step {step * 1e3:.2f} ms ({ratio}), peak {r['peak_memory_bytes'] / 2**30:.2f} GiB")
        out = RES / f"validate-{size}"
        p = run([trainsim, "validate", "--measured", str(run_file), "--calibration", str(profile_path),
                 "--out", str(out)])
        print("  " + p.stdout.replace("\n", "\n  ").rstrip())
    loss_file = RES / "kjv-loss.json"
    if loss_file.exists():
        loss = load(loss_file)["loss"]
        def f(v):
            return "n/a" if v is None else f"{v:.3f}"
        print(f"\nLoss on the shipped corpus: {f(loss.get('initial'))} -> {f(loss.get('final'))}, held out "
              f"{f(loss.get('held_out'))} over {loss.get('held_out_tokens')} tokens (ln 256 = 5.545)")
    else:
        problems.append("kjv-loss.json missing")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tarball")
    ap.add_argument("--trainsim", default=None, help="the simulator (default: build/release or build/test)")
    ap.add_argument("--no-install", action="store_true", help="only print; write nothing outside build/")
    ap.add_argument("--merge", action="append", default=[],
                    help="a later profile whose GEMM (per dtype) and kernel (per name) rows replace the session's")
    ap.add_argument("--pytorch-gemm", help="a later PyTorch GEMM reference (pytorch-gemm-reference.py --out) to use")
    a = ap.parse_args()
    trainsim = a.trainsim or next((str(p) for p in (ROOT / "build/release/trainsim", ROOT / "build/test/trainsim")
                                   if p.exists()), None)
    if trainsim is None:
        sys.exit("no trainsim binary: build it (cmake --workflow --preset release) or pass --trainsim")
    unpack(a.tarball)
    summary = RES / "summary.txt"
    if summary.exists():
        print(summary.read_text().rstrip())
    name = (RES / "profile-name.txt").read_text().strip()
    gpu = name.split("-")[0]
    profile_path = RES / "profile.json"
    if not profile_path.exists():
        sys.exit(f"{profile_path}: no profile measured (see {RES}/calibrate.log)")
    profile = load(profile_path)
    for other in a.merge:
        merge(profile, load(other), other)
    if a.merge:
        write_json(profile_path, profile)
    device = profile.get("device", {}).get("name", name)
    if not profile.get("complete", False):
        problems.append("the profile is incomplete (the harness was stopped before the end)")
    pytorch_gemm = load(RES / "pytorch-gemm.json") if (RES / "pytorch-gemm.json").exists() else None
    if a.pytorch_gemm:
        pytorch_gemm = load(a.pytorch_gemm)
    reference = pytorch_reference(gpu, device)
    if not a.no_install:
        installed = ROOT / "scenarios" / "calibration" / f"{name}.json"
        shutil.copyfile(profile_path, str(installed) + ".tmp")
        os.replace(str(installed) + ".tmp", installed)
        profile_path = installed
        write_json(ROOT / "tests" / "validation" / f"pytorch_{gpu}_gpt2.json", reference)
        if pytorch_gemm:
            write_json(ROOT / "tests" / "validation" / f"pytorch_{gpu}_gemm.json", pytorch_gemm)
        print(f"\ninstalled {installed.relative_to(ROOT)} and tests/validation/pytorch_{gpu}_*.json")
    gemm_table(profile, pytorch_gemm)
    copy_line(profile)
    predictions(trainsim, gpu, profile_path, reference)
    pytorch_validate(trainsim, profile_path)
    pytorch_traces(trainsim, gpu, profile_path, not a.no_install)
    trainer(trainsim, profile_path, reference)
    if problems:
        print("\nproblems:\n  " + "\n  ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
