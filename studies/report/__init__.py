"""Turning a run's results into what a person reads: tables (and, as they grow, pages and plots).

`write_tables` writes each study's per-cell and headline tables beside a run's store.
"""

from studies.report.tables import cell_table, headline_table, write_tables

__all__ = ["cell_table", "headline_table", "write_tables"]
