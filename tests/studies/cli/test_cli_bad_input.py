"""Bad input to every `evalcert` command: one line on stderr, exit status 2, naming the input.

Property tests build argument vectors from a valid call of each command and change one to three
things in it: an option's value (negative, zero, huge, non-numeric, nan, inf, empty, unicode,
a path that is a file, a directory or missing), a dropped required option, an unknown option or
word, an option left without its value. Each call runs in process and must either succeed
(exit 0, or 1 where a study command judges claims or a regression) with output, or exit 2 with
exactly one line on stderr, ``evalcert: error: ...``, without a traceback; when one thing was
changed, the line must name the option or argument changed. Values a valid call would spend
time on (draws, workers, grids) are kept small where they are valid.

`OUTCOMES` counts the calls tried per command and how they ended; the last test prints it.
``FUZZ_SCALE=N`` in the environment multiplies every property test's examples (a longer hunt).
Subprocess runs check that nothing is printed at interpreter exit (the Dask client's
teardown). Defects of the estimators the command line cannot catch are strict xfails at the
end, each with its exact call.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import itertools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from studies.cli.args import MAX_DRAWS, MAX_WORKERS
from studies.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
PREFIX = "evalcert: error: "
COUNTS = ["--tp", "60", "--fp", "20", "--fn", "25", "--tn", "395"]

# Per command: calls tried, by outcome ("exit 2 clear" or "valid result").
OUTCOMES: collections.Counter[tuple[str, str]] = collections.Counter()

# Texts every numeric option gets: signs, zero, sizes beyond int64 and float, the notations
# Python reads and those it does not, unicode digits (int() reads them), blanks, line breaks.
SPECIAL = [
    "-1", "0", "-0", "1", "0.5", "2", "-1e3", "1e3", "-2.5E-4", str(10**20), str(2**53),
    str(2**53 + 1), str(2**63 - 1), str(2**63), str(2**64), str(-(2**63)), "1e400", "-1e400",
    "1e-400", "5e-324", "1e308", "1e100", "1e-100", "0.9999999999999999", "nan", "NaN", "-nan",
    "inf", "-inf", "Infinity", "", " ", "abc", "1,5", "1_000", "0x10", "\u0663", "\uff15",
    "\u00bd", "1e", "-", "--", "\u2014" + "1", "\u2028", "1\n", "-1\n2", "None", "true",
    "\udcff",  # an undecodable byte of argv, as Python holds it
]
# Small valid values, for options where a large valid one would do real work.
SMALL = st.integers(1, 300).map(str)
TEXT = st.text(st.characters(blacklist_characters="\x00"), max_size=12)  # argv holds no NUL


def numbers(*extra: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Any numeric text: the special ones, integers and floats of any size, junk text."""
    return st.one_of(st.sampled_from(SPECIAL), st.integers(-(2**70), 2**70).map(str),
                     st.floats().map(repr), TEXT, *extra)


def small_counts() -> st.SearchStrategy[str]:
    """Numeric text whose valid values are small (draws, bins): no valid call is slow."""
    cheap = [s for s in SPECIAL if not _int_in(s, 301, MAX_DRAWS)]
    return st.one_of(st.sampled_from(cheap), SMALL, st.integers(-(2**70), 0).map(str),
                     st.integers(MAX_DRAWS + 1, 2**70).map(str), st.floats().map(repr), TEXT)


def _int_in(text: str, low: int, high: int) -> bool:
    try:
        return low <= int(text) <= high
    except ValueError:
        return False


def choices(*valid: str) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from([*valid, "", "nope", "WALD", "-1", "\u00e9"]), TEXT)


# Paths, as tokens replaced when the call runs (`World.path`): a file, a path under a file, a
# directory that holds no run, a missing path, a finished run, a baseline, a new directory.
PATH_TOKENS = ["<file>", "<file>/sub", "<dir>", "<missing>", "<missing>/a/b", "<run>",
               "<run>/run.sqlite", "<run>/figures", "<baseline>", "<strata>", "<scores>",
               "<results>", "<claims>",
               "<long>", "<long>/a", "<fresh>", "", "<tmp>/\udcff"]


