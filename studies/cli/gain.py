"""``evalcert gain``: gain, cumulative gain and lift of a model's ranking, and what a budget buys.

When a model pre-filters candidates for human annotation, the annotator works down the list
from the highest score, and the budget usually runs out before the list does. What matters is
then not the model's F-score but how early in its ranking the positives come. The command
ranks the items of ``SCORES.csv`` by descending score, cuts the ranking into quantile bins
(deciles by default; one bin per item in a file of fewer than ten items, with a note) and
prints, for each bin, how many positives it holds, its gain (its share
of all positives), the cumulative gain and the lift. Given a cost per item it also answers the
two money questions of the paper: what a budget buys (``--budget``) and how much of the list,
and at what cost, must be annotated to find a share of the positives (``--share``).

The input is a CSV file whose header holds at least the columns ``score`` (a finite number;
higher ranks earlier) and ``label`` (``0``/``1`` or ``true``/``false``; ``1`` marks a
positive), in any order; other columns are ignored. Errors in the file name the file, line and
column, on one line (exit status 2). ``--json`` prints the same report as one JSON object, with
``null`` where a quantity is undefined.

Notes
-----
Items with equal scores have no order of their own. Every number reported is its expected
value when each group of tied items is put in a random order, so a tie straddling a bin edge
shares its positives between the two bins and positives may be fractional.

By default budgets buy single items and shares count single items. With ``--whole-bins`` they
buy whole bins at their nominal cost, ``N / k`` items each, as the paper does with deciles.

References
----------
Klubička, F., Salton, G. D. and Kelleher, J. D. (2018). Is it worth it? Budget-related
evaluation metrics for model selection. Section 3 (gain and cumulative gain) and section 4
(the three budget situations and the cost model of section 4.1).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from typing import TYPE_CHECKING, Any

from studies.cli.args import (
    UsageError,
    file_name,
    non_negative_amount,
    positive_amount,
    positive_count,
    positive_fraction,
)
from studies.cli.counts import finite, shown

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from estimators.gain import GainTable

__all__ = ["add_command", "gain_summary", "read_scores"]

COLUMNS = ("score", "label")
DEFAULT_SHARES = (0.5, 0.8, 0.9, 1.0)
DEFAULT_BINS = 10


def add_command(commands: Any) -> None:
    """Add the ``gain`` subcommand."""
    cmd = commands.add_parser(
        "gain",
        help="gain, cumulative gain and lift of a ranking, and what an annotation budget buys",
        description="Rank the items of a CSV file by descending score, cut the ranking into "
                    "quantile bins and report each bin's positives, gain, cumulative gain and "
                    "lift; optionally what a budget buys and what it costs to find a share of "
                    "the positives (Klubička et al. 2018, sections 3-4). Tied scores count in "
                    "expectation over a random order of the tied items.",
    )
    cmd.add_argument("file", metavar="SCORES.csv", type=file_name,
                     help="CSV with a header holding the columns score and label (0/1 or "
                          "true/false); other columns are ignored")
    cmd.add_argument("--bins", type=positive_count, default=None, metavar="K",
                     help="number of quantile bins of the ranking, at most the number of items "
                          f"(default: {DEFAULT_BINS}, deciles, or one bin per item in a file of "
                          f"fewer than {DEFAULT_BINS} items)")
    cmd.add_argument("--cost-per-item", type=positive_amount, default=None, metavar="C",
                     help="cost of annotating one item; when given, costs are reported too")
    cmd.add_argument("--budget", type=non_negative_amount, action="append", metavar="B",
                     help="money to spend from the top of the ranking: report the items, "
                          "share of the list and expected positives it buys; repeat for "
                          "several (needs --cost-per-item)")
    cmd.add_argument("--share", type=positive_fraction, action="append", metavar="S",
                     help="share of the positives to find, in (0, 1]: report how much of the "
                          "list (and, with --cost-per-item, what cost) it takes; repeat for "
                          "several (default: "
                          f"{', '.join(format(s, 'g') for s in DEFAULT_SHARES)})")
    cmd.add_argument("--whole-bins", action="store_true",
                     help="answer --budget and --share buying whole bins at their nominal "
                          "cost (N / bins items each), as the paper does with deciles")
    cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    cmd.set_defaults(handler=_gain)


def _records(path: str) -> list[tuple[int, list[str]]]:
    """Every CSV record of the file (blank lines skipped), with the line it starts on."""
    records = []
    end = 0
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            for row in reader:
                start, end = end + 1, reader.line_num
                if row:
                    records.append((start, row))
    except FileNotFoundError:
        raise UsageError(f"cannot read {path}: No such file or directory") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    except csv.Error as error:
        raise UsageError(f"{path}, line {end + 1}: not a valid CSV file: {error}") from None
    return records


def _label(text: str) -> int | None:
    """0 or 1 from ``0``/``1`` (``0.0``, ...) or ``true``/``false``; None otherwise."""
    word = text.strip().lower()
    if word in ("true", "false"):
        return int(word == "true")
    try:
        value = float(word)
    except ValueError:
        return None
    return int(value) if value in (0.0, 1.0) else None


def read_scores(path: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Scores and 0/1 labels of the scores CSV; every error names the file, line and column.

    Read with the standard csv module, which knows the line each record starts on (a quoted
    field may span lines). A record shorter than the header has its last fields empty.
    """
    import numpy as np  # deferred: see studies.cli

    records = _records(path)
    if not records:
        raise UsageError(f"{path}: empty file; the header must name the columns "
                         f"{' and '.join(COLUMNS)}")
    header = [name.strip() for name in records[0][1]]
    column = {}
    for name in COLUMNS:
        if name not in header:
            raise UsageError(f"{path}, line 1: missing column {name!r}; the header must hold "
                             f"the columns {' and '.join(COLUMNS)} (found "
                             f"{', '.join(repr(h) for h in header)})")
        if header.count(name) > 1:
            raise UsageError(f"{path}, line 1: column {name!r} appears twice")
        column[name] = header.index(name)
    if len(records) == 1:
        raise UsageError(f"{path}: no items after the header")
    scores, labels = [], []
    for line, fields in records[1:]:
        if len(fields) > len(header):
            raise UsageError(f"{path}, line {line}: expected {len(header)} fields as in the "
                             f"header; got {len(fields)}")
        row = fields + [""] * (len(header) - len(fields))
        text = row[column["score"]]
        try:
            score = float(text.strip())
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise UsageError(f"{path}, line {line}, column 'score': the score must be a finite "
                             f"number; got {text!r}")
        label = _label(row[column["label"]])
        if label is None:
            raise UsageError(f"{path}, line {line}, column 'label': the label must be 0 or 1 "
                             f"(or true/false); got {row[column['label']]!r}")
        scores.append(score)
        labels.append(label)
    return np.array(scores, dtype=np.float64), np.array(labels, dtype=np.int64)


