"""Packed groups read from a run store when used, and their cells selected by a query.

A grid of millions of packed cells is judged and reported without holding it: each group's
arrays stay in the store until a reader comes to them (`StoredArrays`), and a reader asks
only for the cells its query selects (`StudyResult.frames(where=...)`, `group_regions`). These
check that the rows are the same as from the groups in memory, whatever the query.
"""

from __future__ import annotations

import dataclasses
import io
import math
import sqlite3

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studies.engine import StudyResult, run
from studies.engine.reading import StoredArrays, read_run
from studies.engine.regions import region_mask
from studies.engine.results import PackedGroup, group_regions, pack_arrays, unpack_arrays
from studies.suite import get_study


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A packed study run into a store, and the same run kept in memory."""
    study = dataclasses.replace(get_study("binomial_coverage"), pack_groups=True)
    out = tmp_path_factory.mktemp("packed") / "run"
    kept = run([study], rng=3, workers=1)[study.name]
    run([study], rng=3, workers=1, out=out)
    return read_run(out).results[study.name], kept


def test_a_stored_group_reads_its_arrays_from_the_store_when_used(stored):
    from_store, in_memory = stored
    assert from_store.groups and all(isinstance(g.values, StoredArrays)
                                     for g in from_store.groups)
    for group, kept in zip(from_store.groups, in_memory.groups, strict=True):
        np.testing.assert_array_equal(group.positions, kept.positions)
        assert list(group.values) == list(kept.values)
        for method, found in kept.values.items():
            for measure, values in found.items():
                np.testing.assert_array_equal(group.values[method][measure], values)
    pd.testing.assert_frame_equal(from_store.to_frame(), in_memory.to_frame())


def test_a_moved_store_is_a_clear_error(tmp_path):
    study = dataclasses.replace(get_study("binomial_coverage"), pack_groups=True)
    run([study], rng=3, workers=1, out=tmp_path / "run")
    group = read_run(tmp_path / "run").results[study.name].groups[0]
    (tmp_path / "run").rename(tmp_path / "moved")
    with pytest.raises(ValueError, match="no longer exists") as raised:
        dict(group.values)
    assert "damaged" not in str(raised.value)  # moved, not damaged


def test_a_store_named_by_a_relative_path_is_read_from_anywhere(tmp_path, monkeypatch):
    study = dataclasses.replace(get_study("binomial_coverage"), pack_groups=True)
    monkeypatch.chdir(tmp_path)
    run([study], rng=3, workers=1, out="run")
    group = read_run("run").results[study.name].groups[0]
    monkeypatch.chdir(tmp_path.parent)
    assert list(group.values)


def test_a_store_written_again_at_the_same_path_is_read_afresh(tmp_path):
    """Reading keeps a connection and the last group between reads: neither may outlive the
    file. Results read from a replaced store say so; results of the new one are its own."""
    import shutil

    study = dataclasses.replace(get_study("binomial_coverage"), pack_groups=True)

    def groups(p):
        shutil.rmtree(tmp_path / "run", ignore_errors=True)
        grid = dataclasses.replace(study.grids["quick"], parameters={
            **study.grids["quick"].parameters, "p": [p]})
        run([study], grid=grid, rng=3, workers=1, out=tmp_path / "run")
        return read_run(tmp_path / "run").results[study.name].groups

    old = groups(0.3)
    first = [np.array(g.values["wald"]["width"]) for g in old]
    new = groups(0.4)
    with pytest.raises(ValueError, match="no longer exists"):
        dict(old[-1].values)
    changed = [np.array(g.values["wald"]["width"]) for g in new]
    assert not any(np.array_equal(a, b) for a, b in zip(first, changed, strict=True))
    again = groups(0.3)
    assert all(np.array_equal(np.array(g.values["wald"]["width"]), a)
               for g, a in zip(again, first, strict=True))


def test_a_group_stored_as_an_npz_archive_is_still_read(stored):
    """Stores written before the arrays were laid out one after the other hold an .npz."""
    group = stored[1].groups[0]
    buffer = io.BytesIO()
    np.savez(buffer, positions=group.positions,
             **{f"{m}/{k}": v for m, found in group.values.items() for k, v in found.items()})
    for blob in (buffer.getvalue(), pack_arrays(group.positions, group.values)):
        positions, values = unpack_arrays(io.BytesIO(blob))
        np.testing.assert_array_equal(positions, group.positions)
        assert {m: list(v) for m, v in values.items()} == {
            m: list(v) for m, v in group.values.items()}
        head, nothing = unpack_arrays(io.BytesIO(blob), values=False)
        np.testing.assert_array_equal(head, group.positions)
        assert nothing == {}


def test_the_positions_are_read_without_the_values(stored, tmp_path):
    """Reading a store reads each group's positions only: its values stay on disk."""
    from_store, _ = stored
    reads = []
    original = sqlite3.Blob.read

    class Counting:
        def __init__(self, blob):
            self.blob = blob

        def read(self, *args):
            found = original(self.blob, *args)
            reads.append(len(found))
            return found

        def seek(self, *args):
            return self.blob.seek(*args)

    group = from_store.groups[-1]
    arrays = pack_arrays(group.positions, {m: dict(v) for m, v in group.values.items()})
    db = sqlite3.connect(tmp_path / "one.sqlite")
    db.execute("CREATE TABLE t (v BLOB)")
    db.execute("INSERT INTO t VALUES (?)", (arrays,))
    with db.blobopen("t", "v", 1, readonly=True) as blob:
        positions, _ = unpack_arrays(Counting(blob), values=False)
    np.testing.assert_array_equal(positions, group.positions)
    assert sum(reads) < len(arrays) / 2  # the header and the positions, not the values


