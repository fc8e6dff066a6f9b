"""The ``evalcert`` command line: one module per command.

`main` is the entry point; `args` holds what the commands share (argument types, the usage
error); ``demo``, ``f1``, ``sample_size``, ``stratified``, ``gain`` and ``study`` are the
commands; `counts` holds the confusion-matrix options of ``f1`` and ``sample-size``, and
`progress` the progress display of ``study run``.
"""
