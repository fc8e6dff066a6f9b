"""Test configuration: deterministic hypothesis runs in CI; one quick-suite run shared."""

import os

import pytest
from hypothesis import settings

from studies.cli.main import main

# CI replays the same examples every run (derandomize), so a failure is reproducible from
# the log; developers run the default randomized profile and find new counterexamples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def quick_run(tmp_path_factory):
    """The quick suite, run once through the command line (every registered study)."""
    out = tmp_path_factory.mktemp("quick") / "run"
    assert main(["study", "run", "all", "--grid", "quick", "--seed", "20190",
                 "--workers", "2", "--out", str(out)]) == 0
    return out
