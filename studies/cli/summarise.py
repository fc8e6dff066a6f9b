"""``evalcert summarise``: performance measures, MCSEs and verdicts for anyone's results.

The input is a CSV file of a simulation study's per-replicate results, made anywhere (one row
per replicate, method and design cell); the command runs `studies.engine.summary.summarise`
on it (the arguments as rsimsum names them: the estimate, SE, true value, method and ``by``
columns) and prints each cell and method's main measures with their MCSEs, or the whole tidy
frame as JSON. With ``--claims claims.toml`` it judges the claims (one ``[[claim]]`` table
each, `studies.engine.summary.claims_from_toml`) and prints the verdicts; with ``--out DIR`` it
writes the page, its Markdown twin and the tidy CSV (`studies.report.summary_page`).

Exit status: 0, or 1 when a claim FAILS (as ``evalcert study run``); a bad file, column or
option is one line on stderr and status 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from studies.cli.args import (
    familywise_error,
    file_name,
    finite_number,
    output_directory,
    unit_interval,
)

__all__ = ["add_command"]

# The measures the table shows (the JSON and the CSV have every one).
SHOWN = ("bias", "empirical_se", "model_se", "coverage", "rejection", "relative_precision")


def add_command(commands: Any) -> None:
    """Add the ``summarise`` subcommand."""
    cmd = commands.add_parser(
        "summarise",
        help="performance measures with MCSEs, and claims' verdicts, for a CSV of simulation "
             "results made anywhere",
        description="Performance measures (Morris, White & Crowther 2019, Table 6) with their "
                    "Monte Carlo standard errors for each method and design cell of a CSV of "
                    "per-replicate results, as R's rsimsum::simsum computes them; with "
                    "--claims, each claim's verdict with its false-alarm rate and power.")
    cmd.add_argument("file", metavar="FILE.csv", type=file_name,
                     help="one row per replicate, method and design cell")
    cmd.add_argument("--estimate", required=True, help="column of point estimates")
    cmd.add_argument("--true", required=True, type=_number_or_column,
                     help="the true value: a number, or the column holding it")
    cmd.add_argument("--se", help="column of model-based standard errors")
    cmd.add_argument("--method", help="column naming the method (default: one method)")
    cmd.add_argument("--by", type=_columns, default=(),
                     help="comma-separated columns whose combinations are the design cells")
    cmd.add_argument("--low", help="column of the interval's lower bounds (with --high)")
    cmd.add_argument("--high", help="column of the interval's upper bounds (with --low)")
    cmd.add_argument("--reject", help="column saying whether the test rejected (1/0)")
    cmd.add_argument("--replicate", help="column numbering the replicates (checked for "
                                         "duplicates; pairs methods for relative precision)")
    cmd.add_argument("--level", type=unit_interval, default=0.95,
                     help="confidence level of intervals built as estimate -/+ c se")
    cmd.add_argument("--df", type=_degrees_or_column, default=None,
                     help="degrees of freedom of t-based intervals: a number or a column "
                          "(default: normal)")
    cmd.add_argument("--null", type=finite_number, default=0.0,
                     help="the value a test built from estimate and se rejects")
    cmd.add_argument("--reference", help="method the others' relative precision is "
                                         "measured against")
    cmd.add_argument("--missing", choices=("drop", "error"), default="drop",
                     help="a row with a missing value: left out and counted, or an error")
    cmd.add_argument("--mcse", choices=("robust", "table6"), default="robust",
                     help="MCSE formulas: evalcert's, or Morris et al.'s Table 6 as printed "
                          "(what rsimsum reports)")
    cmd.add_argument("--claims", type=file_name, metavar="CLAIMS.toml",
                     help="claims to judge, one [[claim]] table each")
    cmd.add_argument("--familywise-error", type=familywise_error, default=0.05,
                     help="the claims' false-alarm budget, split over those stating none")
    cmd.add_argument("--out", type=output_directory, metavar="DIR",
                     help="write summary.html, summary.md and summary.csv here")
    cmd.add_argument("--json", action="store_true",
                     help="print the tidy frame and the verdicts as JSON")
    cmd.set_defaults(handler=_summarise)


def _number_or_column(text: str) -> float | str:
    """A finite number, or else a column name (not empty)."""
    try:
        value = float(text)
    except ValueError:
        if not text:
            raise argparse.ArgumentTypeError("must be a number or a column name; got ''") \
                from None
        return text
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number or a column name; got "
                                         f"{text!r}")
    return value


def _degrees_or_column(text: str) -> float | str:
    """Positive degrees of freedom, or else a column name."""
    value = _number_or_column(text)
    if isinstance(value, float) and value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number or a column name; got "
                                         f"{text!r}")
    return value


def _columns(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"must be comma-separated column names; got {text!r}")
    return names


def _summarise(args: argparse.Namespace) -> int:
    import pandas as pd

    from studies.engine.claims import FAILS, tally
    from studies.engine.summary import claims_from_toml, summarise

    path = Path(args.file)
    try:
        data = path.read_bytes()
        frame = pd.read_csv(path)
    except OSError as error:
        raise ValueError(f"`FILE.csv` must be a readable file; got {args.file!r} "
                         f"({error.strerror or error}).") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(f"`FILE.csv` must be a CSV file; got {args.file!r} ({detail}).") \
            from None
    claims = claims_from_toml(args.claims) if args.claims else []
    try:
        summary = summarise(
            frame, estimate=args.estimate, true=args.true, se=args.se, method=args.method,
            by=args.by, low=args.low, high=args.high, reject=args.reject,
            replicate=args.replicate, level=args.level, df=args.df, null=args.null,
            reference=args.reference, missing=args.missing, mcse=args.mcse, claims=claims,
            familywise_error=args.familywise_error)
    except ValueError as error:  # what the file holds: say which file
        raise ValueError(f"{args.file}: {error}") from None
    if args.out is not None:
        from importlib.metadata import version

        from studies.report.summary_page import write_summary

        write_summary(summary, args.out, source=path.name, provenance={
            "input SHA-256": hashlib.sha256(data).hexdigest(),
            "evalcert": version("evalcert"),
            "command": " ".join(args.command_line)})
    verdicts = summary.verdicts
    if args.json:
        rows = json.loads(summary.frame.to_json(orient="records"))
        print(json.dumps({
            "file": args.file, "rows": rows, "unused_columns": list(summary.unused),
            "notes": list(summary.notes),
            "verdicts": [{"claim": v.claim.name, "status": v.status, "reason": v.reason,
                          "detectable": _finite(v.detectable)} for v in verdicts]},
            indent=2))
    else:
        print("\n".join(_lines(summary)))
        if verdicts:
            print(f"claims: {tally(verdicts)}")
            for v in verdicts:
                print(f"  {v.status:<12} {v.claim.name}" + (f": {v.reason}" if v.reason
                                                              else ""))
        if args.out is not None:
            print(f"page: {Path(args.out) / 'summary.html'}")
    return 1 if any(v.status == FAILS for v in verdicts) else 0


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _lines(summary: Any) -> list[str]:
    """The main measures per cell and method as "estimate (MCSE)", one line each."""
    frame = summary.frame
    measures = [m for m in SHOWN if m in set(frame["measure"])]
    keys = [*summary.by, "method"]
    shown = frame[frame["measure"].isin(measures)]
    lines = []
    header = [*keys, "nsim", "missing", *measures]
    table = [header]
    for key, group in shown.groupby(keys, sort=False, dropna=False):
        values = dict(zip(group["measure"], zip(group["value"], group["mcse"], strict=True),
                          strict=True))
        first = group.iloc[0]
        cells = [str(k) for k in (key if isinstance(key, tuple) else (key,))]
        cells += [str(first["n_used"]), str(first["n_missing"])]
        cells += [_pair(*values[m]) if m in values else "" for m in measures]
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
              for row in table]
    lines += [f"note: {note}" for note in summary.notes]
    if summary.unused:
        lines.append(f"columns not used: {', '.join(map(str, summary.unused))} (a column that "
                     "tells design cells apart belongs in --by)")
    return lines


def _pair(value: float, mcse: float) -> str:
    if value != value:
        return "undefined"
    if mcse == mcse and abs(mcse) < 1e-12 * max(1.0, abs(value)):
        mcse = 0.0  # rounding noise on a constant, not a Monte Carlo error
    return f"{value:.4g} ({mcse:.2g})" if mcse == mcse else f"{value:.4g}"
