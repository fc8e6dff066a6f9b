"""The figures laid out once before saving (`studies.report.plots._lay_out`) read as the figures
`Figure.savefig` lays out itself: every panel in the same place, every text, tick mark, marker
and line at the same spot, the log axes' minor ticks drawn as one line of marks each."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from studies.report import plots

USE = re.compile(r"<use [^>]*>")
TEXT = re.compile(r"<text\b[^>]*>[^<]*</text>")
PATH = re.compile(r'<path d="[^"]*"')


def frame() -> pd.DataFrame:
    """Two methods' coverage and width over a wide positive grid (a log x axis with minor
    ticks), a panel per design."""
    rows: list[dict[str, Any]] = []
    for design in ("srs", "stratified", "cluster"):
        for n in (5, 40, 300, 2000):
            for k, method in enumerate(("delta", "bootstrap")):
                for measure, value in (("coverage", 0.9 + 0.01 * k), ("width", 1.0 / n)):
                    rows.append({"design": design, "n": n, "confidence_level": 0.95,
                                 "method": method, "measure": measure, "value": value,
                                 "mcse": 0.01 * value, "n_replicates": 1000})
    return pd.DataFrame(rows)


def marks(document: str) -> Counter[str]:
    """What a reader sees of a document: its markers (tick marks, data markers; each a `use`
    of a marker path, at its place) and its texts, and its paths (lines, grid lines, bars),
    counted. Clip path ids are left out: they hash the clip box to the last bit."""
    return Counter([*USE.findall(document), *TEXT.findall(document),
                    *PATH.findall(document)])


FIGURES: list[tuple[str, Callable[[pd.DataFrame], str]]] = [
    ("log axis", lambda f: plots.measure_by(f, measure="width", x="n", panel_by="design",
                                            figure_id="log")),
    ("coverage", lambda f: plots.coverage_against(f[f["design"] == "srs"], x="n",
                                                  figure_id="cov")),
    ("heat map", lambda f: plots.heat_map(f, measure="coverage", method="delta", rows="design",
                                          columns="n", figure_id="heat")),
    ("bars", lambda f: plots.summary_bars(
        f[(f["measure"] == "width") & (f["method"] == "delta")], x="n", bars=["value"],
        error={"value": "mcse"}, panel_by="design", log_y=True, figure_id="bars")),
]


@pytest.mark.parametrize(("name", "draw"), FIGURES, ids=[name for name, _ in FIGURES])
def test_a_figure_laid_out_once_reads_as_the_one_savefig_lays_out(
        monkeypatch: pytest.MonkeyPatch, name: str, draw: Callable[[pd.DataFrame], str]) -> None:
    ours = draw(frame())
    monkeypatch.setattr(plots, "_lay_out", lambda fig: None)  # savefig's own layout
    theirs = draw(frame())
    assert marks(ours) == marks(theirs)


def test_the_minor_ticks_of_a_log_axis_are_drawn_as_one_line_of_marks_per_panel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ours = FIGURES[0][1](frame())
    monkeypatch.setattr(plots, "_lay_out", lambda fig: None)
    theirs = FIGURES[0][1](frame())
    minor = re.compile(r'<path id="(log-m[0-9a-f]+)" d="M 0 0 \nL 0 2 \n"')
    (marker,) = set(minor.findall(theirs))
    assert set(minor.findall(ours)) == {marker}
    # savefig draws a tick group per minor tick; here one group of marks per panel
    assert theirs.count(f'href="#{marker}"') == ours.count(f'href="#{marker}"') > 3
    assert ours.count(f'href="#{marker}"') > ours.count(f'<path id="{marker}"')
    assert len(re.findall(r'<g id="log-xtick_\d+">', ours)) < len(
        re.findall(r'<g id="log-xtick_\d+">', theirs))


def test_a_figure_laid_out_once_has_no_layout_engine_left_and_keeps_its_panels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    kept: list[Any] = []
    monkeypatch.setattr(plots, "_close", kept.append)
    plots.measure_by(frame(), measure="width", x="n", panel_by="design")
    (fig,) = kept
    assert fig.get_layout_engine() is None
    boxes = np.array([ax.get_position().bounds for ax in fig.axes])
    assert len(boxes) == 3 and (boxes[:, 2] > 0.2).all() and (boxes[:, 3] > 0.4).all()
    assert all(not ax.spines[side].get_in_layout() for ax in fig.axes
               for side in ("top", "right"))
