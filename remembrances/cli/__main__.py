"""``python -m remembrances.cli``: the same as the ``remembrances`` command."""

from . import main

main()
