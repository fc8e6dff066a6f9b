"""The ``evalcert`` command line.

Each subcommand lives in its own module exposing ``add_command(commands)``, which adds a
subparser and sets its ``handler``. Errors in what the user typed are reported on one line and
exit with status 2, never with a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

EXIT_USAGE = 2


class UsageError(Exception):
    """A problem with the command line itself."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (argparse prints the whole usage block by default)."""

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


def _integer_at_least(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a {what} integer; got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be a {what} integer; got {text}")
    return value


def count(text: str) -> int:
    """argparse type: a non-negative integer."""
    return _integer_at_least(text, 0, "non-negative")


def positive_count(text: str) -> int:
    """argparse type: a positive integer."""
    return _integer_at_least(text, 1, "positive")


def build_parser() -> argparse.ArgumentParser:
    """The full parser: one subparser per command module."""
    from studies import cmd_certify, cmd_demo, cmd_stratified, cmd_study

    parser = Parser(prog="evalcert", description="Certified estimates for classifier evaluation.")
    commands: Any = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in (cmd_demo, cmd_certify, cmd_stratified, cmd_study):
        module.add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalcert`` console script; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        status: int = args.handler(args)
        return status
    except (UsageError, ValueError, TypeError) as error:
        print(f"evalcert: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
