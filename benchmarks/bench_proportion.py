"""Throughput of `proportion_ci` (intervals per second) beside statsmodels, in one run.

For each method: ours vectorized over 10^6 random (x, n) pairs (n uniform on 1..1000), statsmodels'
`proportion_confint` on the same arrays where it has the method, and statsmodels called once per
pair in a Python loop (timed on a subsample and reported as a rate). Ratios are ours / theirs.
For the two beta-quantile methods (Clopper-Pearson, Jeffreys) the floor is the bare
``scipy.special.betaincinv`` calls they need, one for the lower bounds and one for the reflected
upper bounds, on argument arrays built before timing; ``ours / floor`` near 1 means the time is
all in betaincinv. Each repeat times ours, statsmodels and the floor in turn, so a busy spell on
a shared machine slows them alike; the least time of the repeats is kept. `measure` and
`markdown` let another script put the table in ``benchmarks/RESULTS.md``.

With ``--enumeration N ...``, a second table (`enumeration`): an exact enumeration's intervals,
every count ``x = 0..n`` of one ``n`` at the 9 (level, side) pairs of ``coverage_proportion``,
for each method whose upper bound is its reflected lower bound. Its failure counts are its
counts reversed, so the kernel runs once for both ends; beside it the same counts with one
count of another ``n`` appended, which runs it twice (the general path; same bounds).

Run: ``python benchmarks/bench_proportion.py [--pairs N] [--loop-pairs M] [--repeat R]
[--clock {wall,cpu}] [--method NAME ...] [--markdown FILE] [--enumeration N ...]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import scipy
from scipy import special

from estimators import PROPORTION_METHODS, proportion_ci

__all__ = ["STATSMODELS_NAMES", "enumeration", "machine", "markdown", "measure"]

STATSMODELS_NAMES = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti-coull": "agresti_coull",
    "clopper-pearson": "beta",
    "jeffreys": "jeffreys",
}
# Beta(x + a, n - x + b) quantiles: the lower bound at x and, reflected, the upper at n - x.
BETA_SHIFTS = {"clopper-pearson": (0.0, 1.0), "jeffreys": (0.5, 0.5)}
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
TAIL = 0.025  # the default two-sided 95% level of both libraries
N_MAX = 1000
# The methods whose upper bound is the lower bound of the failures, reflected.
REFLECTED = ("wilson-cc", "clopper-pearson", "jeffreys", "mid-p")
# The (level, side) pairs of one coverage_proportion group.
LEVEL_SIDES = tuple((level, side) for level in (0.90, 0.95, 0.99)
                    for side in ("two-sided", "greater", "less"))


def _statsmodels() -> tuple[Callable[..., Any] | None, str]:
    """statsmodels' `proportion_confint` and version, or None and "not installed"."""
    try:
        from statsmodels import __version__
        from statsmodels.stats.proportion import proportion_confint
    except ImportError:
        return None, "not installed"
    return proportion_confint, __version__


def _best_times(calls: dict[str, Callable[[], object]], repeat: int,
                clock: Callable[[], float]) -> dict[str, float]:
    """Least time of each call over ``repeat`` rounds, each round calling every one in turn."""
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeat):
        for name, call in calls.items():
            start = clock()
            call()
            best[name] = min(best[name], clock() - start)
    return best


def _betaincinv_floor(method: str, x: np.ndarray, n: np.ndarray) -> Callable[[], object]:
    """The bare betaincinv calls of a beta-quantile method, arguments built now."""
    a, b = BETA_SHIFTS[method]
    xf = x.astype(np.float64)
    rest = n - xf
    arguments = [(xf + a, rest + b), (rest + a, xf + b)]
    return lambda: [special.betaincinv(p, q, TAIL) for p, q in arguments]


def _per_pair_rate(confint: Callable[..., Any], name: str, x: np.ndarray, n: np.ndarray,
                   clock: Callable[[], float]) -> float:
    """Pairs per second of statsmodels called once per pair, in a Python loop."""
    pairs = list(zip(x.tolist(), n.tolist(), strict=True))
    start = clock()
    for k, m in pairs:
        confint(k, m, method=name)
    return len(pairs) / (clock() - start)


