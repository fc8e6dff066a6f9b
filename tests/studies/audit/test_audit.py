"""The fault audit: declared faults, their patches, outcomes, and an audit run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from studies.audit import (
    SHIPPED_FAULTS,
    AuditSettings,
    Fault,
    apply_fault,
    copy_tree,
    load_faults,
    run_audit,
    write_audit,
)
from studies.audit.audit import _outcome
from studies.cli.main import main

ROOT = Path(__file__).resolve().parents[3]

WILSON_SHRUNK = """
[[fault]]
name = "wilson-narrow"
target = "estimators.proportion:_wilson"
find = "half *= z"
replace = "half *= 0.8 * z"
what = "the Wilson half-width 20% short"
"""
WILSON_HARMLESS = """
[[fault]]
name = "wilson-half-as-product"
target = "estimators.proportion:_wilson"
find = "centre = x + z2 / 2.0"
replace = "centre = x + 0.5 * z2"
what = "z^2/2 written as 0.5 z^2 (the same bits)"
harmless = true
"""
AGRESTI_WIDE = """
[[fault]]
name = "agresti-wide"
target = "estimators.proportion:_agresti_coull"
find = "half *= z"
replace = "half *= 1.2 * z"
what = "the Agresti-Coull half-width 20% long (binomial_coverage does not run it)"
"""


def _file(tmp_path: Path, *texts: str) -> Path:
    path = tmp_path / "faults.toml"
    path.write_text("\n".join(texts))
    return path


def test_the_shipped_fault_set_applies_to_the_source():
    faults = load_faults(SHIPPED_FAULTS)
    assert len({f.name for f in faults}) == len(faults) >= 1


def test_a_fault_patches_only_its_function_in_a_copy(tmp_path):
    (fault,) = load_faults(_file(tmp_path, AGRESTI_WIDE))
    source = (ROOT / "estimators" / "proportion.py").read_text()
    assert source.count("half *= z") > 1  # also in _wald and _wilson, which stay as they are
    tree = copy_tree(tmp_path / "tree")
    changed = apply_fault(fault, tree)
    patched = changed.read_text()
    assert changed == tree / "estimators" / "proportion.py"
    assert patched.count("half *= 1.2 * z") == 1
    assert patched.count("half *= z") == source.count("half *= z") - 1
    assert patched.replace("half *= 1.2 * z", "half *= z") == source
    assert (ROOT / "estimators" / "proportion.py").read_text() == source  # the original stays
    assert not list(tree.rglob("__pycache__"))


@pytest.mark.parametrize("text, message", [
    ('[[fault]]\nname = "a"\ntarget = "estimators.proportion:_wilson"\nfind = "z2"\n'
     'replace = "z3"\nwhat = "w"\n', r"`find` must occur 1 time\(s\) in estimators.proportion:"
                                      r"_wilson; it occurs [0-9]+ time\(s\)"),
    ('[[fault]]\nname = "a"\ntarget = "estimators.proportion:_nowhere"\nfind = "z"\n'
     'replace = "y"\nwhat = "w"\n', "`target` must name a function or class of "
                                    "estimators.proportion; got '_nowhere'"),
    ('[[fault]]\nname = "a"\ntarget = "numpy:sqrt"\nfind = "z"\nreplace = "y"\nwhat = "w"\n',
     "a fault's module must be in estimators or studies; got 'numpy'"),
    ('[[fault]]\nname = "a"\ntarget = "estimators.nothing"\nfind = "z"\nreplace = "y"\n'
     'what = "w"\n', "a fault's module must exist"),
    ('[[fault]]\nname = "a"\ntarget = "estimators.proportion:_wilson"\nfind = "z2 = z * z"\n'
     'replace = "z2 = (z * z"\nwhat = "w"\n', "the patched estimators.proportion must parse"),
    ('[[fault]]\nname = "A b"\ntarget = "t"\nfind = "z"\nreplace = "y"\nwhat = "w"\n',
     "`name` must be lowercase letters"),
    ('[[fault]]\nname = "a"\ntarget = "t"\nfind = "z"\nreplace = "y"\n',
     r"must have the fields .* missing \['what'\]"),
    ('[[fault]]\nname = "a"\ntarget = "t"\nfind = "z"\nreplace = "y"\nwhat = "w"\nwhy = 1\n',
     r"got unknown \['why'\]"),
    ('[[fault]]\nname = "a"\ntarget = "t"\nfind = "z"\nreplace = "z"\nwhat = "w"\n',
     "`find` must be non-empty text that `replace` changes"),
    ('[[fault]]\nname = "a"\ntarget = "t"\nfind = "z"\nreplace = "y"\nwhat = "w"\n'
     'occurrences = 0\n', "`occurrences` must be a positive integer; got 0"),
    ('[[fault]]\nname = "a"\ntarget = "t"\nfind = "z"\nreplace = "y"\nwhat = "w"\n'
     'harmless = "yes"\n', "`harmless` must be true or false; got 'yes'"),
    ("name = 'x'\n", r"`faults` must hold \[\[fault\]\] tables only"),
    ("[[fault\n", "`faults` must be a TOML file"),
])
def test_a_bad_fault_file_is_refused_naming_the_fault(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        load_faults(_file(tmp_path, text))


def test_names_are_unique_and_every_occurrence_is_replaced_when_declared(tmp_path):
    with pytest.raises(ValueError, match="'wilson-narrow' repeats"):
        load_faults(_file(tmp_path, WILSON_SHRUNK, WILSON_SHRUNK))
    text = WILSON_SHRUNK.replace('find = "half *= z"', 'find = "z2 /"').replace(
        'replace = "half *= 0.8 * z"', 'replace = "0.9 * z2 /"\noccurrences = 2')
    (fault,) = load_faults(_file(tmp_path, text))
    tree = copy_tree(tmp_path / "tree")
    assert apply_fault(fault, tree).read_text().count("0.9 * z2 /") == 2


def _report(statuses: dict[str, str], regressions=0, improvements=0, missing=0) -> dict:
    verdicts: dict[str, list] = {}
    for key, status in statuses.items():
        study, claim = key.split(":")
        verdicts.setdefault(study, []).append({"claim": claim, "status": status})
    lacking = [{"study": "s", "method": "m", "values": missing, "cells": 1}] if missing else []
    return {"verdicts": verdicts, "comparison": {
        "regressions": regressions, "improvements": improvements, "missing": lacking}}


def test_outcomes_are_judged_against_the_unpatched_run():
    fault = Fault("f", "estimators.proportion:_wilson", "a", "b", "w")
    harmless = Fault("h", "estimators.proportion:_wilson", "a", "b", "w", harmless=True)
    base = {"s:one": "HOLDS", "s:two": "HOLDS", "s:three": "FAILS"}
    clean = _outcome(None, _report(base, missing=5), None, 1, 1.0, "")
    assert clean.missing == 5 and clean.outcome == ""

    def judged(statuses, status=1, *, which=fault, **gate):
        return _outcome(which, _report({**base, **statuses}, **gate), clean, status, 1.0, "")

    caught = judged({"s:two": "FAILS"}, missing=5)
    assert caught.outcome == "caught" and caught.failed == ("s:two",) and caught.missing == 0
    # a claim failing without the fault too catches nothing
    assert judged({}, missing=5, regressions=3).outcome == "gate only"
    assert judged({"s:one": "INCONCLUSIVE"}, missing=5).outcome == "inconclusive"
    assert judged({}, missing=7).outcome == "gate only"  # two values lost beyond the clean run
    assert judged({}, 1, missing=5, improvements=4).outcome == "missed"
    assert _outcome(fault, None, clean, 2, 1.0, "boom").outcome == "broke the run"
    assert judged({}, 0, which=harmless, missing=5).outcome == "quiet"
    assert judged({"s:one": "INCONCLUSIVE"}, which=harmless, missing=5).outcome == "alarmed"
    assert judged({}, which=harmless, missing=5, improvements=1).outcome == "alarmed"


def test_bad_audit_arguments_exit_2_in_one_line(tmp_path, capsys):
    assert main(["study", "audit", str(_file(tmp_path, WILSON_SHRUNK)), "--only", "nope",
                 "--check"]) == 2
    assert "--only must name faults of the file; got ['nope']" in capsys.readouterr().err
    assert main(["study", "audit", str(tmp_path / "none.toml")]) == 2
    err = capsys.readouterr().err
    assert "`faults` must be a readable TOML file" in err and len(err.strip().splitlines()) == 1
    assert main(["study", "audit", str(_file(tmp_path, WILSON_SHRUNK)), "--studies",
                 "nope", "--out", str(tmp_path / "a")]) == 2
    assert "`study` must be one of" in capsys.readouterr().err
    assert main(["study", "audit", str(_file(tmp_path, WILSON_SHRUNK)), "--check"]) == 0
    assert "1 faults apply to the source" in capsys.readouterr().out


@pytest.mark.slow
def test_an_audit_catches_a_narrow_interval_and_stays_quiet_on_a_harmless_rewrite(tmp_path):
    # binomial_coverage on 2 workers: the patched copy is what the workers import, or the
    # narrowed Wilson interval would hold its claim
    faults = load_faults(_file(tmp_path, WILSON_SHRUNK, WILSON_HARMLESS, AGRESTI_WIDE))
    settings = AuditSettings(("binomial_coverage",), "quick", 20190,
                             str(ROOT / "reports" / "baseline"), 2, 600.0)
    seen: list[str] = []
    result = run_audit(faults, tmp_path / "audit", settings,
                       on_outcome=lambda done, total, found: seen.append(found.name))
    assert seen == ["no-fault", "wilson-narrow", "wilson-half-as-product", "agresti-wide"]
    assert result.clean.exit_status == 1  # the baseline's other studies are missing
    by_name = {o.name: o for o in result.outcomes}
    assert by_name["wilson-narrow"].outcome == "caught"
    assert by_name["wilson-narrow"].failed == ("binomial_coverage:wilson-mean-near-nominal",)
    assert by_name["wilson-narrow"].regressions > 0
    assert by_name["wilson-half-as-product"].outcome == "quiet"
    assert by_name["agresti-wide"].outcome == "missed"  # binomial_coverage never runs it
    rates = result.rates()
    assert (rates["faults"], rates["caught"], rates["missed"], rates["quiet"]) == (2, 1, 1, 1)
    page = write_audit(result, tmp_path / "audit")
    frame = pd.read_csv(tmp_path / "audit" / "audit.csv")
    assert frame["outcome"].tolist() == ["caught", "quiet", "missed"]
    html = page.read_text()
    assert "Claims caught 1 of 2 (50%) faults" in html and "wilson-mean-near-nominal" in html
    kept = {p.name for p in (tmp_path / "audit" / "faults" / "wilson-narrow" / "run").iterdir()}
    assert "report.json" in kept and "run.sqlite" not in kept
    # resumed: every outcome is read back, none run again
    stored = tmp_path / "audit" / "faults" / "wilson-narrow" / "outcome.json"
    before = stored.stat().st_mtime_ns
    again = run_audit(faults, tmp_path / "audit", settings, resume=True)
    assert again == result and stored.stat().st_mtime_ns == before
    assert json.loads(stored.read_text())["outcome"]["outcome"] == "caught"


def test_a_stored_outcome_is_reused_only_for_the_same_patch_settings_and_source(tmp_path):
    from studies.audit.audit import _load, _save
    from studies.audit.faults import tree_digest

    fault = load_faults(_file(tmp_path, WILSON_SHRUNK))[0]
    settings = AuditSettings(("binomial_coverage",))
    found = _outcome(fault, _report({"s:a": "FAILS"}), _outcome(
        None, _report({"s:a": "HOLDS"}), None, 0, 1.0, ""), 1, 2.0, "")
    path = tmp_path / "outcome.json"
    source = tree_digest()
    _save(found, settings, source, path)
    assert _load(path, settings, source, fault.digest()) == found
    assert _load(path, settings, "another tree", fault.digest()) is None
    assert _load(path, AuditSettings(("mean_bias",)), source, fault.digest()) is None
    assert _load(path, settings, source, "another patch") is None
    # the digest follows the files: a changed module is another tree
    tree = copy_tree(tmp_path / "tree")
    assert tree_digest(tree) == source
    apply_fault(fault, tree)
    assert tree_digest(tree) != source


def test_every_run_of_an_audit_starts_from_one_snapshot_of_the_packages(tmp_path, monkeypatch):
    # the packages are copied once when the audit begins: every fault's copy comes from that
    # snapshot, so an edit made while a long audit runs reaches none of its runs
    import studies.audit.audit as audit
    from studies.audit.faults import tree_digest

    seen = []

    def fake_run(fault, settings, directory, clean, *, keep, snapshot):
        seen.append((snapshot, tree_digest(snapshot)))
        directory.mkdir(parents=True)
        (snapshot / "studies" / "edited.py").write_text("")  # as an edit would, mid-audit
        return _outcome(fault, _report({"s:a": "HOLDS"}), clean, 0, 1.0, "")

    monkeypatch.setattr(audit, "_run_one", fake_run)
    faults = load_faults(_file(tmp_path, WILSON_SHRUNK))
    run_audit(faults, tmp_path / "audit", AuditSettings(("binomial_coverage",)))
    assert [s for s, _ in seen] == [tmp_path / "audit" / "source"] * 2
    assert seen[0][1] == tree_digest()  # the packages as they were
    assert not (Path(audit.__file__).parents[1] / "edited.py").exists()
