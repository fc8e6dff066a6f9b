"""The parsers of the commands whose modules import their machinery when imported.

`studies.cli.f1` imports the estimators and `studies.cli.study` the engine, report and suite
at module level (tests replace names there: ``f1_ci``, ``run``), so their parsers live here,
importing neither: `studies.cli.main` builds the whole parser without them, and a command's
module is imported when the command runs.
"""