def paths() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(PATH_TOKENS), TEXT.map(lambda t: f"<tmp>/{t}"))


# Scheduler addresses that fail before connecting (the unreachable ones, which take the
# connect timeout, run in a subprocess below).
BAD_SCHEDULERS = ["not an address", "tcp://", "tcp://host:notaport", "inproc://x", "ucx://x:1",
                  "TCP://127.0.0.1:1", "", "tcp://[::1", "tls://127.0.0.1:1", "-1", "\u2028"]


@dataclass(frozen=True)
class Option:
    """An option (``--draws``) or a positional argument (``metavar``) and its fuzzed values."""

    name: str
    values: st.SearchStrategy[str] | None = None  # None: a flag
    aliases: tuple[str, ...] = ()  # other words a message may name it by
    required: bool = False

    @property
    def positional(self) -> bool:
        return not self.name.startswith("-")

    def names(self) -> tuple[str, ...]:
        bare = self.name.lstrip("-")
        return (self.name, bare, bare.replace("-", "_"), *self.aliases)


@dataclass(frozen=True)
class Command:
    """A command: a valid call of it and the options to change."""

    words: tuple[str, ...]
    valid: tuple[str, ...]
    options: tuple[Option, ...]
    results: tuple[int, ...] = (0,)
    unknown: tuple[str, ...] = ("--no-such-option", "-Z", "unexpected-zq7")
    variant: str = ""  # a second valid call of the same command (its key in COMMANDS)

    @property
    def name(self) -> str:
        return " ".join((*self.words, *([self.variant] if self.variant else [])))


LEVEL = numbers(st.floats(0, 1).map(repr))
COUNT_OPTIONS = tuple(Option(f"--{n}", numbers(), required=True) for n in ("tp", "fp", "fn", "tn"))

