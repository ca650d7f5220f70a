"""``python -m nbgpu`` and the ``nbgpu`` console script."""

import sys

from ._app.cli import main

if __name__ == "__main__":
    sys.exit(main())
