import sys

from harness.surface.cli import main

sys.exit(main())
