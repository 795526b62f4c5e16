import sys

from torch_pitfalls.surface.cli import main

sys.exit(main())
