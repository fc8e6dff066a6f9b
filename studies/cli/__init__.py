"""The ``evalcert`` command line: one module per command.

`main` is the entry point; `args` holds what the commands share (argument types, the usage
error); ``demo``, ``f1``, ``recall``, ``sample_size``, ``stratified``, ``gain`` and ``study``
are the commands; `counts` holds the confusion-matrix options of ``f1`` and ``sample-size``,
`certify` the sampling design's options, the decision and the assumptions of ``f1`` and
``recall``, and `progress` the progress display of ``study run``.

Building the parser imports no estimator, engine, report, suite nor numpy: they bring in
scipy, pandas and matplotlib, most of a second that ``evalcert --help`` need not wait. A
command module imports them in the functions that run the command ("deferred: see
studies.cli"), and the choices the parsers show come from `names`. ``f1`` and ``study`` import
theirs at module level, so their parsers are in `parsers`. ``tests/studies/cli/test_cli_startup.py``
checks what the parser imports.
"""
