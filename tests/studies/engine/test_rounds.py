"""Runs in rounds (`studies.engine.rounds`): which cells are raised, reproducibility across
workers and backends, a resume mid-round, the time budget, and the split of the looks."""

import dataclasses
import html
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from studies.cli.main import main
from studies.engine import Claim, Grid, evaluate_claims, replicates, run, runner
from studies.engine.design import MAX_ROUNDS
from studies.engine.performance import Estimates
from studies.engine.reading import read_head
from studies.engine.rounds import Look, level_of, still_needed
from studies.engine.seeding import cell_seed
from studies.suite import get_study

MEAN = get_study("mean_bias")
# four cells whose claims need more than the declared replicates: the schedule 300 .. 2400
STEPPED = Grid({"distribution": ["normal", "lognormal"], "n": [5, 20]}, n_replicates=300,
               rounds=4)
# one claim decided at once (a resolution no noise hides), one that needs more replicates
DECIDED = Claim("mean-unbiased-coarsely", "The mean's bias is within 1 of 0.", ("mean",),
                "bias", "within", target=0.0, where="distribution == 'normal'", resolution=1.0)
OPEN = Claim("median-biased-for-skewed-data", "The median is biased low for skewed data.",
             ("median",), "bias", "at_most", target=0.0, margin=-0.1, resolution=0.05,
             where="distribution != 'normal'")
SPLIT = dataclasses.replace(MEAN, claims=(DECIDED, OPEN))
# a mean over n decided at once, beside a claim of one cell that needs more replicates
ON_AVERAGE = Claim("mean-unbiased-on-average", "Averaged over n, the mean's bias is within 1 "
                   "of 0.", ("mean",), "bias", "within", target=0.0, mean_over=("n",),
                   resolution=1.0)
ONE_CELL = dataclasses.replace(OPEN, name="median-biased-for-skewed-data-at-5",
                               where="distribution != 'normal' and n == 5")


def _replicates(result):
    return {(c.params["distribution"], c.params["n"]): c.performance["mean"].n_replicates
            for c in result.cells}


def _looks(directory):
    with sqlite3.connect(directory / "run.sqlite") as db:
        rows = db.execute("SELECT study, round, statuses, raised FROM rounds ORDER BY round")
        return [(s, r, json.loads(a), json.loads(b)) for s, r, a, b in rows]


def _frame(results):
    return results.to_frame().sort_values(["study", "position", "method", "measure"],
                                          ignore_index=True)


@pytest.mark.parametrize("rounds", [0, MAX_ROUNDS + 1, 1.5, True])
def test_rounds_must_be_a_small_positive_integer(rounds):
    with pytest.raises(ValueError, match="`rounds` must be an integer from 1 to 8"):
        Grid({"n": [1]}, n_replicates=2, rounds=rounds)


def test_the_schedule_doubles_and_a_grid_of_one_round_is_recorded_as_before():
    assert Grid({"n": [1]}, n_replicates=25, rounds=4).schedule == (25, 50, 100, 200)
    assert "rounds" not in Grid({"n": [1]}, n_replicates=25).to_dict()
    assert Grid({"n": [1]}, n_replicates=25, rounds=2).to_dict()["rounds"] == 2
    assert [level_of((25, 50, 100), n) for n in (25, 50, 100)] == [1, 2, 3]


def test_a_level_has_its_own_stream_and_level_one_is_the_cells_own():
    first = cell_seed(7, "s", {"n": 1}).generate_state(4).tolist()
    assert cell_seed(7, "s", {"n": 1}, 1).generate_state(4).tolist() == first
    later = [cell_seed(7, "s", {"n": 1}, j).generate_state(4).tolist() for j in (2, 3)]
    assert first not in later and later[0] != later[1]


def test_extended_estimates_keep_both_rounds_in_order_and_drop_a_method_missing_in_one():
    a = replicates.pack({"m": Estimates(estimate=np.array([1.0, 2.0])),
                         "gone": Estimates(estimate=np.array([0.0, 0.0]))}, None)
    b = replicates.pack({"m": Estimates(estimate=np.array([3.0]))}, np.array([2]))
    both = replicates.extend(a, b)
    assert replicates.count(both) == 4
    assert replicates.per_replicate(both) == {"m": {"estimate": pytest.approx([1, 2, 3, 3])}}


