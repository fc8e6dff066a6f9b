"""The ``evalcert`` entry point: build the parser from the command modules and dispatch.

Each command lives in its own module of `studies.cli` exposing ``add_command(commands)``,
which adds a subparser and sets its ``handler`` (the parsers of ``f1`` and ``study`` live in
`studies.cli.parsers`). Building the parser imports no estimator, engine or report: a command
imports them when it runs, so ``evalcert --help`` starts fast. Errors in what the user typed
are reported on one line and exit with status 2, never with a traceback. A reader that
closes the output early (``evalcert f1 --json | head -3``) ends the command quietly, with the
status of a command stopped by SIGPIPE (141), as ``cat`` and the shells report.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from studies.cli import demo, gain, recall, sample_size, stratified, summarise
from studies.cli.args import EXIT_USAGE, Parser, UsageError
from studies.cli.parsers import f1, study

__all__ = ["EXIT_BROKEN_PIPE", "build_parser", "main"]

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE (13), which Windows's signal module lacks

COMMANDS = (demo, f1, recall, sample_size, stratified, gain, summarise, study)


def build_parser() -> argparse.ArgumentParser:
    """The full parser: one subparser per command module."""
    parser = Parser(prog="evalcert",
                    description="Certified estimates for classifier evaluation, and the "
                                "studies that check them.")
    commands: Any = parser.add_subparsers(dest="command", required=True, parser_class=Parser,
                                          metavar="COMMAND")
    for module in COMMANDS:
        module.add_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalcert`` console script; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(words)
        args.command_line = ["evalcert", *words]
        status: int = args.handler(args)
        sys.stdout.flush()  # a closed pipe raises here, not at exit where nothing catches it
        return status
    except BrokenPipeError:
        # the recipe of Python's signal docs: what is left to flush goes nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except (UsageError, ValueError, TypeError) as error:
        return _error(str(error))
    except MemoryError as error:  # numpy's message names the array it could not allocate
        detail = str(error).splitlines()[0] if str(error) else "out of memory"
        return _error(f"the request needs more memory than this machine has ({detail}); ask "
                      "for fewer draws, replicates or a smaller size.")
    except OSError as error:  # what no check foresaw (a full disk, a vanished directory)
        where = f"{error.filename}: " if error.filename is not None else ""
        return _error(f"{where}{error.strerror or error}")


def _error(message: str) -> int:
    """Print the one-line error; a typed value may hold line breaks, shown escaped."""
    line = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in message)
    print(f"evalcert: error: {line}", file=sys.stderr)
    return EXIT_USAGE
