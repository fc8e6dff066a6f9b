"""The ``evalcert`` command line: one module per command.

`main` is the entry point; `args` holds what the commands share (argument types, the usage
error); ``demo``, ``f1``, ``sample_size``, ``stratified``, ``gain`` and ``study`` are the
commands.
"""