def test_only_the_cells_of_an_open_claim_are_raised_and_a_decided_claim_spends_nothing(
        tmp_path):
    result = run([SPLIT], grid=STEPPED, rng=3, workers=1, out=tmp_path / "run")
    held = _replicates(result["mean_bias"])
    # the decided claim's cells (normal) keep the declared replicates
    assert held[("normal", 5)] == held[("normal", 20)] == 300
    assert held[("lognormal", 5)] > 300 and held[("lognormal", 20)] > 300
    looks = _looks(tmp_path / "run")
    assert [r for _, r, _, _ in looks] == list(range(1, len(looks) + 1))
    first = looks[0][2]
    assert first[DECIDED.name] == ["HOLDS", 600]
    # after it held, its replicates do not grow in any later look
    assert all(statuses[DECIDED.name] == ["HOLDS", 600] for _, _, statuses, _ in looks)
    assert set(looks[0][3]) <= {c.key for c in result["mean_bias"].cells
                                if c.params["distribution"] == "lognormal"}
    assert looks[-1][3] == {}


def test_a_cell_raised_by_one_claim_raises_the_other_cells_of_a_mean_it_is_in():
    # a mean judged with its cells at a mix of levels would be a look the union bound over the
    # schedule's levels does not count
    study = dataclasses.replace(MEAN, claims=(ON_AVERAGE, ONE_CELL))
    held = _replicates(run([study], grid=STEPPED, rng=3, workers=1)["mean_bias"])
    assert held[("lognormal", 5)] > 300
    assert held[("lognormal", 20)] == held[("lognormal", 5)]  # the other cell of its mean
    assert held[("normal", 5)] == held[("normal", 20)] == 300  # the other mean: not touched


def test_an_open_mean_raises_only_its_own_cells_and_the_claims_decided_means_stay():
    # "at every distribution", averaged over n: the normal data's mean decides at the declared
    # replicates, the lognormal data's (a larger SE) needs more: only its cells are raised
    study = dataclasses.replace(MEAN, claims=(dataclasses.replace(
        ON_AVERAGE, name="mean-unbiased-at-every-distribution", resolution=0.15),))
    result = run([study], grid=STEPPED, rng=3, workers=1)["mean_bias"]
    held = _replicates(result)
    assert held[("normal", 5)] == held[("normal", 20)] == 300
    assert held[("lognormal", 5)] == held[("lognormal", 20)] > 300
    (verdict,) = evaluate_claims(study.claims, result)
    assert verdict.status == "HOLDS"


