"""Turning a run's results into what a person reads.

`write_tables` writes each study's per-cell, headline and claims tables beside a run's store;
`write_report` writes the report pages (HTML and Markdown), figures and report.json
(`pages`); `figures` draws a study's declared figures with `plots`. `studies.pipeline`'s
`run_suite` and `publish` do all of it in one call, for a new run or a stored one.
"""

from studies.report.pages import write_report
from studies.report.tables import (
    cell_table,
    claims_table,
    headline_table,
    summaries,
    write_tables,
)

__all__ = ["cell_table", "claims_table", "headline_table", "summaries", "write_report",
           "write_tables"]
