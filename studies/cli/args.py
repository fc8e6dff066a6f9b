"""What every command shares: the one-line usage error, the parser class and argument types.

Each command module imports from here, never from the entry point (`studies.cli.main`), so the
command line has no import circle.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

__all__ = [
    "EXIT_USAGE",
    "MAX_AMOUNT",
    "MAX_DRAWS",
    "MAX_WORKERS",
    "MIN_FAMILYWISE_ERROR",
    "HelpFormatter",
    "Parser",
    "UsageError",
    "amount",
    "closed_unit_interval",
    "count",
    "draws",
    "familywise_error",
    "file_name",
    "finite_number",
    "non_negative_amount",
    "non_negative_number",
    "output_directory",
    "positive_amount",
    "positive_count",
    "positive_fraction",
    "positive_number",
    "unit_interval",
    "workers",
]

EXIT_USAGE = 2
# Counts beyond int64 would wrap to negative values inside numpy.
_MAX_COUNT = 2**63 - 1
# Monte Carlo draws per interval: 10**7 bootstrap draws of F1 take seconds and half a gigabyte;
# ten times more takes minutes and gigabytes for no visible gain in precision.
MAX_DRAWS = 10**7
# Local worker processes: beyond this, a typo (the cluster's size is --scheduler's business).
MAX_WORKERS = 1024
# Money and utilities: no real value comes near, and squares (an MSE) or a cost times a count
# of items stay finite well within it, where 1e200 would overflow.
MAX_AMOUNT = 1e100
# A false-alarm rate below this makes a claim's allowance (a normal quantile) overflow.
MIN_FAMILYWISE_ERROR = 1e-300


class UsageError(Exception):
    """A problem with the command line itself (reported on one line, exit status 2)."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows each option's default; required options and flags show none."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        default = action.default
        if (action.required or default is None or default is False
                or default is argparse.SUPPRESS or default == []):
            return action.help
        return super()._get_help_string(action)


# A negative number in any notation Python reads (-3, -0.5, -.5, -1e3, -2.5E-4, -inf): a
# value, not an option (argparse alone knows only -3 and -0.5, so --loss -1e3 failed).
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$",
                              re.IGNORECASE)