def measure(pairs: int = 1_000_000, loop_pairs: int = 2_000, repeat: int = 3,
            seed: int = 20261121, *, methods: Sequence[str] = PROPORTION_METHODS,
            clock: str = "wall", report: Callable[[dict[str, Any]], object] | None = None,
            ) -> list[dict[str, Any]]:
    """Intervals per second of every method, ours beside statsmodels and the betaincinv floor.

    Parameters
    ----------
    pairs : int
        Random (x, n) pairs of the vectorized calls, n uniform on 1..1000, x uniform on 0..n.
    loop_pairs : int
        The first pairs, timed once in a per-pair Python loop over statsmodels.
    repeat : int
        Rounds of the vectorized calls; the least time of each is kept.
    seed : int
        Seed of the pairs.
    methods : sequence of str
        `proportion_ci` methods, all by default.
    clock : {"wall", "cpu"}
        ``time.perf_counter`` or ``time.process_time`` (this process's CPU time: steadier on a
        shared machine; every call timed is single-threaded).
    report : callable, optional
        Called with each row as soon as it is measured.

    Returns
    -------
    list of dict
        One row per method: ``method``, ``pairs``, ``repeat``, ``clock``; rates per second
        ``ours``, ``statsmodels``, ``statsmodels_loop`` and ``floor``; ratios of ours to them,
        ``vs_statsmodels``, ``vs_loop`` and ``vs_floor``. None where there is no peer (methods
        statsmodels lacks, or it is not installed) or no floor (all but the beta quantiles).
    """
    if pairs < 1 or loop_pairs < 1 or repeat < 1:
        raise ValueError(f"`pairs`, `loop_pairs` and `repeat` must be at least 1; got "
                         f"{pairs}, {loop_pairs} and {repeat}.")
    if clock not in CLOCKS:
        raise ValueError(f"`clock` must be one of {', '.join(map(repr, CLOCKS))}; got {clock!r}.")
    timer = CLOCKS[clock]
    rng = np.random.default_rng(seed)
    n = rng.integers(1, N_MAX + 1, size=pairs)
    x = rng.integers(0, n + 1)
    confint, _ = _statsmodels()
    rows = []
    for method in methods:
        calls: dict[str, Callable[[], object]] = {
            "ours": partial(proportion_ci, x, n, method=method)}
        name = STATSMODELS_NAMES.get(method) if confint is not None else None
        if confint is not None and name is not None:
            calls["statsmodels"] = partial(confint, x, n, method=name)
        if method in BETA_SHIFTS:
            calls["floor"] = _betaincinv_floor(method, x, n)
        rates: dict[str, float | None] = {
            key: pairs / seconds for key, seconds in _best_times(calls, repeat, timer).items()}
        rates["statsmodels_loop"] = (
            None if confint is None or name is None
            else _per_pair_rate(confint, name, x[:loop_pairs], n[:loop_pairs], timer))
        ours = rates["ours"]
        row: dict[str, Any] = {"method": method, "pairs": pairs, "repeat": repeat, "clock": clock}
        for key in ("ours", "statsmodels", "statsmodels_loop", "floor"):
            row[key] = rates.get(key)
        for key, peer in (("vs_statsmodels", "statsmodels"), ("vs_loop", "statsmodels_loop"),
                          ("vs_floor", "floor")):
            rate = rates.get(peer)
            row[key] = None if rate is None or ours is None else ours / rate
        rows.append(row)
        if report is not None:
            report(row)
    return rows


def _all_pairs(method: str, x: np.ndarray, n: Any) -> Callable[[], object]:
    """The intervals of ``method`` at every (level, side) of `LEVEL_SIDES`."""
    return lambda: [proportion_ci(x, n, method=method, confidence_level=level, alternative=side)
                    for level, side in LEVEL_SIDES]


def enumeration(sizes: Sequence[int], repeat: int = 5, *, methods: Sequence[str] = REFLECTED,
                clock: str = "cpu", report: Callable[[dict[str, Any]], object] | None = None,
                ) -> list[dict[str, Any]]:
    """Seconds of an exact enumeration's intervals: one kernel run for both ends, or two.

    Parameters
    ----------
    sizes : sequence of int
        The ``n`` of each enumeration ``x = 0..n``.
    repeat : int
        Rounds; each times both paths in turn, and the least time of each is kept.
    methods : sequence of str
        Methods of `REFLECTED`.
    clock : {"wall", "cpu"}
        As in `measure`.
    report : callable, optional
        Called with each row as soon as it is measured.

    Returns
    -------
    list of dict
        One row per (method, n): ``method``, ``n``; ``mirrored`` and ``general`` (seconds of
        the 9 (level, side) intervals, counts ``0..n``; the same with one count of ``n + 1``
        appended) and ``ratio``, ``general / mirrored``.
    """
    if repeat < 1 or any(n < 1 for n in sizes) or not set(methods) <= set(REFLECTED):
        raise ValueError(f"`repeat` and every size must be at least 1 and `methods` among "
                         f"{REFLECTED}; got {repeat}, {list(sizes)} and {list(methods)}.")
    if clock not in CLOCKS:
        raise ValueError(f"`clock` must be one of {', '.join(map(repr, CLOCKS))}; got {clock!r}.")
    timer = CLOCKS[clock]
    rows = []
    for method in methods:
        for n in sizes:
            x = np.arange(n + 1)
            seconds = _best_times({
                "mirrored": _all_pairs(method, x, n),
                "general": _all_pairs(method, np.append(x, 0), np.append(np.full(n + 1, n),
                                                                         n + 1))},
                repeat, timer)
            row = {"method": method, "n": n, **seconds,
                   "ratio": seconds["general"] / seconds["mirrored"]}
            rows.append(row)
            if report is not None:
                report(row)
    return rows


