"""What pins each public estimator method: claims on its validity and on its efficiency.

The suite holds every public method to both promises (`studies.engine.pins`). `KNOWN_GAPS`
lists the methods that lack one, with the side missing (none now): the test fails when a
method loses a pin (a new gap) and when a listed gap is closed (the list must shrink with
the suite), naming the methods either way.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from studies.engine import Claim
from studies.engine.pins import pin_markdown, pin_table, public_methods
from studies.suite import get_study, study_names

ROOT = Path(__file__).resolve().parents[3]

# The methods no claim yet pins from one side or both (see docs/method-pins.md): none.
KNOWN_GAPS: dict[str, str] = {}


def _suite_table():
    return pin_table([get_study(name) for name in study_names()])


def test_no_public_method_loses_a_pin_and_every_closed_gap_leaves_the_list():
    table = _suite_table()
    gaps = {row.method: row.missing for row in table.itertuples() if row.missing}
    new = {m: side for m, side in gaps.items() if KNOWN_GAPS.get(m) != side}
    closed = sorted(set(KNOWN_GAPS) - set(gaps))
    assert not new, f"public methods without a validity or an efficiency claim: {new}"
    assert not closed, f"gaps closed, take them off KNOWN_GAPS: {closed}"
    assert set(table["method"]) >= set(public_methods())


def test_the_docs_table_is_the_suites():
    written = (ROOT / "docs" / "method-pins.md").read_text()
    assert written == pin_markdown(_suite_table()), (
        "docs/method-pins.md is stale: evalcert study pins --out docs/method-pins.md")


def test_a_claim_pins_the_public_methods_its_study_maps_on_the_grids_it_is_judged():
    study = get_study("binomial_coverage")
    wald_claim = Claim("wald-near", "Wald near nominal.", ("wald",), "coverage", "within",
                       target="confidence_level", margin=0.5, pins=("validity", "efficiency"),
                       grids=("full",))
    toy = dataclasses.replace(study, claims=(*study.claims, wald_claim))
    table = pin_table([toy]).set_index("method")
    assert table.loc["proportion_ci:wald", "validity"] == (
        "binomial_coverage:wald-near (full grid only)")
    assert table.loc["proportion_ci:wald", "missing"] == ""
    assert table.loc["proportion_ci:wilson", "validity"] == (
        "binomial_coverage:wilson-mean-near-nominal")
    # a method the study does not map pins nothing
    unmapped = dataclasses.replace(toy, estimator_methods={})
    assert (pin_table([unmapped])["missing"] == "validity, efficiency").all()


def test_bad_pins_and_method_maps_are_refused():
    with pytest.raises(ValueError, match=r"`pins` of claim 'c' must be a tuple of "
                                         r"\('validity', 'efficiency'\); got \('speed',\)"):
        Claim("c", "s", ("m",), "coverage", "at_least", target=0.9, pins=("speed",))
    study = get_study("binomial_coverage")
    for bad in ("proportion_ci", (("n > 1", "proportion_ci"),), ("n > 1", "proportion_ci:wald")):
        with pytest.raises(ValueError, match="`estimator_methods` must map method names to "
                                             r"'function:method' strings or \(region, "
                                             r"'function:method'\) pairs; got \['wald'\]"):
            dataclasses.replace(study, estimator_methods={"wald": bad})


def test_a_method_running_public_methods_by_region_pins_each_where_its_claims_reach():
    # gain_budget's bootstrap is budget_positives' in the positives cells and
    # cumulative_gain_estimate's in the gain cells: a claim pins the ones its region reaches
    table = pin_table([get_study("gain_budget")]).set_index("method")
    gain_only = "gain_budget:gain-bootstrap-no-wider-than-binomial"
    both = "gain_budget:bootstrap-near-nominal-where-its-sets-are-mixed"
    assert gain_only in table.loc["cumulative_gain_estimate:bootstrap", "efficiency"]
    assert gain_only not in table.loc["budget_positives:bootstrap", "efficiency"]
    for method in ("cumulative_gain_estimate:bootstrap", "budget_positives:bootstrap"):
        assert both in table.loc[method, "validity"]
