import sys

from shortlink.cli import main

sys.exit(main())
