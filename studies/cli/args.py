"""What every command shares: the one-line usage error, the parser class and argument types.

Each command module imports from here, never from the entry point (`studies.cli.main`), so the
command line has no import circle.
"""

from __future__ import annotations

import argparse
import math
import re
from typing import NoReturn

__all__ = [
    "EXIT_USAGE",
    "HelpFormatter",
    "Parser",
    "UsageError",
    "count",
    "finite_number",
    "non_negative_number",
    "positive_count",
    "positive_fraction",
    "positive_number",
    "unit_interval",
]

EXIT_USAGE = 2
# Counts beyond int64 would wrap to negative values inside numpy.
_MAX_COUNT = 2**63 - 1


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


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (argparse prints the whole usage block by default).

    Negative numbers in scientific notation are read as option values (``--loss -1e3``).
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def unit_interval(text: str) -> float:
    """argparse type: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1; got {text}")
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


def _integer_at_least(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a {what} integer; got {text!r}") from None
    if value < minimum or value > _MAX_COUNT:
        raise argparse.ArgumentTypeError(
            f"must be a {what} integer no larger than 2**63 - 1; got {text}")
    return value


def count(text: str) -> int:
    """argparse type: a non-negative integer."""
    return _integer_at_least(text, 0, "non-negative")


def positive_count(text: str) -> int:
    """argparse type: a positive integer."""
    return _integer_at_least(text, 1, "positive")
