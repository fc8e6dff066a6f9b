"""CHANGELOG.md keeps the form of Keep a Changelog, and its latest version is the package's."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent
while not (ROOT / "pyproject.toml").exists():
    ROOT = ROOT.parent
HEADING = re.compile(r"^## (Unreleased|(\d+\.\d+\.\d+) - (\d{4}-\d{2}-\d{2}))$", re.M)
SECTIONS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def test_the_latest_version_is_the_packages():
    text = (ROOT / "CHANGELOG.md").read_text()
    released = [m.group(2) for m in HEADING.finditer(text) if m.group(2)]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert released and released[0] == declared == version("evalcert"), (released, declared)
    assert text.index("## Unreleased") < text.index(f"## {declared} - ")


def test_versions_go_down_and_sections_are_keep_a_changelogs():
    text = (ROOT / "CHANGELOG.md").read_text()
    found = [m for m in HEADING.finditer(text) if m.group(2)]
    versions = [tuple(int(x) for x in m.group(2).split(".")) for m in found]
    dates = [m.group(3) for m in found]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert dates == sorted(dates, reverse=True)
    for heading in re.findall(r"^### (.+)$", text, re.M):
        assert heading in SECTIONS, heading