QUERIES = ["", "n >= 20", "p <= 0.1", "confidence_level == 0.95 and n in [10, 50]",
           "n * p >= 5 or p > 0.4", "n > 10000", "`n` > 20"]


@pytest.mark.parametrize("where", QUERIES)
def test_frames_of_a_region_are_the_rows_of_its_cells(stored, where):
    from_store, in_memory = stored
    whole = in_memory.to_frame()
    params = [c for c in whole.columns if c in ("n", "p", "confidence_level")]
    expected = whole[region_mask(whole[params], where)].reset_index(drop=True)
    for result in (from_store, in_memory):
        pieces = list(result.frames(where=where, batch_rows=50))
        found = (pd.concat(pieces, ignore_index=True) if pieces
                 else pd.DataFrame(columns=whole.columns))
        if expected.empty:
            assert found.empty
        else:
            pd.testing.assert_frame_equal(found, expected)


def test_a_method_and_measure_of_a_region_are_built_alone(stored):
    _, in_memory = stored
    whole = in_memory.to_frame()
    method = whole["method"].iloc[0]
    found = pd.concat(in_memory.frames(methods=[method], measures=["coverage"],
                                       where="n >= 20"), ignore_index=True)
    expected = whole[(whole["method"] == method) & (whole["measure"] == "coverage")
                     & (whole["n"] >= 20)].reset_index(drop=True)
    pd.testing.assert_frame_equal(found, expected)


_LEVELS = st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True)


@settings(max_examples=60, deadline=None)
@given(shared=st.integers(0, 5), a=_LEVELS, b=_LEVELS,
       c=st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3, unique=True),
       where=st.sampled_from(["a > 2", "b <= 1 and c == 'y'", "s + a > 4", "c != 'x' or b == 3",
                              "a * b >= s", "s == 2"]))
def test_the_cells_a_query_selects_in_a_group_are_those_of_its_rows(shared, a, b, c, where):
    """The query runs once on the parameters it reads; it selects the cells it would select
    on one row per cell."""
    axes = {"a": a, "b": b, "c": c}
    size = len(a) * len(b) * len(c)
    group = PackedGroup(study="s", key="k", shared={"s": shared}, axes=axes,
                        positions=np.arange(size), values={}, errors={})
    rows = pd.DataFrame({name: group.column(name) for name in ("s", "a", "b", "c")})
    other = dataclasses.replace(group, shared={"s": shared + 1})
    found = group_regions([group, other], where)
    np.testing.assert_array_equal(found[0], region_mask(rows, where))
    np.testing.assert_array_equal(found[1], region_mask(rows.assign(s=shared + 1), where))


def test_batches_hold_their_groups_arrays_and_cover_the_result(stored):
    from_store, in_memory = stored
    parts = list(from_store.batches(cells=100))
    assert sum(len(p.groups) for p in parts) == len(from_store.groups)
    assert all(isinstance(g.values, dict) for p in parts for g in p.groups)
    joined = StudyResult(from_store.study, groups=tuple(g for p in parts for g in p.groups),
                         parameters=from_store.parameters)
    pd.testing.assert_frame_equal(joined.to_frame(), in_memory.to_frame())


