"""Turning a run's results into what a person reads.

`write_tables` writes each study's per-cell, headline and claims tables beside a run's store;
`write_report` writes the report pages (HTML and Markdown), figures and report.json
(`pages`); `figures` draws a study's declared figures with `plots`. `run_suite` and
`publish` (`publication`) do all of it in one call, for a new run or a stored one.
"""

from studies.report.pages import write_report
from studies.report.publication import Publication, publish, run_suite
from studies.report.tables import (
    cell_table,
    claims_table,
    headline_table,
    summaries,
    write_tables,
)

__all__ = ["Publication", "cell_table", "claims_table", "headline_table", "publish", "run_suite",
           "summaries", "write_report", "write_tables"]
