import sys

from .interface.cli.commands import main

sys.exit(main())
