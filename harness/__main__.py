import sys

from torch_pitfalls.cli import main

sys.exit(main())