COMMANDS = {
    "demo": Command(("demo",), (), (
        *(dataclasses.replace(o, required=False) for o in COUNT_OPTIONS),
        Option("--confidence-level", LEVEL), Option("--method", choices("wald", "wilson")),
        Option("--target-recall", LEVEL), Option("--target-precision", LEVEL),
        Option("--json"))),
    "f1": Command(("f1",), (*COUNTS, "--draws", "200"), (
        *COUNT_OPTIONS, Option("--method", choices("delta", "bootstrap")),
        Option("--confidence-level", LEVEL), Option("--draws", small_counts()),
        Option("--seed", numbers()), Option("--json"))),
    "recall": Command(
        ("recall",), (*COUNTS, "--design", "stratified", "--retrieved", "800", "--unretrieved",
                      "9200", "--target", "0.35"), (
            *COUNT_OPTIONS, Option("--design", choices("srs", "stratified")),
            Option("--retrieved", numbers()), Option("--unretrieved", numbers()),
            Option("--finite"), Option("--target", LEVEL),
            Option("--method", choices("segments-clopper-pearson", "delta", "wilson")),
            Option("--confidence-level", LEVEL), Option("--json"))),
    "f1 stratified": Command(
        ("f1",), (*COUNTS, "--design", "stratified", "--retrieved", "800", "--unretrieved",
                  "9200", "--target", "0.5", "--method", "segments-clopper-pearson"), (
            *COUNT_OPTIONS, Option("--design", choices("srs", "stratified")),
            Option("--retrieved", numbers()), Option("--unretrieved", numbers()),
            Option("--finite"), Option("--target", LEVEL),
            Option("--method", choices("segments-hypergeometric", "jaccard-wilson")),
            Option("--confidence-level", LEVEL), Option("--json")), variant="stratified"),
    "sample-size": Command(
        ("sample-size",), (*COUNTS, "--target", "0.6", "--draws", "100", "--seed", "1",
                           "--max-draws", "400"), (
            *COUNT_OPTIONS, Option("--target", LEVEL, required=True),
            Option("--confidence-level", LEVEL), Option("--power", LEVEL),
            Option("--interval", choices("delta", "logit-delta")),
            Option("--draws", small_counts()), Option("--seed", numbers()),
            Option("--relative-precision", numbers(st.floats(0, 1).map(repr))),
            Option("--max-draws", small_counts()), Option("--json"))),
    "stratified": Command(("stratified",), ("<strata>", "--gain", "1", "--loss", "-1"), (
        Option("FILE.csv", paths(), required=True),
        Option("--gain", numbers(), required=True), Option("--loss", numbers(), required=True),
        Option("--confidence-level", LEVEL), Option("--method", choices("wald", "jeffreys")),
        Option("--json"))),
    "gain": Command(("gain",), ("<scores>", "--bins", "2", "--cost-per-item", "1"), (
        Option("SCORES.csv", paths(), required=True),
        Option("--bins", small_counts()), Option("--cost-per-item", numbers()),
        Option("--budget", numbers()), Option("--share", numbers(st.floats(0, 1).map(repr))),
        Option("--whole-bins"), Option("--json"))),
    "summarise": Command(
        ("summarise",), ("<results>", "--estimate", "b", "--se", "se", "--true", "0.5",
                         "--method", "method", "--by", "n", "--claims", "<claims>"), (
            Option("FILE.csv", paths(), required=True),
            Option("--estimate", st.one_of(st.sampled_from(["b", "se", "nosuch", ""]), TEXT),
                   required=True),
            Option("--true", st.one_of(numbers(), st.sampled_from(["n", "nosuch"]))),
            Option("--se", st.sampled_from(["se", "b", "method", "nosuch", ""])),
            Option("--method", st.sampled_from(["method", "n", "nosuch", ""])),
            Option("--by", st.one_of(st.sampled_from(["n", "n,method", "n,,", ",", "nosuch"]),
                                     TEXT)),
            Option("--level", LEVEL), Option("--df", numbers()), Option("--null", numbers()),
            Option("--reference", st.sampled_from(["x", "y", "nosuch", ""])),
            Option("--missing", choices("drop", "error")),
            Option("--mcse", choices("robust", "table6")),
            Option("--claims", paths(), ("CLAIMS.toml",)),
            Option("--familywise-error", LEVEL), Option("--out", paths()), Option("--json")),
        results=(0, 1)),
    "study list": Command(("study", "list"), (), ()),
    "study run": Command(
        ("study", "run"), ("binomial_coverage", "--workers", "1", "--seed", "1",
                           "--out", "<fresh>"), (
            Option("NAME", st.one_of(st.sampled_from(
                ["binomial_coverage", "mean_bias", "nosuch", "nosuch:X", ":", "os:path",
                 "studies.suite.registry:SUITE_FALSE_ALARM", "-1", ""]), TEXT),
                ("names", "study"), required=True),
            Option("--grid", choices("quick")),
            Option("--seed", numbers()),
            Option("--workers", st.one_of(st.sampled_from(
                [s for s in SPECIAL if not _int_in(s, 2, MAX_WORKERS)]),
                st.integers(MAX_WORKERS + 1, 2**70).map(str), st.integers(-(2**70), 0).map(str),
                TEXT)),
            Option("--scheduler", st.sampled_from(BAD_SCHEDULERS)),
            Option("--out", paths()),
            Option("--resume"),
            Option("--method", st.one_of(st.sampled_from(
                ["x", "os:nope", ":", "nosuchmodule:f", "json:dumps", "-1", ""]), TEXT)),
            Option("--baseline", paths())),
        results=(0, 1)),
    "study check": Command(("study", "check"), ("<run>",), (
        Option("directory", paths(), required=True),), results=(0, 1)),
    "study report": Command(("study", "report"), ("<run>", "--out", "<fresh>"), (
        Option("directory", paths(), required=True), Option("--out", paths())),
        results=(0, 1)),
    "study compare": Command(("study", "compare"), ("<baseline>", "<run>"), (
        Option("BASELINE", paths(), ("baseline",), required=True),
        Option("CURRENT", paths(), ("current",), required=True),
        Option("--k", numbers()), Option("--familywise-error", LEVEL), Option("--strict"),
        Option("--json")), results=(0, 1)),
    "study bless": Command(("study", "bless"), ("<run>", "--reason", "why", "--out", "<fresh>"),
                           (Option("RUN_DIR", paths(), ("directory",), required=True),
                            Option("--reason", numbers(), required=True),
                            Option("--out", paths()))),
    "study status": Command(("study", "status"), ("<run>",), (
        Option("directory", paths(), required=True),)),
    "study salvage": Command(("study", "salvage"), ("<run>", "--out", "<fresh>"), (
        Option("directory", paths(), required=True),
        Option("--out", paths(), ("NEWDIR",), required=True))),
}


