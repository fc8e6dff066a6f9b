"""Progress of a long run: a tqdm bar on a terminal, a few plain lines in a log.

The display counts the run's cells (done of all, elapsed time, rate) and names the studies
running with their own cells done (``running: coverage_f1 12/40``). The time left is summed
study by study: each unfinished study's cells left times the time per cell it took so far
(since it began), so a study of slow cells after many fast ones does not sit at "left 00:02".
While no cell finishes, the display is redrawn every `REFRESH` seconds and the estimate grows
with the wait. A study with no cell finished yet is estimated at the run's mean time per cell
(``?`` before any cell finishes). The rates count only the cells computed by this command
(tqdm's ``initial``), so a resumed run's estimate is not optimistic.

On a terminal the display is a bar. In a log (CI, a file) a bar's carriage returns are noise,
so the same line is printed as plain text when the run starts, at every tenth of it, and at
least every `LOG_EVERY` seconds, cells finishing or not.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from typing import TextIO

from tqdm import tqdm

__all__ = ["LOG_EVERY", "LOG_FORMAT", "REFRESH", "TERMINAL_FORMAT", "Progress"]

LOG_EVERY = 30.0
REFRESH = 1.0
# The studies named on the line at most (a suite runs many at its boundaries).
SHOWN_STUDIES = 3
# A line of a log: no bar, the numbers in words; the postfix is the time left and the studies.
LOG_FORMAT = "{percentage:3.0f}% {n_fmt}/{total_fmt} cells, elapsed {elapsed}, {rate_fmt}{postfix}"
TERMINAL_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} cells [{elapsed}, {rate_fmt}{postfix}]"


@dataclass
class _Study:
    """One study's cells: all, done, done before this command, and when it began (None: no
    cell of it finished yet)."""

    cells: int
    done: int
    initial: int
    since: float | None = None


class Progress:
    """The progress display of `studies.engine.run`: called as ``on_cell(done, total)``;
    its `task` method is ``on_task(study, done, cells)``.

    Parameters
    ----------
    stream : text stream
        Where to draw (a terminal: a bar; anything else: plain lines).
    refresh : float or None
        Seconds between redraws while no cell finishes; None redraws only when cells finish.
    """

    def __init__(self, stream: TextIO, *, refresh: float | None = REFRESH) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.bar: tqdm[None] | None = None
        self.last_tenth = -1
        self.last_line = 0.0
        self.studies: dict[str, _Study] = {}
        self.last_event = 0.0
        self.done = 0
        self.refresh = refresh
        # the redrawing thread and the run's callbacks share the bar and the studies
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.ticker: threading.Thread | None = None

    def task(self, study: str, done: int, cells: int) -> None:
        """Record that ``done`` of the ``cells`` of ``study`` are finished."""
        with self.lock:
            now = self._now()
            if self.stopped.is_set():  # the first news of a later round: its cells anew,
                self.studies.pop(study, None)  # on the clock of the round's bar
                now = 0.0
            found = self.studies.setdefault(study, _Study(cells, done, done))
            if found.since is None and done > found.initial:
                found.since = self.last_event  # it began when a worker was last freed
            found.done = done
            if self.bar is not None:
                self.last_event = now

    def __call__(self, done: int, total: int) -> None:
        if self.bar is not None and self.stopped.is_set() and done < total:
            # a later round of a run in rounds (`studies.engine.rounds`): a bar of its own
            self.bar, self.ticker, self.last_tenth = None, None, -1
            self.stopped.clear()
        with self.lock:
            self.done = done
            if self.bar is None:
                # the first call comes before any work: cells already stored are the initial
                self.bar = tqdm(total=total, initial=done, unit="cell", smoothing=0,
                                file=self.stream if self.tty else io.StringIO(),
                                bar_format=TERMINAL_FORMAT if self.tty else LOG_FORMAT,
                                dynamic_ncols=True, mininterval=0.5)
                if self.refresh is not None and done < total:
                    self.ticker = threading.Thread(target=self._tick, daemon=True,
                                                   name="evalcert-progress")
                    self.ticker.start()
            self.bar.set_postfix_str(self._postfix(), refresh=False)
            self.bar.update(done - self.bar.n)
            self._log(10 * done // max(total, 1))
        if done >= total:
            self.close()

    def close(self) -> None:
        """Stop redrawing and end the bar (a new line on a terminal)."""
        self.stopped.set()
        if self.ticker is not None and self.ticker is not threading.current_thread():
            self.ticker.join()
        with self.lock:
            if self.bar is not None:
                self.bar.close()

    def _tick(self) -> None:
        """Redraw every `refresh` seconds: the time left grows while nothing finishes."""
        assert self.refresh is not None
        while not self.stopped.wait(self.refresh):
            with self.lock:
                if self.bar is None or self.bar.disable:
                    continue
                self.bar.set_postfix_str(self._postfix(), refresh=False)
                if self.tty:
                    self.bar.refresh()
                else:
                    self._log(self.last_tenth)

    def _log(self, tenth: int) -> None:
        """In a log, the line at a new tenth of the run or `LOG_EVERY` seconds after the last."""
        assert self.bar is not None
        now = self._now()
        if not self.tty and (tenth > self.last_tenth or now - self.last_line >= LOG_EVERY):
            self.last_tenth, self.last_line = tenth, now
            self.stream.write(str(self.bar) + "\n")
            self.stream.flush()

    def _now(self) -> float:
        """Seconds since the bar began (tqdm's clock); 0 before."""
        return float(self.bar.format_dict["elapsed"]) if self.bar is not None else 0.0

    def _postfix(self) -> str:
        """``left 12:00; running: a 3/40, b 0/8``."""
        left = self._left(self._now())
        text = f"left {'?' if left is None else tqdm.format_interval(left)}"
        first = next((name for name, s in self.studies.items() if s.done < s.cells), None)
        running = [f"{name} {s.done}/{s.cells}" for name, s in self.studies.items()
                   if s.done < s.cells and (s.since is not None or name == first)]
        if len(running) > SHOWN_STUDIES:
            running[SHOWN_STUDIES:] = [f"{len(running) - SHOWN_STUDIES} more"]
        return f"{text}; running: {', '.join(running)}" if running else text

    def _left(self, now: float) -> float | None:
        """Seconds left: per unfinished study, its cells left times its time per cell so far
        (the run's mean for a study with none finished); None before any cell finishes."""
        assert self.bar is not None
        studies = list(self.studies.values()) or [  # a caller reporting no study: one whole
            _Study(int(self.bar.total), self.done, int(self.bar.initial), 0.0)]
        ran = sum(s.done - s.initial for s in studies)
        mean = now / ran if ran else None
        left = 0.0
        for s in studies:
            if s.done >= s.cells:
                continue
            ran_here = s.done - s.initial
            per_cell = (now - s.since) / ran_here if s.since is not None and ran_here else mean
            if per_cell is None:
                return None
            left += (s.cells - s.done) * per_cell
        return left
