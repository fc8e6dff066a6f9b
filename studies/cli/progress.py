"""Progress of a long run: a tqdm bar on a terminal, a few plain lines in a log.

On a terminal the bar shows cells done, the elapsed time, the rate and the remaining time. In
a log (CI, a file) a bar's carriage returns are noise, so the same tqdm line is printed as
plain text when the run starts, at every tenth of it, and at least every `LOG_EVERY` seconds
while cells keep finishing. The rate counts only the cells
computed by this command (tqdm's ``initial``), so a resumed run's estimate of the time left
is not optimistic.
"""

from __future__ import annotations

import io
from typing import TextIO

from tqdm import tqdm

__all__ = ["LOG_EVERY", "LOG_FORMAT", "Progress"]

LOG_EVERY = 30.0
# A line of a log: no bar, the numbers in words.
LOG_FORMAT = ("{percentage:3.0f}% {n_fmt}/{total_fmt} cells, elapsed {elapsed}, "
              "left {remaining}, {rate_fmt}")


class Progress:
    """``on_cell(done, total)`` callback for `studies.engine.run` that draws the progress."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.bar: tqdm[None] | None = None
        self.last_tenth = -1
        self.last_line = 0.0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            # the first call comes before any work: cells already stored are the initial count
            self.bar = tqdm(total=total, initial=done, unit="cell", smoothing=0,
                            file=self.stream if self.tty else io.StringIO(),
                            bar_format=None if self.tty else LOG_FORMAT,
                            dynamic_ncols=True, mininterval=0.5)
        self.bar.update(done - self.bar.n)
        tenth = 10 * done // max(total, 1)
        now = self.bar.format_dict["elapsed"]
        if not self.tty and (tenth > self.last_tenth or now - self.last_line >= LOG_EVERY):
            self.last_tenth, self.last_line = tenth, now
            self.stream.write(str(self.bar) + "\n")
            self.stream.flush()
        if done >= total:
            self.close()

    def close(self) -> None:
        """End the bar (a new line on a terminal)."""
        if self.bar is not None:
            self.bar.close()
