"""Test configuration: deterministic hypothesis runs in CI."""

import os

from hypothesis import settings

# CI replays the same examples every run (derandomize), so a failure is reproducible from
# the log; developers run the default randomized profile and find new counterexamples.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