@given(start=st.integers(0, 10**9), size=st.integers(1, 50), gap=st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_a_group_sent_to_another_process_arrives_whole(start, size, gap):
    """Groups go to worker processes for judging: consecutive positions travel as a range
    (a full grid's would be 72 MB of integers), any others as they are."""
    import pickle

    positions = start + np.arange(size, dtype=np.int64) * (1 + gap)
    group = PackedGroup("s", "k", {"alternative": "two-sided"}, {"n": list(range(size))},
                        positions, {"m": {"coverage": np.linspace(0, 1, size)}}, {}, 1.5)
    sent = pickle.dumps(group)
    back = pickle.loads(sent)
    assert back.positions.dtype == np.int64
    np.testing.assert_array_equal(back.positions, group.positions)
    np.testing.assert_array_equal(back.values["m"]["coverage"], group.values["m"]["coverage"])
    assert (back.study, back.key, back.shared, back.axes, back.errors, back.seconds) == (
        group.study, group.key, group.shared, group.axes, group.errors, group.seconds)
    if size >= 4:  # a range, not the integers
        assert (group.positions.tobytes() in sent) == (gap > 0)


def test_a_stored_grid_is_sent_as_references_and_shared_axes(stored):
    """A stored result goes to worker processes as references to its store: its groups'
    axes, decoded once, are pickled once."""
    import pickle

    from_store, _ = stored
    assert all(g.axes is from_store.groups[0].axes for g in from_store.groups
               if g.axes == from_store.groups[0].axes)
    back = pickle.loads(pickle.dumps(from_store))
    pd.testing.assert_frame_equal(back.to_frame(), from_store.to_frame())


def test_claims_judged_in_worker_processes_are_those_judged_here(tmp_path, monkeypatch):
    """A stored grid of packed groups is judged in worker processes, one claim per task:
    the verdicts, in claim order, are those judged in this process."""
    from studies.pipeline import publication

    study = dataclasses.replace(get_study("binomial_coverage"), pack_groups=True)
    run([study], rng=3, workers=1, out=tmp_path / "run")
    stored = read_run(tmp_path / "run")
    here = publication.judge(stored.results, [study], "quick")[study.name]

    def not_here(*args, **kwargs):
        raise AssertionError("judged in this process")

    monkeypatch.setattr(publication.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(publication, "judge", not_here)
    sent = publication.publish(stored, [study], out=tmp_path / "report").verdicts[study.name]
    assert [v.claim.name for v in sent] == [c.name for c in study.claims]
    assert [(v.status, v.compared, v.k, v.familywise_error, v.nearest) for v in sent] == [
        (v.status, v.compared, v.k, v.familywise_error, v.nearest) for v in here]
    for mine, theirs in zip(sent, here, strict=True):
        pd.testing.assert_frame_equal(mine.failures, theirs.failures)


def test_page_tables_put_together_from_group_shares_are_the_same(stored):
    """A run computes each packed group's share of its page tables as the group finishes
    (`group_tables`): put together, with or without some shares, they are the tables
    computed at the end, to the last bit."""
    from studies.report.pages import group_tables, page_tables

    from_store, _ = stored
    study = dataclasses.replace(get_study("binomial_coverage"), pack_groups=True,
                                summary=get_study("coverage_proportion").summary)
    whole = page_tables(study, from_store)
    assert whole.headline and not whole.bands.empty
    for chosen in (from_store.groups, from_store.groups[::2], from_store.groups[:1]):
        pieces = {g.key: group_tables(g) for g in chosen}
        found = page_tables(study, from_store, pieces)
        assert found.headline == whole.headline
        pd.testing.assert_frame_equal(found.bands, whole.bands, check_exact=True)
    # a share computed for another query is not used
    stale = {g.key: dataclasses.replace(group_tables(g), where="n > 0", bands=[])
             for g in from_store.groups}
    pd.testing.assert_frame_equal(page_tables(study, from_store, stale).bands, whole.bands,
                                  check_exact=True)


@given(parts=st.lists(st.lists(st.one_of(st.floats(0, 1), st.just(math.nan)), max_size=20),
                      min_size=1, max_size=6))
@settings(max_examples=80, deadline=None)
def test_ranges_merged_part_by_part_are_the_ranges_of_the_parts_added(parts):
    """A group's `Range` merged into the study's adds what adding its values would: the
    same counts, extremes and total, to the last bit."""
    from studies.report.tables import Range

    added, merged = Range(), Range()
    for part in parts:
        values = np.array(part, dtype=float)
        added.add(values, 0.0)
        one = Range()
        one.add(values, 0.0)
        merged.merge(one)
    assert vars(merged) == pytest.approx(vars(added), rel=0, abs=0, nan_ok=True)
    assert math.copysign(1, merged.total) == math.copysign(1, added.total)


def test_a_run_streaming_its_groups_writes_the_page_its_store_gives(tmp_path, monkeypatch):
    """While a packed study runs, its groups' shares of the page tables and of the summary
    (a `GroupSummary`) are computed beside it; the page and the summary are those the
    stored run gives when judged afresh."""
    from studies.pipeline import publication
    from studies.report.pages import untimed

    study = get_study("coverage_proportion")
    quick = study.grids["quick"]
    grid = dataclasses.replace(quick, parameters={
        **quick.parameters, "n": [5, 10, 30], "p": list(quick.parameters["p"])[::9]})
    streamed: list[str] = []
    original = publication._SideWork.stream

    def counted(self, results, studies):
        streamed.extend(r.key for r in results if isinstance(r, PackedGroup))
        return original(self, results, studies)

    monkeypatch.setattr(publication.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(publication._SideWork, "stream", counted)
    ran = publication.run_suite([study], grid=grid, rng=3, workers=1, out=tmp_path / "run")
    assert sorted(streamed) == sorted(g.key for g in ran.results[study.name].groups)
    again = publication.publish(tmp_path / "run", [study], out=tmp_path / "again")
    page, summary = f"{study.name}.html", f"{study.name}.summary.csv"
    assert untimed((ran.index.parent / page).read_text()) == untimed(
        (again.index.parent / page).read_text())
    assert (ran.index.parent / summary).read_bytes() == (again.index.parent / summary
                                                         ).read_bytes()
