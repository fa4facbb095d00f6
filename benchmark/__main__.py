"""`python -m benchmark` runs the `wearsim` command."""

import sys

from benchmark.cli import main

sys.exit(main())
