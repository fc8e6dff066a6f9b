"""Turning a run's results into what a person reads: the tables written beside a run.

`write_tables` writes each study's per-cell and headline tables beside a run's store.
"""

from studies.report.tables import cell_table, headline_table, write_tables

__all__ = ["cell_table", "headline_table", "write_tables"]
