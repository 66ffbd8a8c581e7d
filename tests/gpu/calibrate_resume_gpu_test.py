#!/usr/bin/env python3
"""trainsim-calibrate on a real GPU survives what goes wrong in a long calibration
(issue 29 item 2, docs/calibration.md "Interrupted and failed measurements"):

  1. a shape too large for the device fails alone: its out-of-memory error is an
     "errors" row and every other shape is measured;
  2. a crash before the Nth measurement (TRAINSIM_CALIBRATE_FAULT=crash@N) keeps
     the N-1 measured in the journal; --resume puts them back unchanged, measures
     the rest and writes a complete profile with every key of an uninterrupted run;
  3. Ctrl-C (SIGINT) mid-run stops with exit status 130 and a profile marked
     "complete": false; --resume completes it;
  4. SIGKILL mid-run (no chance to write anything) loses only the measurement in
     flight: --resume completes the profile.

Usage: calibrate_resume_gpu_test.py TRAINSIM_CALIBRATE WORK_DIR
Exit 0: passed; 1: failed; 77: skipped (no CUDA part in this build, or no GPU).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77
BIN, WORK = sys.argv[1], sys.argv[2]
# Small bf16 GEMMs (a few ms each with their repeats), and one whose A alone is
# 400000 x 400000 x 2 bytes = 320 GB: more than any GPU holds.
SMALL = [(512, 512, 512), (1024, 1024, 1024), (2048, 1024, 1024), (1024, 2048, 4096), (4096, 4096, 1024),
         (3072, 1024, 2048)]
HUGE = (400000, 256, 400000)
failures = []


def check(condition, what):
    print(("ok:     " if condition else "FAILED: ") + what, flush=True)
    if not condition:
        failures.append(what)


def write_shapes(path, shapes):
    with open(path, "w") as f:
        json.dump([{"m": m, "n": n, "k": k} for m, n, k in shapes], f)


def command(out, shapes_file, resume=False):
    cmd = [BIN, "--out", out, "--launch", "--gemm", "--dtypes", "bf16", "--no-grid", "--shapes", shapes_file]
    return cmd + (["--resume"] if resume else [])


def run(cmd, fault=None, timeout=300):
    env = dict(os.environ)
    env.pop("TRAINSIM_CALIBRATE_FAULT", None)
    if fault:
        env["TRAINSIM_CALIBRATE_FAULT"] = fault
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def load(path):
    with open(path) as f:
        return json.load(f)


def gemm_keys(profile):
    return sorted((r["m"], r["n"], r["k"], r.get("layout", "forward")) for r in profile.get("gemm", []))


def error_keys(profile):
    return sorted(e["key"] for e in profile.get("errors", []))


def journal_lines(path):
    """The journal's whole records (a line torn by a kill is not one)."""
    if not os.path.exists(path):
        return []
    records = []
    with open(path) as f:
        for line in f.read().splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records


def wait_for_journal(journal, count, process, limit_s=120):
    t0 = time.time()
    while time.time() - t0 < limit_s and process.poll() is None:
        if len(journal_lines(journal)) >= count:
            return True
        time.sleep(0.02)
    return False


def probe():
    """Skips (77) unless this build has its CUDA part and a GPU answers."""
    out = os.path.join(WORK, "probe.json")
    rc, _, err = run([BIN, "--out", out, "--launch"], timeout=120)
    if rc != 0 and ("no CUDA part" in err or "no usable CUDA device" in err):
        print("SKIPPED: " + err.strip().splitlines()[-1])
        sys.exit(SKIP)
    check(rc == 0, f"probe: --launch alone exits 0 (got {rc}: {err.strip()[-300:]})")
    if rc != 0:
        sys.exit(1)


def test_out_of_memory_shape_fails_alone():
    shapes = os.path.join(WORK, "oom-shapes.json")
    write_shapes(shapes, SMALL + [HUGE])
    out = os.path.join(WORK, "oom.json")
    rc, _, err = run(command(out, shapes))
    check(rc == 0, f"out-of-memory shape: the run exits 0 (got {rc}: {err.strip()[-300:]})")
    if rc != 0:
        return
    p = load(out)
    key = "gemm bf16 %dx%dx%d forward" % HUGE
    errors = {e["key"]: e for e in p.get("errors", [])}
    check(p.get("complete") is True, "out-of-memory shape: the profile is complete")
    check(key in errors and "out of memory" in errors[key]["error"],
          f"out-of-memory shape: '{key}' is an errors row naming out of memory ({errors.get(key)})")
    check(gemm_keys(p) == sorted(s + ("forward",) for s in SMALL),
          f"out-of-memory shape: all {len(SMALL)} other shapes measured ({len(gemm_keys(p))} rows)")
    check(all(r["tflops"] > 0 for r in p["gemm"]), "out-of-memory shape: every row has a positive rate")


