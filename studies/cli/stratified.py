"""``evalcert stratified``: a set's share of relevant documents and its TREC-5 utility.

The input is a CSV file with one row per stratum and the header
``stratum,size,sampled,positives`` (any column order): the stratum's name, its number of
documents ``N_h``, how many were judged ``n_h`` and how many of those were relevant ``a_h``.
The command prints the stratified estimate of the proportion relevant ``p`` (Lewis 1996,
eq. 7, 34) with confidence intervals by every method of :mod:`estimators.sampling` (or those
chosen with ``--method``); given ``--gain`` and ``--loss``, also the utility
``u = gain A + loss B`` with its MSE (eq. 25, 35) and its intervals. Without them the utility
is left out (null in JSON).

Errors in the file name the line, the stratum and the field, on one line (exit status 2).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from typing import TYPE_CHECKING, Any

from studies.cli.args import UsageError, amount, file_name, unit_interval
from studies.cli.counts import finite, shown
from studies.cli.names import STRATIFIED_METHODS

if TYPE_CHECKING:
    from estimators.sampling import StratifiedEstimate

COLUMNS = ("stratum", "size", "sampled", "positives")
_COUNT = re.compile(r"[0-9]+")  # ASCII digits only: int() would also take "+3" or "٣"


def add_command(commands: Any) -> None:
    """Add the ``stratified`` subcommand."""
    cmd = commands.add_parser(
        "stratified",
        help="stratified estimate of a set's share of relevant documents and its utility",
        description="Stratified estimate of p and of the linear utility u = gain*A + loss*B "
                    "from a CSV with one row per stratum: stratum,size,sampled,positives "
                    "(Lewis 1996, The TREC-5 Filtering Track, sections 5-8).",
    )
    cmd.add_argument("file", metavar="FILE.csv", type=file_name,
                     help="CSV with header stratum,size,sampled,positives")
    cmd.add_argument("--gain", type=amount, default=None,
                     help="utility of a relevant document in the set (u_a, e.g. 1); with "
                          "--loss, the utility is reported too")
    cmd.add_argument("--loss", type=amount, default=None,
                     help="utility of a nonrelevant document in the set (u_b, e.g. -1); "
                          "with --gain, the utility is reported too")
    cmd.add_argument("--confidence-level", type=unit_interval, default=0.95,
                     help="confidence level of the intervals")
    cmd.add_argument("--method", action="append", choices=STRATIFIED_METHODS,
                     help="interval method; repeat for several (default: all of "
                          f"{', '.join(STRATIFIED_METHODS)})")
    cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    cmd.set_defaults(handler=_stratified)


def _header(row: list[str], path: str) -> dict[str, int]:
    """Column positions by name; every column of ``COLUMNS`` exactly once, nothing else."""
    names = [name.strip() for name in row]
    for index, name in enumerate(names):
        if name not in COLUMNS:
            raise UsageError(f"{path}, line 1: unknown column {name!r}; the header must be "
                             f"{','.join(COLUMNS)}")
        if names.index(name) != index:
            raise UsageError(f"{path}, line 1: column {name!r} appears twice")
    for name in COLUMNS:
        if name not in names:
            raise UsageError(f"{path}, line 1: missing column {name!r}; the header must be "
                             f"{','.join(COLUMNS)}")
    return {name: names.index(name) for name in COLUMNS}


def _count(text: str, field: str, where: str) -> int:
    value = text.strip()
    if not _COUNT.fullmatch(value):
        raise UsageError(f"{where}: `{field}` must be a non-negative integer; got {text!r}")
    return int(value)


def read_strata(path: str) -> StratifiedEstimate:
    """Read and validate the strata CSV; every error names the file, line, stratum and field."""
    from estimators.sampling import StratifiedEstimate  # deferred: see studies.cli

    rows: list[tuple[int, list[str]]] = []
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle, strict=True)
            rows.extend((reader.line_num, row) for row in reader if any(f.strip() for f in row))
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except csv.Error as error:
        raise UsageError(f"{path}: malformed CSV: {error}") from None
    if not rows:
        raise UsageError(f"{path}: empty file; the header must be {','.join(COLUMNS)}")
    column = _header(rows[0][1], path)
    if len(rows) == 1:
        raise UsageError(f"{path}: no strata after the header")
    labels: list[str] = []
    counts: dict[str, list[int]] = {field: [] for field in COLUMNS[1:]}
    first_seen: dict[str, int] = {}
    for line, row in rows[1:]:
        if len(row) != len(column):
            raise UsageError(f"{path}, line {line}: expected {len(column)} fields "
                             f"({','.join(COLUMNS)}); got {len(row)}")
        name = row[column["stratum"]].strip()
        if not name:
            raise UsageError(f"{path}, line {line}: `stratum` must not be empty")
        if name in first_seen:
            raise UsageError(f"{path}, line {line}: stratum {name!r} repeats line "
                             f"{first_seen[name]}")
        first_seen[name] = line
        labels.append(name)
        where = f"{path}, line {line} (stratum {name!r})"
        for field in COLUMNS[1:]:
            counts[field].append(_count(row[column[field]], field, where))
    try:
        return StratifiedEstimate(counts["size"], counts["sampled"], counts["positives"],
                                  labels=labels)
    except ValueError as error:  # cross-field checks; the message names the stratum
        raise ValueError(f"{path}: {error}") from None


def stratified_summary(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the command reports, as plain data (shared by the table and JSON outputs)."""
    if (args.gain is None) != (args.loss is None):
        given, absent = ("--gain", "--loss") if args.loss is None else ("--loss", "--gain")
        raise UsageError(f"{given} needs {absent}: the utility takes both")
    if args.gain is not None and not args.gain > args.loss:
        raise UsageError(f"--gain must be greater than --loss; got --gain {args.gain:g} "
                         f"--loss {args.loss:g}")
    estimate = read_strata(args.file)
    utility = None if args.gain is None else estimate.utility(u_a=args.gain, u_b=args.loss)
    level = args.confidence_level
    intervals = {}
    for method in dict.fromkeys(args.method or STRATIFIED_METHODS):  # ordered, no repeats
        p_low, p_high = estimate.confidence_interval(level, method=method)
        intervals[method] = {"proportion": {"low": finite(p_low), "high": finite(p_high)},
                             "utility": None}
        if utility is not None:
            u_low, u_high = utility.confidence_interval(level, method=method)
            intervals[method]["utility"] = {"low": finite(u_low), "high": finite(u_high)}
    return {
        "file": args.file,
        "confidence_level": level,
        "u_a": args.gain,
        "u_b": args.loss,
        "size": estimate.size,
        "sample_size": estimate.sample_size,
        "strata": [
            {"stratum": label, "size": int(size), "sampled": int(sampled),
             "positives": int(positives), "estimate": finite(float(p))}
            for label, size, sampled, positives, p in zip(
                estimate.labels, estimate.sizes, estimate.sampled, estimate.positives,
                estimate.stratum_estimates, strict=True)
        ],
        "proportion": {"estimate": finite(estimate.estimate),
                       "variance": finite(estimate.variance),
                       "standard_error": finite(estimate.standard_error)},
        "utility": None if utility is None else {
            "estimate": finite(utility.estimate), "mse": finite(utility.mse),
            "standard_error": finite(utility.standard_error)},
        "intervals": intervals,
        "fully_sampled_strata": list(estimate.fully_sampled_strata),
        "boundary_strata": list(estimate.boundary_strata),
        "unestimable_strata": list(estimate.unestimable_strata),
    }


