"""CPU time of drawing every figure of a stored run, as the report draws them.

Reads a run directory (`studies.engine.reading.read_run`), takes the discovered studies it
holds (`studies.suite.stored_studies`) with their summary rows, and draws each
study's figures with `studies.report.pages.study_figure` (the SVG text a report inlines),
``repeat`` times each after one unmeasured figure that imports and warms up matplotlib. The
table gives each figure's least CPU seconds over the repeats (the least is the least disturbed
by other work on the machine) and the total of those, and flags a figure whose SVG differs
between repeats (the figures must be the same bytes each time).

Run: ``python benchmarks/bench_figures.py RUN_DIR [--repeat N] [--study NAME ...]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["measure"]


def measure(run_dir: str | Path, *, repeat: int = 1,
            studies: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Draw every figure of a run ``repeat`` times and time each (CPU seconds).

    Parameters
    ----------
    run_dir : path
        A run directory (``evalcert study run ... --out DIR``).
    repeat : int
        Draws of each figure (at least 1).
    studies : sequence of str
        Only these studies (default: every discovered study the run holds).

    Returns
    -------
    list of dict
        One row per figure: ``figure`` (``NAME-INDEX``), ``seconds`` (least CPU time over the
        repeats), ``bytes`` (SVG size) and ``same`` (whether every repeat gave the same SVG).
    """
    from studies.engine.reading import read_run
    from studies.report.pages import study_figure
    from studies.report.tables import summaries
    from studies.suite import stored_studies

    stored = read_run(run_dir)
    chosen, _ = stored_studies(stored)
    jobs = []
    for study in chosen:
        if studies and study.name not in studies:
            continue
        result = stored.results[study.name]
        rows = summaries({study.name: result}, [study])[study.name]
        jobs.extend((study, result, index, rows) for index in range(1, len(study.figures) + 1))
    if jobs:  # import and warm up matplotlib outside the timings
        study, result, index, rows = jobs[0]
        study_figure(study, result, index, run_dir=stored.directory, summary=rows)
    table = []
    for study, result, index, rows in jobs:
        times, drawn = [], set()
        for _ in range(max(1, repeat)):
            start = time.process_time()
            text = study_figure(study, result, index, run_dir=stored.directory, summary=rows)
            times.append(time.process_time() - start)
            drawn.add(text)
        table.append({"figure": f"{study.name}-{index}", "seconds": min(times),
                      "bytes": len(text), "same": len(drawn) == 1})
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a run directory (evalcert study run ... --out DIR)")
    parser.add_argument("--repeat", type=int, default=1, help="draws of each figure")
    parser.add_argument("--study", action="append", default=[], help="only this study")
    args = parser.parse_args(argv)
    table = measure(args.run_dir, repeat=args.repeat, studies=args.study)
    print("| figure | CPU s | SVG bytes | same bytes each draw |")
    print("| --- | ---: | ---: | --- |")
    for row in table:
        print(f"| {row['figure']} | {row['seconds']:.3f} | {row['bytes']} | "
              f"{'yes' if row['same'] else 'NO'} |")
    total = sum(row["seconds"] for row in table)
    print(f"\n{len(table)} figures, {total:.2f} CPU s in all")


if __name__ == "__main__":
    main()
