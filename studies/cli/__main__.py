"""``python -m studies.cli``: the ``evalcert`` command."""

import sys

from studies.cli.main import main

sys.exit(main())