def _bin_rows(table: GainTable) -> list[dict[str, Any]]:
    """One dict per bin, with the estimator's values as plain floats (nan as None)."""
    columns = zip(table.bin_upper_fraction, table.items, table.positives,
                  table.cumulative_positives, table.gain, table.cumulative_gain, table.lift,
                  table.cumulative_lift, strict=True)
    return [
        {"bin": i + 1, "top_fraction": float(top), "items": int(items),
         "positives": float(pos), "cumulative_positives": float(cum_pos),
         "gain": finite(float(gain)), "cumulative_gain": finite(float(cum_gain)),
         "lift": finite(float(lift)), "cumulative_lift": finite(float(cum_lift))}
        for i, (top, items, pos, cum_pos, gain, cum_gain, lift, cum_lift) in enumerate(columns)
    ]


def gain_summary(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the command reports, as plain data (shared by the table and JSON outputs)."""
    # deferred: see studies.cli
    import numpy as np

    from estimators.gain import gain_table

    cost = args.cost_per_item
    if args.budget and cost is None:
        raise UsageError("--budget needs --cost-per-item (the cost of annotating one item)")
    scores, labels = read_scores(args.file)
    n_items = int(scores.shape[0])
    notes = []
    bins = args.bins
    if bins is None:
        bins = min(DEFAULT_BINS, n_items)
        if bins < DEFAULT_BINS:
            notes.append(f"the file holds {n_items} items, fewer than the default "
                         f"{DEFAULT_BINS} bins: one bin per item (--bins sets the number)")
    elif bins > n_items:
        raise UsageError(f"--bins must be at most the number of items in {args.file} "
                         f"({n_items}); got {bins}")
    table = gain_table(scores, labels, bins=bins)
    whole = bool(args.whole_bins)
    sizes = np.diff(table.group_ends)
    budgets = []
    for budget in dict.fromkeys(args.budget or ()):  # ordered, no repeats
        bought = table.budget_yield(budget, cost_per_item=cost, whole_bins=whole)
        budgets.append({"budget": budget, "items": bought.items, "fraction": bought.fraction,
                        "cost": bought.cost, "positives": bought.positives,
                        "gain": finite(bought.gain)})
    shares = []
    for share in dict.fromkeys(args.share or DEFAULT_SHARES):
        fraction = table.fraction_to_reach(share, whole_bins=whole)
        reach = (None if cost is None else
                 finite(table.cost_to_reach(share, cost_per_item=cost, whole_bins=whole)))
        shares.append({"share": share, "fraction": finite(fraction),
                       "items": finite(_items(fraction, n_items)), "cost": reach})
    return {
        "file": args.file,
        "n_items": table.n_items,
        "n_positives": table.n_positives,
        "bins": table.bins,
        "whole_bins": whole,
        "cost_per_item": cost,
        "cost_per_bin": None if cost is None else table.cost_per_bin(cost_per_item=cost),
        "tied_items": int(sizes[sizes > 1].sum()),
        "table": _bin_rows(table),
        "budgets": budgets,
        "shares": shares,
        "notes": notes,
    }


def _format_table(summary: dict[str, Any]) -> str:
    """The text report: header, per-bin table, notes, then the budget and share answers."""
    n, k = summary["n_items"], summary["bins"]
    cost, whole = summary["cost_per_item"], summary["whole_bins"]
    lines = [
        f"evalcert gain: {summary['file']}",
        f"N = {n} items, P = {summary['n_positives']} positives, {k} bins "
        f"(ranked by descending score)",
        "",
        f"{'bin':>4}{'top frac':>10}{'items':>8}{'positives':>11}{'gain':>10}{'cum gain':>10}"
        f"{'lift':>10}{'cum lift':>10}",
    ]
    for row in summary["table"]:
        lines.append(f"{row['bin']:>4}{row['top_fraction']:>10.4f}{row['items']:>8}"
                     f"{_count(row['positives']):>11}{shown(row['gain']):>10}"
                     f"{shown(row['cumulative_gain']):>10}{shown(row['lift']):>10}"
                     f"{shown(row['cumulative_lift']):>10}")
    lines.append("")
    lines += [f"note: {note}." for note in summary["notes"]]
    if summary["n_positives"] == 0:
        lines.append("note: the file holds no positives, so gain and lift are undefined "
                     "and no share of the positives can be reached.")
    lines.append(f"ties: {summary['tied_items']} of {n} items share a score; tied items count "
                 "in expectation over a random order.")
    price = "" if cost is None else f" at {cost:g} per item"
    if whole:
        per_bin = ("" if cost is None
                   else f" at {summary['cost_per_bin']:g} each ({cost:g} per item)")
        lines.append(f"budgets and shares below buy whole bins of N / bins = {n / k:g} items"
                     f"{per_bin}.")
    else:
        lines.append(f"budgets and shares below buy single items{price}.")
    if summary["budgets"]:
        lines += ["", "what a budget buys:",
                  f"{'budget':>14}{'items':>10}{'fraction':>10}{'cost':>14}{'positives':>14}"
                  f"{'gain':>9}"]
        for row in summary["budgets"]:
            lines.append(f"{row['budget']:>14.4f}{row['items']:>10}{row['fraction']:>10.4f}"
                         f"{row['cost']:>14.4f}{_count(row['positives']):>14}"
                         f"{shown(row['gain']):>9}")
    lines += ["", "what it takes to find a share of the positives:",
              f"{'share':>8}{'fraction':>10}{'items':>14}" + ("" if cost is None
                                                               else f"{'cost':>14}")]
    for row in summary["shares"]:
        line = f"{row['share']:>8.4f}{shown(row['fraction']):>10}{_count(row['items']):>14}"
        if cost is not None:
            line += f"{shown(row['cost']):>14}"
        lines.append(line)
    return "\n".join(lines)


def _items(fraction: float, n_items: int) -> float:
    """``fraction * n_items``, a whole number when within 1e-9 of one: the product's rounding
    error (0.545 * 200 = 109.00000000000001), not a share of tied items."""
    items = fraction * n_items
    near = round(items) if math.isfinite(items) else items
    return float(near) if abs(items - near) <= 1e-9 * max(1.0, abs(items)) else items


def _count(value: float | None) -> str:
    """A count for the table: a whole one as an integer; one shared among tied items in
    expectation with four decimals; ``undefined`` where there is none."""
    if value is not None and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return shown(value)


def _gain(args: argparse.Namespace) -> int:
    """Handler of ``evalcert gain``: print the report; exit status 0."""
    summary = gain_summary(args)
    print(json.dumps(summary, indent=2, allow_nan=False) if args.json
          else _format_table(summary))
    return 0