class _Checked(UsageError):
    """A usage error whose words the parser that raised it searched for unrecognized options
    (the parsers around it, a subcommand's parents, know fewer options and leave it alone)."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (argparse prints the whole usage block by default).

    Negative numbers in scientific notation are read as option values (``--loss -1e3``). An
    unrecognized option is the error reported, with the closest valid option: argparse checks
    the required options first, so a typo (``--tm 3`` for ``--tn 3``) read as "required: --tn".
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def parse_known_args(  # type: ignore[override]
            self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        """argparse's; UsageError naming the closest valid option of an unrecognized one."""
        words = list(sys.argv[1:] if args is None else args)
        try:
            parsed, extras = super().parse_known_args(words, namespace)
        except _Checked:
            raise
        except UsageError as error:
            raise _Checked(self._unrecognized(words) or str(error)) from None
        message = self._unrecognized(extras)
        if message:
            raise _Checked(message)
        return parsed, extras

    def _unrecognized(self, words: Sequence[str]) -> str:
        """"unrecognized arguments: ..." for the options among ``words`` this parser does not
        have, each with the closest it has (of those not given already: ``--tp 5 --tm 3``
        suggests ``--tn``); empty when there is none."""
        known = list(self._option_string_actions)
        given = {word.split("=", 1)[0] for word in words}
        unused = [name for name in known if name not in given]
        found = []
        for word in words:
            if word == "--":
                break  # what follows is positional
            option = word.split("=", 1)[0]
            if (len(option) < 2 or option[0] not in self.prefix_chars
                    or _is_number(word)  # -1, -nan, -inf: a value given where argparse
                    # saw an option; argparse's own error names the option that wanted it
                    or any(name.startswith(option) for name in known)):  # known or abbreviated
                continue
            close = difflib.get_close_matches(option, unused, n=1)
            found.append(f"{option} (did you mean {close[0]}?)" if close else option)
        return f"unrecognized arguments: {', '.join(found)}" if found else ""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def unit_interval(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1; got {text}")
    return value


def closed_unit_interval(text: str) -> float:
    """argparse type: a number between 0 and 1, both included."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1]; got {text!r}") from None
    if not 0.0 <= value <= 1.0:  # nan too
        raise argparse.ArgumentTypeError(f"must be in [0, 1]; got {text}")
    return value


def familywise_error(text: str) -> float:
    """argparse type of ``--familywise-error``: in (0, 1), at least `MIN_FAMILYWISE_ERROR`."""
    value = unit_interval(text)
    if value < MIN_FAMILYWISE_ERROR:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_FAMILYWISE_ERROR:g}; got {text}")
    return value


def finite_number(text: str) -> float:
    """argparse type: a finite real number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number; got {text!r}")
    return value


def positive_number(text: str) -> float:
    """argparse type: a positive finite number."""
    value = finite_number(text)
    if value <= 0.0:
        raise argparse.ArgumentTypeError(f"must be a positive number; got {text}")
    return value


_DURATION = re.compile(r"(?P<amount>\d+(?:\.\d+)?)(?P<unit>[smh]?)")
_SECONDS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(text: str) -> float:
    """argparse type: a positive wall time in seconds, minutes or hours (``90``, ``90s``,
    ``30m``, ``1.5h``), as seconds."""
    found = _DURATION.fullmatch(text.strip())
    value = float(found["amount"]) * _SECONDS[found["unit"]] if found else 0.0
    if not 0.0 < value < math.inf:
        raise argparse.ArgumentTypeError(
            f"must be a positive duration such as 90s, 30m or 1.5h; got {text!r}")
    return value


def non_negative_number(text: str) -> float:
    """argparse type: a non-negative finite number."""
    value = finite_number(text)
    if value < 0.0:
        raise argparse.ArgumentTypeError(f"must be a non-negative number; got {text}")
    return value


def positive_fraction(text: str) -> float:
    """argparse type: a number in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1]; got {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1]; got {text}")
    return value


def _integer(text: str, minimum: int, what: str, maximum: int = _MAX_COUNT,
             largest: str = "2**63 - 1") -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a {what} integer; got {text!r}") from None
    if value < minimum or value > maximum:
        raise argparse.ArgumentTypeError(
            f"must be a {what} integer no larger than {largest}; got {text}")
    return value


def count(text: str) -> int:
    """argparse type: a non-negative integer."""
    return _integer(text, 0, "non-negative")


def positive_count(text: str) -> int:
    """argparse type: a positive integer."""
    return _integer(text, 1, "positive")


def draws(text: str) -> int:
    """argparse type: a number of Monte Carlo draws, positive and at most `MAX_DRAWS`."""
    return _integer(text, 1, "positive", MAX_DRAWS, f"{MAX_DRAWS:,}")


def workers(text: str) -> int:
    """argparse type: a number of local worker processes, positive and at most `MAX_WORKERS`."""
    return _integer(text, 1, "positive", MAX_WORKERS, f"{MAX_WORKERS:,}")


def _within_amount(value: float, text: str, what: str, smallest: float = 0.0) -> float:
    if abs(value) > MAX_AMOUNT or 0.0 < abs(value) < smallest:
        raise argparse.ArgumentTypeError(f"must be {what}; got {text}")
    return value


def amount(text: str) -> float:
    """argparse type: a utility or sum of money, at most `MAX_AMOUNT` in magnitude."""
    return _within_amount(finite_number(text), text,
                          f"a number between -{MAX_AMOUNT:g} and {MAX_AMOUNT:g}")


def non_negative_amount(text: str) -> float:
    """argparse type: a non-negative sum of money, at most `MAX_AMOUNT`."""
    return _within_amount(non_negative_number(text), text,
                          f"a non-negative number no larger than {MAX_AMOUNT:g}")


def positive_amount(text: str) -> float:
    """argparse type: a price, between 1 / `MAX_AMOUNT` and `MAX_AMOUNT`.

    The lower bound keeps a budget divided by the price finite.
    """
    return _within_amount(positive_number(text), text,
                          f"a positive number between {1 / MAX_AMOUNT:g} and {MAX_AMOUNT:g}",
                          smallest=1 / MAX_AMOUNT)


def file_name(text: str) -> str:
    """argparse type: the name of a file to read, not empty (the error would name nothing)."""
    if not text:
        raise argparse.ArgumentTypeError("must be a file name; got ''")
    return text


def output_directory(text: str) -> Path:
    """argparse type: a directory to write into, existing or to be made.

    Not a file nor under one, and writable: checked before any work, which would otherwise end
    in a traceback from deep inside the writing.
    """
    if not text:
        raise argparse.ArgumentTypeError("must be a directory path; got ''")
    if not text.isprintable():
        # bytes that are not UTF-8 come as surrogates (not printable), and the reports, UTF-8
        # text, name their directory: the report would fail once the run is done
        raise argparse.ArgumentTypeError(
            f"must be a directory path of printable UTF-8 text; got {text!r}")
    path = Path(text)
    try:
        existing = next(p for p in (path, *path.parents) if p.exists())
    except (OSError, ValueError) as error:  # a name too long, a NUL byte
        reason = getattr(error, "strerror", None) or error
        raise argparse.ArgumentTypeError(
            f"must be a usable directory path; got {text!r} ({reason})") from None
    if not existing.is_dir():
        what = "a file" if existing == path else f"under the file {str(existing)!r}"
        raise argparse.ArgumentTypeError(f"must be a directory; got {text!r}, which is {what}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(
            f"must be a directory this user can write; got {text!r} ({str(existing)!r} is "
            "not writable)")
    return path