def test_what_an_open_claim_still_needs_decides_it_and_half_of_it_does_not():
    fine = Claim("mean-unbiased-finely", "The mean's bias is within 1 of 0, told to 0.02.",
                 ("mean",), "bias", "within", target=0.0, resolution=0.02)
    study = dataclasses.replace(MEAN, claims=(fine,))
    one = Grid({"distribution": ["normal"], "n": [5]}, n_replicates=300)
    result = run([study], grid=one, rng=3, workers=1)["mean_bias"]
    (verdict,) = evaluate_claims(study.claims, result)
    assert verdict.status == "INCONCLUSIVE"
    needed = still_needed(fine, verdict, result, one)
    (cell,) = result.cells
    assert needed.core_seconds == pytest.approx(needed.replicates * cell.seconds / 300)
    total = 300 + needed.replicates
    assert total in [300 * 2 ** j for j in range(1, 24)]  # a level of the doubling schedule
    for held, status in ((total, "HOLDS"), (total // 2, "INCONCLUSIVE")):
        grid = dataclasses.replace(one, n_replicates=held)
        found = run([study], grid=grid, rng=3, workers=1)["mean_bias"]
        assert evaluate_claims(study.claims, found)[0].status == status
    assert still_needed(DECIDED, evaluate_claims([DECIDED], result)[0], result, one) is None


def test_the_looks_split_each_claims_false_alarm_rate_over_the_levels():
    result = run([MEAN], grid=STEPPED, rng=3, workers=1)["mean_bias"]
    assert result.looks == 4
    split = evaluate_claims(MEAN.claims, result, familywise_error=0.01)
    single = evaluate_claims(MEAN.claims, result, familywise_error=0.01, looks=1)
    for a, b in zip(split, single, strict=True):
        sides = 2 if a.claim.comparison == "within" else 1
        assert a.k == pytest.approx(stats.norm.isf(0.01 / (sides * a.compared * 4)))
        assert b.k == pytest.approx(stats.norm.isf(0.01 / (sides * b.compared)))


def test_rounds_give_the_same_results_on_one_and_two_workers_and_on_dask(tmp_path):
    one = run([MEAN], grid=STEPPED, rng=5, workers=1, out=tmp_path / "one")
    two = run([MEAN], grid=STEPPED, rng=5, workers=2, out=tmp_path / "two")
    assert max(_replicates(one["mean_bias"]).values()) > 300  # rounds did run
    pd.testing.assert_frame_equal(_frame(one), _frame(two), check_exact=True)
    assert _looks(tmp_path / "one") == _looks(tmp_path / "two")
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  protocol="tcp", host="127.0.0.1", scheduler_port=0,
                                  dashboard_address=None) as cluster:
        remote = run([MEAN], grid=STEPPED, rng=5, scheduler=cluster.scheduler_address,
                     out=tmp_path / "dask")
    pd.testing.assert_frame_equal(_frame(one), _frame(remote), check_exact=True)
    assert _looks(tmp_path / "one") == _looks(tmp_path / "dask")


def test_a_run_killed_mid_round_resumes_to_the_same_results(tmp_path, monkeypatch):
    whole = run([MEAN], grid=STEPPED, rng=9, workers=1, out=tmp_path / "whole")
    executed = runner.execute

    def killed_in_round_two(tasks, workers, client):
        later = [t for t in tasks if getattr(t, "level", 1) > 1]
        for done, results in enumerate(executed(tasks, workers, client)):
            if later and done == 1:
                raise KeyboardInterrupt
            yield results

    monkeypatch.setattr(runner, "execute", killed_in_round_two)
    with pytest.raises(KeyboardInterrupt):
        run([MEAN], grid=STEPPED, rng=9, workers=1, out=tmp_path / "cut")
    cut = _looks(tmp_path / "cut")
    assert len(cut) == 1 and cut[0][3]  # the first look was stored, its raises not all run
    monkeypatch.setattr(runner, "execute", executed)
    resumed = run([MEAN], grid=STEPPED, workers=1, out=tmp_path / "cut", resume=True)
    pd.testing.assert_frame_equal(_frame(whole), _frame(resumed), check_exact=True)
    assert _looks(tmp_path / "whole") == _looks(tmp_path / "cut")


def test_a_spent_time_budget_starts_no_further_round_and_the_report_says_so(tmp_path):
    out = tmp_path / "run"
    result = run([MEAN], grid=STEPPED, rng=3, workers=1, budget=1e-9, out=out)["mean_bias"]
    assert set(_replicates(result).values()) == {300}
    assert read_head(out).provenance.budget_cut == {"mean_bias": 2}
    assert main(["study", "report", str(out)]) == 1  # claims left open
    said = ("The run's time budget (--budget) ended the rounds of mean_bias before round 2: "
            "its claims still open were judged on the replicates they had")
    for page in ("index.html", "index.md", "summary.md", "mean_bias.html", "mean_bias.md"):
        assert said in " ".join(html.unescape((out / page).read_text()).split()), page
    # resumed without a budget, the rounds go on, and nothing is said of a cut
    resumed = run([MEAN], grid=STEPPED, workers=1, out=out, resume=True)["mean_bias"]
    assert max(_replicates(resumed).values()) > 300
    assert read_head(out).provenance.budget_cut == {}
    main(["study", "report", str(out)])
    assert "time budget" not in (out / "index.html").read_text()


@pytest.mark.parametrize("budget", [0, -1.0, True, "1"])
def test_the_budget_must_be_a_positive_number_of_seconds(budget):
    with pytest.raises(ValueError, match="`budget` must be a positive number of seconds"):
        run([MEAN], grid=STEPPED, rng=3, workers=1, budget=budget)


def test_a_look_reads_back_as_it_was_stored():
    look = Look("s", 2, {"c": ("HOLDS", 600)}, {"k": 3})
    assert Look.from_row(look.to_row()) == look


def test_a_later_round_draws_at_most_the_declared_replicates_at_once():
    asked = []

    def recorded(params, n_replicates, *, rng=None):
        asked.append(n_replicates)
        return MEAN.generate(params, n_replicates, rng=rng)

    result = run([dataclasses.replace(MEAN, generate=recorded)], grid=STEPPED, rng=3,
                 workers=1)["mean_bias"]
    assert max(_replicates(result).values()) == 2400  # raised by 2100 in one round
    assert max(asked) == 300 and len(asked) > 4