class World:
    """The files and directories the calls name (tokens such as ``<run>`` stand for them)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.fresh = itertools.count()
        (root / "file.txt").write_text("not a directory\n")
        (root / "dir").mkdir()
        (root / "dir" / "something").write_text("x\n")
        # like <dir>, but never drawn by the fuzzing (a report written there would make it one)
        (root / "junk").mkdir()
        (root / "junk" / "something").write_text("x\n")
        (root / "strata.csv").write_text("stratum,size,sampled,positives\n001,1000,30,1\n"
                                         "011,200,30,10\n101,0,0,0\n111,40,30,23\n")
        (root / "scores.csv").write_text("score,label\n" + "".join(
            f"{s / 10},{int(s % 3 == 0)}\n" for s in range(10)))
        (root / "results.csv").write_text("n,method,b,se\n" + "".join(
            f"{n},{m},{0.5 + (r - 2) / (10 + n)},{0.1 + r / 100}\n"
            for n in (10, 20) for m in "xy" for r in range(5)))
        (root / "claims.toml").write_text(
            '[[claim]]\nname = "c"\nstatement = "x is unbiased within 0.2."\n'
            'methods = ["x"]\nmeasure = "bias"\ncomparison = "within"\nmargin = 0.2\n'
            'resolution = 0.5\n')
        self.tokens = {"<file>": root / "file.txt", "<dir>": root / "dir", "<junk>": root / "junk",
                       "<missing>": root / "missing", "<run>": root / "run",
                       "<baseline>": root / "baseline", "<strata>": root / "strata.csv",
                       "<scores>": root / "scores.csv", "<tmp>": root / "tmp",
                       "<results>": root / "results.csv", "<claims>": root / "claims.toml",
                       "<long>": root / ("x" * 300)}  # longer than a file name may be
        (root / "tmp").mkdir()

    def path(self, word: str) -> str:
        """``word`` with its token replaced by the path it stands for."""
        if word == "<fresh>":
            return str(self.root / "fresh" / str(next(self.fresh)))
        for token, path in self.tokens.items():
            if word.startswith(token):
                return str(path) + word[len(token):]
        return word


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A finished run and its baseline, the files, and the working directory (relative paths
    written by a call land in it)."""
    world = World(tmp_path_factory.mktemp("bad-input"))
    before = Path.cwd()
    os.chdir(world.tokens["<tmp>"])
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(["study", "run", "binomial_coverage", "--workers", "1", "--seed", "1",
                         "--out", str(world.tokens["<run>"])]) == 0
            assert main(["study", "bless", str(world.tokens["<run>"]), "--reason", "fixture",
                         "--out", str(world.tokens["<baseline>"])]) == 0
        yield world
    finally:
        os.chdir(before)


@dataclass
class Call:
    argv: list[str]
    changes: list[str]
    # one change only: the names of what changed, one of which the error must hold, and the
    # value given to a positional argument (a path the error may name instead)
    fault: tuple[str, ...] | None = None
    value: str | None = None


