"""trainsim: predict distributed deep-learning training on GPU clusters, from Python.

The functions call the simulator the `trainsim` command-line tool runs, with the
GIL released while it simulates, and return what it writes as dicts
(docs/python.md):

    run(scenario)        the result file of `trainsim run SCENARIO --out r.json`
    sweep(spec)          the points of `trainsim sweep SPEC`'s sweep.json, as they finish
    presets()            the GPU and model presets of `trainsim presets`
    collective(cluster)  the table of `trainsim collective --cluster CLUSTER`

A scenario, spec or cluster is a dict (the JSON file's content) or a path.
"""

import json
import os
import warnings

from . import _core
from ._errors import ScenarioError

__all__ = ["run", "sweep", "Sweep", "presets", "collective", "ScenarioError", "CalibrationWarning", "__version__"]
__version__ = _core.__version__


class CalibrationWarning(UserWarning):
    """A calibration profile that does not cover everything (`trainsim run` prints these as warnings)."""


def _source(value, what):
    """A dict, str or os.PathLike as the extension reads it."""
    source = _core.Source()
    if isinstance(value, dict):
        try:
            source.text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as e:
            expected = f"a {what} of JSON values (dict, list, str, finite numbers, bool, None)"
            raise ScenarioError(f"<dict>: expected {expected}, found {e}", "<dict>", "", expected, str(e)) from None
        source.name = "<dict>"
    elif isinstance(value, (str, os.PathLike)):
        source.path = os.fspath(value)
    else:
        raise TypeError(f"{what}: expected a dict or a path (str or os.PathLike), got {type(value).__name__}")
    return source


def _run(scenario, calibration, seed, exact):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise ValueError(f"seed: expected an integer from 0 to 2^63-1, got {seed!r}")
    result, seconds, notes = _core.run(
        _source(scenario, "scenario"), None if calibration is None else os.fspath(calibration), seed, exact)
    for note in notes:
        warnings.warn(note, CalibrationWarning, stacklevel=3)
    return result, seconds


def run(scenario, *, calibration=None, seed=None, exact=False):
    """Simulates a scenario and returns its result as a dict.

    The keys are those of the result file `trainsim run SCENARIO --out r.json`
    writes (docs/results.md), in its order; "timeline" is None (no timeline file
    is written). `calibration` (a path) overrides the scenario's "calibration",
    as `--calibration` does; `seed` replaces `simulation.seed` and `failures.seed`.
    `exact` simulates every micro-batch (`--exact`; the same result).
    Raises ScenarioError for a scenario the reader refuses.
    """
    return _run(scenario, calibration, seed, exact)[0]


class Sweep:
    """The points of a sweep, as `trainsim sweep` computes them (docs/sweep.md).

    Iterating yields each listed point (evaluated or too large for memory) as a
    dict, as in sweep.json's "points", in id order, a batch of points at a time
    on `jobs` threads. Under failures the best points are replayed once every
    point is evaluated, so the first point comes after the whole sweep.
    `summary()` returns sweep.json whole (counts, ranking, Pareto front, points).
    """

    def __init__(self, spec, *, jobs=None, rank_by=None):
        if rank_by not in (None, "time", "cost"):
            raise ValueError(f'rank_by: expected "time" or "cost", got {rank_by!r}')
        if jobs is not None and not 1 <= jobs <= 4096:
            raise ValueError(f"jobs: expected 1 to 4096 threads, got {jobs}")
        self._run = _core.SweepRun(_source(spec, "sweep spec"), jobs or 0, rank_by or "")

    def __len__(self):
        """Candidate points (those past the cheap pruning; some may be rejected later)."""
        return len(self._run)

    def __iter__(self):
        while (batch := self._run.next_batch()) is not None:
            yield from batch

    def summary(self):
        return self._run.summary()


def sweep(spec, *, jobs=None, rank_by=None):
    """A Sweep of `spec` (dict or path): iterate it for the points. See Sweep."""
    return Sweep(spec, jobs=jobs, rank_by=rank_by)


def presets():
    """The built-in presets: {"gpu": [names], "model": [names]}, as `trainsim presets` lists them."""
    return _core.presets()


def collective(cluster, *, op="all_reduce", minbytes="8", maxbytes="8G", stepfactor=2, ngpus=None, algo="auto",
               model="flow"):
    """Prices one collective over sizes, as `trainsim collective --cluster CLUSTER` does.

    `cluster` is a scenario or a cluster object (dict or path). The options are
    the command's: `op`, `minbytes`/`maxbytes` (bytes, or "64K", "128M", "8G"),
    `stepfactor`, `ngpus` (None: every GPU), `algo`, `model` ("flow" or
    "analytic"). Returns {"op", "group", "topology", "network_model", "rows",
    "average_busbw_gb_per_s", "table"}: a row per size with "bytes", "count",
    "time_s", "algbw_gb_per_s", "busbw_gb_per_s" (1e9 B/s, nccl-tests'
    definitions) and "algorithm"; "table" is the text the command prints.
    """
    if ngpus is not None and ngpus < 1:
        raise ValueError(f"ngpus: expected at least 1, got {ngpus}")
    return _core.collective(_source(cluster, "cluster"), op, str(minbytes), str(maxbytes), int(stepfactor),
                            ngpus or 0, algo, model)
