"""The progress of `study run`: the studies running, their cells, a time left per study."""

from __future__ import annotations

import io
import threading

import pytest
import tqdm.std

from studies.cli.progress import LOG_EVERY, Progress
from studies.engine import Grid, run
from studies.suite import get_study


@pytest.fixture
def clock(monkeypatch):
    """tqdm's clock, set by hand (seconds)."""
    now = [100.0]
    monkeypatch.setattr(tqdm.std, "time", lambda: now[0])
    return now


def _fast_then_slow(progress: Progress, clock: list[float]) -> None:
    """100 cells of 0.125 s, then the first of 4 cells that take 40 s each."""
    progress.task("fast", 0, 100)
    progress.task("slow", 0, 4)
    progress(0, 104)
    for done in range(1, 101):
        clock[0] += 0.125
        progress.task("fast", done, 100)
        progress(done, 104)
    clock[0] += 40.0
    progress.task("slow", 1, 4)
    progress(101, 104)


def test_a_log_names_the_study_running_and_times_its_own_cells(clock):
    stream = io.StringIO()  # not a terminal: plain lines
    progress = Progress(stream, refresh=None)
    _fast_then_slow(progress, clock)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "  0% 0/104 cells, elapsed 00:00, ?cell/s, left ?; running: fast 0/100"
    assert lines[5].endswith("left 00:06; running: fast 52/100")
    # The run's mean (52.5 s for 101 cells) would leave 1.6 s for the 3 slow cells; at the
    # slow study's own 40 s per cell they take two minutes.
    assert lines[-1] == (" 97% 101/104 cells, elapsed 00:52,  1.92cell/s, left 02:00; "
                         "running: slow 1/4")


def test_while_no_cell_finishes_the_line_is_redrawn_and_the_time_left_grows(clock):
    stream = io.StringIO()
    progress = Progress(stream, refresh=0.01)
    _fast_then_slow(progress, clock)
    written = len(stream.getvalue().splitlines())
    clock[0] += LOG_EVERY + 10.0  # 40 s more without a cell: the slow cells take 80 s each
    drawn = threading.Event()
    for _ in range(500):
        if len(stream.getvalue().splitlines()) > written:
            drawn.set()
            break
        drawn.wait(0.01)
    progress.close()
    assert drawn.is_set()
    assert stream.getvalue().splitlines()[written] == (
        " 97% 101/104 cells, elapsed 01:32,  1.09cell/s, left 04:00; running: slow 1/4")
    assert progress.ticker is not None and not progress.ticker.is_alive()


def test_a_terminal_bar_names_the_studies_running():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(stream, refresh=None)
    for name in ("a", "b", "c", "d", "e"):
        progress.task(name, 0, 2)
    progress(0, 10)
    for name in ("a", "b", "c", "d", "e"):  # every study under way: the first three named
        progress.task(name, 1, 2)
    progress.bar.mininterval = 0  # draw every update
    progress(5, 10)
    assert "5/10 cells" in stream.getvalue()
    assert "running: a 1/2, b 1/2, c 1/2, 2 more]" in stream.getvalue()
    progress(10, 10)
    assert progress.bar.disable  # closed at the last cell


def test_the_engine_reports_each_task_with_its_study_and_cells():
    tasks: list[tuple[str, int, int]] = []
    cells: list[tuple[int, int]] = []
    run([get_study("binomial_coverage"), get_study("mean_bias")], rng=1, workers=1,
        on_task=lambda *found: tasks.append(found), on_cell=lambda *found: cells.append(found))
    sizes = {"binomial_coverage": 12, "mean_bias": 9}
    assert tasks[:2] == [("binomial_coverage", 0, 12), ("mean_bias", 0, 9)]
    # after the two announcements, one call per task, each before its on_cell call
    assert len(tasks) - 2 == len(cells) - 1
    done: dict[str, int] = {name: 0 for name in sizes}
    for (name, count, of), (total_done, total) in zip(tasks[2:], cells[1:], strict=True):
        assert of == sizes[name] and count > done[name]
        done[name] = count
        assert total_done == sum(done.values()) and total == 21
    assert done == sizes


def test_each_later_round_of_a_run_in_rounds_has_a_bar_of_its_own():
    stream = io.StringIO()
    progress = Progress(stream, refresh=None)
    stepped = Grid({"distribution": ["normal", "lognormal"], "n": [5, 20]}, n_replicates=300,
                   rounds=4)
    run([get_study("mean_bias")], grid=stepped, rng=3, workers=1, on_cell=progress,
        on_task=progress.task)
    lines = stream.getvalue().splitlines()
    starts = [line for line in lines if line.lstrip().startswith("0% 0/")]
    # round 1's 4 cells, then the cells the later rounds raise, each round from 0
    assert len(starts) >= 2 and starts[0].startswith("  0% 0/4 cells")
    assert all("left -" not in line for line in lines)
    assert lines[-1].startswith("100% ")