def machine() -> str:
    """The processor, CPU count and library versions, in one line."""
    _, sm_version = _statsmodels()
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
            f"python {platform.python_version()}, numpy {np.__version__}, "
            f"scipy {scipy.__version__}, statsmodels {sm_version}")


# (header, row key, format) of each column, shared by the console and the Markdown table.
COLUMNS = (
    ("ours /s", "ours", ".2e"),
    ("sm vec /s", "statsmodels", ".2e"),
    ("sm loop /s", "statsmodels_loop", ".2e"),
    ("vs sm vec", "vs_statsmodels", ".2f"),
    ("vs sm loop", "vs_loop", ".0f"),
    ("floor /s", "floor", ".2e"),
    ("vs floor", "vs_floor", ".3f"),
)


def _cell(row: dict[str, Any], key: str, spec: str) -> str:
    return "-" if row[key] is None else format(row[key], spec)


def _console_row(row: dict[str, Any]) -> str:
    return f"{row['method']:<16}" + "".join(
        f"{_cell(row, key, spec):>12}" for _, key, spec in COLUMNS)


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows of `measure` as a Markdown table, after a line on the setup and machine."""
    if not rows:
        raise ValueError("`rows` must hold at least one row of `measure`; got none.")
    first = rows[0]
    lines = [
        f"`proportion_ci` throughput (intervals per second) on {first['pairs']:,} (x, n) pairs, "
        f"n uniform on 1..{N_MAX}; best of {first['repeat']} ({first['clock']} clock); "
        f"ratios are ours / theirs. Machine: {machine()}.",
        "",
        "| method | " + " | ".join(header for header, _, _ in COLUMNS) + " |",
        "|---|" + "---:|" * len(COLUMNS),
    ]
    for row in rows:
        lines.append(f"| `{row['method']}` | "
                     + " | ".join(_cell(row, key, spec) for _, key, spec in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--loop-pairs", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    parser.add_argument("--method", action="append", choices=PROPORTION_METHODS,
                        help="a method to time (repeatable); all by default")
    parser.add_argument("--markdown", type=Path, metavar="FILE",
                        help="also write the table as Markdown to FILE")
    parser.add_argument("--enumeration", type=int, nargs="+", metavar="N",
                        help="instead: time the intervals of the enumerations x = 0..N")
    args = parser.parse_args()
    if args.enumeration:
        print(f"# the 9 (level, side) intervals of x = 0..n, best of {args.repeat} "
              f"({args.clock} clock); {machine()}")
        print(f"{'method':<16}{'n':>6}{'mirrored s':>12}{'general s':>12}{'ratio':>8}")
        enumeration(args.enumeration, args.repeat, clock=args.clock, report=lambda row: print(
            f"{row['method']:<16}{row['n']:>6}{row['mirrored']:>12.5f}{row['general']:>12.5f}"
            f"{row['ratio']:>8.2f}", flush=True))
        return

    print(f"# proportion_ci throughput, {args.pairs:,} pairs, n ~ U{{1..{N_MAX}}}, best of "
          f"{args.repeat} ({args.clock} clock); {machine()}")
    print(f"{'method':<16}" + "".join(f"{header:>12}" for header, _, _ in COLUMNS))
    rows = measure(args.pairs, args.loop_pairs, args.repeat, args.seed,
                   methods=args.method or PROPORTION_METHODS, clock=args.clock,
                   report=lambda row: print(_console_row(row), flush=True))
    if args.markdown is not None:
        args.markdown.write_text(markdown(rows))


if __name__ == "__main__":
    main()
