"""The fault audit: how many plausible mistakes in the code the suite's claims catch.

`load_faults` reads a file of declared faults (`Fault`: a text patch of one named function);
`run_audit` runs the chosen studies once without a fault and once per fault, each in a fresh
process importing a patched copy of the packages, exactly as CI runs the quick suite with the
regression gate; `write_audit` writes the sensitivity table as a page. ``evalcert study
audit`` does all three. `SHIPPED_FAULTS` is the project's own fault set.
"""

from pathlib import Path

from studies.audit.audit import OUTCOMES, AuditResult, AuditSettings, FaultOutcome, run_audit
from studies.audit.faults import Fault, apply_fault, copy_tree, load_faults
from studies.audit.page import describe, headline, write_audit

# The project's fault set: plausible mistakes over every estimator module and study.
SHIPPED_FAULTS = Path(__file__).with_name("faults.toml")

__all__ = ["OUTCOMES", "SHIPPED_FAULTS", "AuditResult", "AuditSettings", "Fault",
           "FaultOutcome", "apply_fault", "copy_tree", "describe", "headline", "load_faults",
           "run_audit", "write_audit"]
