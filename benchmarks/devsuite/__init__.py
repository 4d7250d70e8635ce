"""A development suite over real public projects: hand-written and self-supervised questions.

Run ``python -m benchmarks.devsuite`` from the repository root (see ``--help``), or from
Python::

    from benchmarks import devsuite
    results = devsuite.run(sets=["docs-click"], split="fit", systems=["rem-hybrid", "rrf"])
    print(devsuite.markdown(results))
"""

from __future__ import annotations

from .report import markdown
from .suite import SYSTEMS, Results, Row, all_sets, open_store, run

__all__ = ["SYSTEMS", "Results", "Row", "all_sets", "markdown", "open_store", "run"]
