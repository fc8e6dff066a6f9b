"""Start-up time of the ``evalcert`` command: median wall time of a few commands.

Each command runs as a fresh subprocess ``runs`` times (after one unmeasured warm-up run that
fills the file cache) and the table gives the median, least and largest wall time. A run of
``python -c pass`` is the floor: the interpreter's own start-up, which no change to evalcert
removes. `measure` and `markdown` let another script put the table in ``benchmarks/RESULTS.md``.

Run: ``python benchmarks/bench_startup.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["COMMANDS", "evalcert", "markdown", "measure"]

# The commands timed, as typed after ``evalcert``: the top-level help, a quick estimate (the
# confusion matrix of ``evalcert demo``) and the help of the command with the most machinery.
COMMANDS = (
    ("--help",),
    ("f1", "--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"),
    ("study", "--help"),
)


def evalcert() -> list[str]:
    """The ``evalcert`` console script of this Python, else ``python -m studies.cli``.

    The script beside the interpreter, not the first on ``PATH``: a version manager's shim
    there (pyenv's) would add its own start-up to every run.
    """
    script = Path(sys.executable).with_name("evalcert")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "studies.cli"]


def _wall_times(argv: list[str], runs: int) -> list[float]:
    """Wall time of ``runs`` runs of ``argv`` after a warm-up run; each must exit 0."""
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times[1:]


def measure(runs: int = 10) -> list[dict[str, object]]:
    """Time every command of `COMMANDS`, and the bare interpreter, ``runs`` times each.

    Parameters
    ----------
    runs : int
        Measured runs of each command (one more, the warm-up, is not counted).

    Returns
    -------
    list of dict
        One row per command: ``command`` (as typed), ``runs``, and the ``median``, ``min``
        and ``max`` wall time in seconds; the last row is ``python -c pass``.
    """
    if runs < 1:
        raise ValueError(f"`runs` must be at least 1; got {runs}")
    cases = [(["evalcert", *words], [*evalcert(), *words]) for words in COMMANDS]
    cases.append((["python", "-c", "pass"], [sys.executable, "-c", "pass"]))
    rows: list[dict[str, object]] = []
    for shown, argv in cases:
        times = _wall_times(argv, runs)
        rows.append({"command": " ".join(shown), "runs": runs,
                     "median": statistics.median(times), "min": min(times), "max": max(times)})
    return rows


def markdown(rows: list[dict[str, object]]) -> str:
    """The rows of `measure` as a Markdown table (times in seconds)."""
    lines = ["| command | runs | median (s) | min (s) | max (s) |",
             "|---|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| `{row['command']}` | {row['runs']} | {row['median']:.3f} "
                     f"| {row['min']:.3f} | {row['max']:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="measured runs of each command")
    args = parser.parse_args()
    print(f"# evalcert start-up, median of {args.runs} runs; python "
          f"{platform.python_version()} on {platform.platform()}")
    print(markdown(measure(args.runs)))


if __name__ == "__main__":
    main()