def test_crash_then_resume(reference):
    shapes = os.path.join(WORK, "shapes.json")
    out = os.path.join(WORK, "crash.json")
    journal = out + ".journal"
    # Measurement 1 is the launch overhead, 2.. the GEMMs: crash before the 4th.
    rc, _, err = run(command(out, shapes), fault="crash@4")
    check(rc != 0, f"crash@4: the harness dies (exit {rc})")
    kept = journal_lines(journal)
    check(len(kept) == 3, f"crash@4: the journal keeps the 3 measurements before it ({len(kept)})")
    rc, stdout, err = run(command(out, shapes, resume=True))
    check(rc == 0, f"crash@4 then --resume: exits 0 (got {rc}: {err.strip()[-300:]})")
    if rc != 0:
        return
    check("# resumed: 3 measurements" in stdout, "crash@4 then --resume: says it resumed 3 measurements")
    p = load(out)
    check(p.get("complete") is True, "crash@4 then --resume: the profile is complete")
    check(not os.path.exists(journal), "crash@4 then --resume: the journal is deleted")
    check(gemm_keys(p) == gemm_keys(reference) and error_keys(p) == error_keys(reference)
          and ("launch_overhead_s" in p) == ("launch_overhead_s" in reference),
          "crash@4 then --resume: the same measurements as the uninterrupted run")
    rows = {(r["m"], r["n"], r["k"]): r for r in p["gemm"]}
    for line in kept:
        if line.get("section") == "gemm":
            r = line["row"]
            check(rows.get((r["m"], r["n"], r["k"])) == r, f"crash@4 then --resume: {line['key']} kept as measured")
        elif line.get("set") == "launch_overhead_s":
            check(p["launch_overhead_s"] == line["value"], "crash@4 then --resume: launch overhead kept as measured")


def interrupt_then_resume(reference, sig, name):
    shapes = os.path.join(WORK, "shapes.json")
    out = os.path.join(WORK, name + ".json")
    journal = out + ".journal"
    process = subprocess.Popen(command(out, shapes), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={k: v for k, v in os.environ.items() if k != "TRAINSIM_CALIBRATE_FAULT"})
    reached = wait_for_journal(journal, 3, process)
    check(reached, f"{name}: the run reaches its 3rd measurement while still running")
    process.send_signal(sig)
    rc = process.wait(timeout=120)
    process.stderr.read()
    kept = len(journal_lines(journal))
    if sig == signal.SIGINT:
        check(rc == 130, f"{name}: exit status 130 (got {rc})")
        check(os.path.exists(out) and load(out).get("complete") is False,
              f"{name}: the profile is written with \"complete\": false")
    else:
        check(rc == -signal.SIGKILL, f"{name}: killed (got {rc})")
    check(kept >= 3, f"{name}: the journal keeps the {kept} measurements made")
    rc, stdout, err = run(command(out, shapes, resume=True))
    check(rc == 0, f"{name} then --resume: exits 0 (got {rc}: {err.strip()[-300:]})")
    if rc != 0:
        return
    check(f"# resumed: {kept} measurements" in stdout, f"{name} then --resume: resumed the {kept} measurements")
    p = load(out)
    check(p.get("complete") is True and gemm_keys(p) == gemm_keys(reference),
          f"{name} then --resume: a complete profile with the uninterrupted run's {len(gemm_keys(reference))} shapes")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    probe()
    test_out_of_memory_shape_fails_alone()
    # The interrupted runs need enough measurements to be stopped in the middle:
    # M, N, K each of 512 ... 4096, 125 shapes (about 0.05 s each).
    sizes = (512, 1024, 2048, 3072, 4096)
    many = [(m, n, k) for m in sizes for n in sizes for k in sizes]
    write_shapes(os.path.join(WORK, "shapes.json"), many)
    ref_out = os.path.join(WORK, "reference.json")
    rc, _, err = run(command(ref_out, os.path.join(WORK, "shapes.json")))
    check(rc == 0, f"uninterrupted run exits 0 (got {rc}: {err.strip()[-300:]})")
    if rc == 0:
        reference = load(ref_out)
        check(reference.get("complete") is True and len(gemm_keys(reference)) == len(many),
              f"uninterrupted run: complete, {len(many)} shapes")
        test_crash_then_resume(reference)
        interrupt_then_resume(reference, signal.SIGINT, "sigint")
        interrupt_then_resume(reference, signal.SIGKILL, "sigkill")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