def _without(argv: list[str], option: Option, command: Command) -> list[str]:
    """``argv`` without ``option`` (and its value); a positional by its place."""
    if option.positional:
        places = [o for o in command.options if o.positional]
        index = places.index(option)
        return [w for i, w in enumerate(argv) if i != index]
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word == option.name:
            skip = option.values is not None
        else:
            out.append(word)
    return out


def _with(argv: list[str], option: Option, value: str | None, command: Command) -> list[str]:
    """``argv`` with ``option`` set to ``value`` (a flag: present)."""
    if option.positional:
        index = [o for o in command.options if o.positional].index(option)
        return [*argv[:index], value or "", *argv[index + 1:]]
    rest = _without(argv, option, command)
    return [*rest, option.name] if value is None else [*rest, option.name, value]


@st.composite
def calls(draw, command: Command) -> Call:
    """A valid call of ``command`` with one to three changes."""
    argv = list(command.valid)
    options = command.options
    n_changes = draw(st.integers(1, 3))
    faults: list[tuple[tuple[str, ...], str | None]] = []
    changes = []
    for _ in range(n_changes):
        kinds = ["unknown"] + (["value", "value", "value", "no value", "drop"] if options else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "unknown":
            word = draw(st.sampled_from(command.unknown))
            argv.append(word)
            faults.append(((word,), None))
            changes.append(f"unknown {word}")
            continue
        option = draw(st.sampled_from(options))
        if kind == "drop" and option.required:
            argv = _without(argv, option, command)
            changes.append(f"drop {option.name}")
            if option.positional:  # the words left fill the first places: the last is missing
                faults.append((tuple(n for o in options if o.positional for n in o.names()),
                               None))
                continue
        elif kind == "no value" and option.values is not None and not option.positional:
            argv = [*_without(argv, option, command), option.name]
            changes.append(f"{option.name} without a value")
        elif option.values is None:  # a flag: present, or given a value it does not take
            value = draw(st.sampled_from([None, "yes"]))
            argv = _with(argv, option, None, command)
            if value is not None:
                argv[-1] = f"{option.name}={value}"
            changes.append(f"{option.name}" + ("" if value is None else f"={value}"))
        else:
            value = draw(option.values)
            argv = _with(argv, option, value, command)
            changes.append(f"{option.name} {value!r}")
            if option.positional:
                faults.append((option.names(), value))
                continue
        faults.append((option.names(), None))
    if len(faults) == 1:
        return Call(argv, changes, *faults[0])
    return Call(argv, changes)


def _names(name: str, line: str) -> bool:
    """Whether ``line`` holds ``name`` as a word (``k`` is not named by "ask")."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", line) is not None


def _escaped(text: str) -> str:
    """``text`` as the one-line error shows it (`studies.cli.main` escapes line breaks)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def check(command: Command, call: Call, world: World, capsys) -> None:
    """Run ``call``; assert the outcome is a result or one clear line; count it."""
    resolved = {word: world.path(word) for word in call.argv}  # one <fresh> path per call
    argv = [resolved[word] for word in call.argv]
    status = main([*command.words, *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out, (argv, err)
    if status == 2:
        assert err.endswith("\n") and err.count("\n") == 1, (argv, err)
        line = err[:-1]
        assert line.startswith(PREFIX) and line[len(PREFIX):].strip(), (argv, err)
        assert out == "", (argv, out)
        if call.fault is not None:
            # a path is named by itself: the tokens stand for paths under the world's root
            path = None if call.value is None else resolved[call.value]
            named = any(_names(name, line) for name in call.fault) or (
                path is not None and path.startswith(str(world.root))
                and _escaped(path) in line)
            assert named, (argv, call.changes, line)
        outcome = "exit 2 clear"
    else:
        assert status in command.results, (argv, status, err)
        assert out.strip(), (argv, err)
        outcome = "valid result"
    OUTCOMES[command.name, outcome] += 1
    event(f"{command.name}: {outcome}")


def _property(name: str, examples: int):
    command = COMMANDS[name]

    @settings(max_examples=examples * int(os.environ.get("FUZZ_SCALE", "1")), deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(call=calls(command))
    def test(world, capsys, call):
        check(command, call, world, capsys)

    test.__name__ = f"test_bad_input_to_{name.replace(' ', '_').replace('-', '_')}"
    test.__doc__ = f"`evalcert {name}` with changed arguments: a result or one clear line."
    return test


test_bad_input_to_demo = _property("demo", 80)
test_bad_input_to_f1 = _property("f1", 80)
test_bad_input_to_sample_size = _property("sample-size", 60)
test_bad_input_to_stratified = _property("stratified", 80)
test_bad_input_to_gain = _property("gain", 80)
test_bad_input_to_summarise = _property("summarise", 80)
test_bad_input_to_recall = _property("recall", 80)
test_bad_input_to_f1_stratified = _property("f1 stratified", 60)
test_bad_input_to_study_list = _property("study list", 10)
test_bad_input_to_study_run = _property("study run", 40)
test_bad_input_to_study_check = _property("study check", 30)
test_bad_input_to_study_report = _property("study report", 20)
test_bad_input_to_study_compare = _property("study compare", 40)
test_bad_input_to_study_bless = _property("study bless", 30)
test_bad_input_to_study_status = _property("study status", 30)
test_bad_input_to_study_salvage = _property("study salvage", 30)


def one_line(capsys) -> str:
    """The single line of an exit-2 error (asserted single, prefixed, without a traceback)."""
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(PREFIX), (out, err)
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("command", [["study", "run", "binomial_coverage", "--workers", "1"],
                                     ["study", "report", "<run>"],
                                     ["study", "bless", "<run>", "--reason", "why"]])
@pytest.mark.parametrize(("out", "fragment"), [
    ("<file>", "which is a file"), ("<file>/sub", "which is under the file"),
    ("<file>/sub/deeper", "which is under the file"), ("", "must be a directory path"),
    ("<long>", "File name too long"), ("\udcff", "printable UTF-8 text")])
def test_out_that_cannot_be_a_directory_is_one_line_naming_out(world, capsys, command, out,
                                                                fragment):
    argv = [world.path(w) for w in [*command, "--out", out]]
    assert main(argv) == 2
    err = one_line(capsys)
    assert err.startswith(f"{PREFIX}argument --out: ") and fragment in err, err
    assert not (world.root / "file.txt").is_dir()


@pytest.mark.parametrize(("argv", "fragment"), [
    (["f1", *COUNTS, "--draws", "10000000000"],
     "argument --draws: must be a positive integer no larger than 10,000,000; got 10000000000"),
    (["f1", *COUNTS, "--draws", str(MAX_DRAWS + 1)], "argument --draws: "),
    (["sample-size", *COUNTS, "--target", "0.6", "--draws", str(2**64)], "argument --draws: "),
    (["sample-size", *COUNTS, "--target", "0.6", "--max-draws", str(10**20)],
     "argument --max-draws: "),
    (["sample-size", *COUNTS, "--target", "0.6", "--draws", "99"],
     "`--draws` must be at least 100; got 99."),
    (["sample-size", *COUNTS, "--target", "0.6", "--draws", "200", "--max-draws", "100",
      "--relative-precision", "0.1"], "`--max-draws` must be at least --draws (200)"),
    (["sample-size", *COUNTS, "--target", "0.6", "--relative-precision", "2"],
     "argument --relative-precision: must be in (0, 1]"),
    (["sample-size", *COUNTS, "--target", "0.6", "--relative-precision", "nan"],
     "argument --relative-precision: "),
    (["study", "run", "binomial_coverage", "--workers", str(2**63 - 1)],
     f"argument --workers: must be a positive integer no larger than {MAX_WORKERS:,}"),
    (["demo", "--tp", str(2**53 + 1)], "argument --tp: must be a non-negative integer no "
                                       "larger than 2**53"),
    (["demo", "--tp", str(2**53)], "`--tp` + `--fp` + `--fn` + `--tn` must be at most 2**53"),
    (["f1", "--tp", str(2**52), "--fp", str(2**52), "--fn", "1", "--tn", "0"],
     "`--tp` + `--fp` + `--fn` + `--tn` must be at most 2**53"),
    (["stratified", "<strata>", "--gain", "1e200", "--loss", "0"],
     "argument --gain: must be a number between -1e+100 and 1e+100; got 1e200"),
    (["stratified", "<strata>", "--gain", "1", "--loss", "-1e101"], "argument --loss: "),
    (["gain", "<scores>", "--bins", "2", "--cost-per-item", "5e-324", "--budget", "1"],
     "argument --cost-per-item: must be a positive number between 1e-100 and 1e+100"),
    (["gain", "<scores>", "--bins", "2", "--cost-per-item", "1", "--budget", "1e308"],
     "argument --budget: must be a non-negative number no larger than 1e+100"),
    (["study", "compare", "<baseline>", "<run>", "--familywise-error", "5e-324"],
     "argument --familywise-error: must be at least 1e-300"),
    (["study", "compare", "<baseline>", "<file>"], "argument CURRENT: "),
    (["study", "compare", "<junk>", "<run>"], "argument BASELINE: "),
    (["study", "run", "binomial_coverage", "--baseline", "<file>"], "argument --baseline: "),
    (["demo", "\n--tp"], "unrecognized arguments: \\n--tp"),  # escaped: still one line
])
def test_absurd_or_contradictory_values_are_refused_naming_the_option(world, capsys, argv,
                                                                       fragment):
    assert main([world.path(w) for w in argv]) == 2
    err = one_line(capsys)
    assert fragment in err, err


def _numeric_options():
    """(command, option) for every option whose type reads a number, from the parser."""
    import argparse

    from studies.cli.main import build_parser

    def walk(parser, words):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, (*words, name))
            elif action.option_strings and callable(action.type):
                try:
                    numeric = isinstance(action.type("1"), int | float)
                except argparse.ArgumentTypeError:
                    numeric = isinstance(action.type("0.5"), float)
                if numeric:
                    yield " ".join(words), action.option_strings[0]

    return sorted({(name, option) for name, option in walk(build_parser(), ())
                   if name in COMMANDS})  # a command added since has no valid call here yet


@pytest.mark.parametrize(("name", "option"), _numeric_options())
@pytest.mark.parametrize("value", ["-3", "-0.5", "-.5", "-1e3", "-2.5E-4", "-inf"])
def test_negative_numbers_are_values_of_every_numeric_option(world, capsys, name, option,
                                                             value):
    command = COMMANDS[name]
    valid = list(command.valid)
    if option in valid:  # replace the valid call's own value
        index = valid.index(option)
        del valid[index:index + 2]
    if name == "study run":
        valid[valid.index("<fresh>")] = str(world.root / "never" / option.strip("-") / value)
    status = main([*command.words, *(world.path(w) for w in valid), option, value])
    err = capsys.readouterr().err
    assert "expected one argument" not in err, err  # read as an option, not a value
    if status == 2:
        assert err.count("\n") == 1 and option in err, err
    else:
        # utilities, a true value and a null hypothesis's value may be negative
        assert status in command.results and option in ("--loss", "--gain", "--true",
                                                         "--null"), (status, err)


def test_nothing_a_store_names_is_imported_by_reading_commands(
        tmp_path, monkeypatch, capsys):
    """A study name or method is an import path only on the command line that runs it."""
    from studies.engine import run
    from studies.suite import get_study

    marker = tmp_path / "imported"
    module = "evalcert_marker_module"
    (tmp_path / f"{module}.py").write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('imported')\n"
        "from estimators import proportion_ci\n\n\n"
        "def ci(successes, trials, *, confidence_level):\n"
        "    return proportion_ci(successes, trials, method='wilson',\n"
        "                         confidence_level=confidence_level)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    # a run whose stored study name is an import path of the module (a Python user's study)
    study = dataclasses.replace(get_study("binomial_coverage"), name=f"{module}:STUDY")
    stored = tmp_path / "run"
    run([study], rng=1, workers=1, out=stored)
    capsys.readouterr()
    for argv in (["study", "status", stored], ["study", "check", stored],
                 ["study", "report", stored, "--out", tmp_path / "report"], ["study", "list"],
                 ["study", "compare", stored, stored],
                 ["study", "bless", stored, "--reason", "why", "--out", tmp_path / "bl"],
                 ["study", "salvage", stored, "--out", tmp_path / "salvaged"]):
        assert main([str(w) for w in argv]) == 0, capsys.readouterr()
        err = capsys.readouterr().err
        assert not marker.exists() and module not in sys.modules, argv
        if argv[1] in ("check", "report"):
            assert f"{module}:STUDY: not a discovered study" in err
    # named on the command line, the module is imported: the marker does notice an import
    assert main(["study", "run", "binomial_coverage", "--workers", "1", "--seed", "1",
                 "--method", f"{module}:ci", "--out", str(tmp_path / "explicit")]) == 0
    assert marker.exists()
    sys.modules.pop(module, None)


# Addresses that fail to parse, name no network scheme, or reach nothing; each in its own
# interpreter, all at once (the unreachable one waits for the connect timeout).
SCHEDULERS = ["not an address", "tcp://", "tcp://host:notaport", "tcp://127.0.0.1:1",
              "inproc://x", "ucx://host:1", "TCP://127.0.0.1:1", "tls://127.0.0.1:1"]


@pytest.mark.slow
def test_a_bad_scheduler_is_one_line_and_nothing_at_interpreter_exit(tmp_path):
    runs = {address: subprocess.Popen(
        [sys.executable, "-m", "studies.cli", "study", "run", "binomial_coverage", "--workers",
         "1", "--scheduler", address, "--out", str(tmp_path / str(i))],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i, address in enumerate(SCHEDULERS)}
    for i, (address, process) in enumerate(runs.items()):
        out, err = process.communicate(timeout=120)
        assert process.returncode == 2, (address, err)
        assert out == "" and err.count("\n") == 1, (address, err)
        assert err.startswith(f"{PREFIX}`scheduler` ") and repr(address) in err, (address, err)
        assert not (tmp_path / str(i)).exists()  # no half-made run directory


def test_bad_input_exits_2_in_a_real_interpreter_too(world):
    done = subprocess.run(
        [sys.executable, "-m", "studies.cli", "study", "report", world.path("<run>"), "--out",
         world.path("<file>/sub")], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.startswith(f"{PREFIX}argument --out: ") and done.stderr.count("\n") == 1


# A confidence level whose one-sided tail rounds to 1 is valid, and gets a result.
@pytest.mark.parametrize("argv", [
    ["f1", "--tp", "1", "--fp", "0", "--fn", "0", "--tn", "0", "--method", "delta",
     "--confidence-level", "1e-17"],
    ["sample-size", *COUNTS, "--target", "0.6", "--draws", "100", "--seed", "1",
     "--confidence-level", "1e-17"],
])
def test_a_confidence_level_below_2_to_the_minus_53(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    assert (status == 0 and out) or (status == 2 and "confidence" in err), err


def test_outcomes_per_command(capsys):
    """The calls the property tests tried, per command and outcome (printed for the record)."""
    if not OUTCOMES:
        pytest.skip("no property test ran in this session")
    lines = [f"{'command':<15}{'outcome':<36}{'calls':>6}"]
    lines += [f"{name:<15}{outcome:<36}{n:>6}" for (name, outcome), n in sorted(OUTCOMES.items())]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    ran = {name for name, _ in OUTCOMES}
    assert ran == set(COMMANDS), set(COMMANDS) - ran