# Why a stratum is listed, by summary key (the table prints the reason, then the strata).
_NOTES = {
    "fully_sampled_strata": "judged in full, so known exactly (no sampling error)",
    "boundary_strata": "sample all nonrelevant or all relevant, so eq. 33 gives them variance 0 "
                       "and wald understates the uncertainty (Lewis 1996, section 9.3)",
    "unestimable_strata": "one document judged, so eq. 33 cannot estimate their variance and "
                          "wald and korn-graubard are undefined",
}


def _format_table(summary: dict[str, Any]) -> str:
    p, u = summary["proportion"], summary["utility"]
    utility = ("" if u is None else
               f"; utility u = {summary['u_a']:g} A + ({summary['u_b']:g}) B")
    lines = [
        f"evalcert stratified: {summary['file']}",
        f"{len(summary['strata'])} strata, N = {summary['size']} documents, "
        f"n = {summary['sample_size']} judged{utility}",
        "",
        f"{'stratum':<16}{'size':>10}{'sampled':>10}{'positives':>10}{'p_h':>10}",
    ]
    for row in summary["strata"]:
        lines.append(f"{row['stratum']:<16}{row['size']:>10}{row['sampled']:>10}"
                     f"{row['positives']:>10}{shown(row['estimate'], '.4f'):>10}")
    lines += ["", f"p (share relevant) = {shown(p['estimate'], '.6f')}"
                  f"   SE {shown(p['standard_error'], '.6f')}   (eq. 7, 34)"]
    lines.append("u (utility): --gain and --loss give it" if u is None else
                 f"u (utility)        = {shown(u['estimate'], '.3f')}   MSE "
                 f"{shown(u['mse'], '.1f')}   SE {shown(u['standard_error'], '.3f')}"
                 "   (eq. 25, 35)")
    lines += ["", f"{format(summary['confidence_level'], '.0%') + ' two-sided intervals':<26}"
                  f"{'p low':>12}{'p high':>12}" + ("" if u is None
                                                    else f"{'u low':>14}{'u high':>14}")]
    for method, ci in summary["intervals"].items():
        prop, util = ci["proportion"], ci["utility"]
        line = (f"  {method:<24}{shown(prop['low'], '.6f'):>12}"
                f"{shown(prop['high'], '.6f'):>12}")
        if util is not None:
            line += f"{shown(util['low'], '.3f'):>14}{shown(util['high'], '.3f'):>14}"
        lines.append(line)
    notes = [f"  {text}: {', '.join(summary[key])}"
             for key, text in _NOTES.items() if summary[key]]
    if notes:
        lines += ["", "notes:", *notes]
    return "\n".join(lines)


def _stratified(args: argparse.Namespace) -> int:
    summary = stratified_summary(args)
    print(json.dumps(summary, indent=2, allow_nan=False) if args.json
          else _format_table(summary))
    return 0
