"""The pipeline from a study to its report: run, judge, compare, report.

`run_suite` runs studies (`studies.engine.run`) and publishes them; `publish` publishes a run
stored earlier: each study's claims judged at its share of the suite's false-alarm budget
(`studies.suite.judge`), its tables written (`studies.report.write_tables`), the run compared
with a baseline (`studies.report.compare`, the regression gate) and the report written
(`studies.report.write_report`). Both return a `Publication`: the verdicts, the comparison, the
report's path and the exit status ``evalcert study run`` gives. This room sits above the report:
the report presents, the pipeline decides what runs and what the command returns.
"""

from studies.pipeline.publication import Publication, publish, run_suite

__all__ = ["Publication", "publish", "run_suite"]
