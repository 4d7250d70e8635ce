"""`make bench`: run every benchmarks/bench_*.py in turn, each in its own process.

Each runs as a module from the repository root (``python -m benchmarks.bench_x``),
importing the installed package and ``benchmarks.harness``. Extra arguments are
passed to every benchmark (e.g. `--quick`); names choose some (`run.py vector
store`). Figures are printed with their baselines and ratios; benchmarks/RESULTS.md
records them with commands.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    flags = [a for a in sys.argv[1:] if a.startswith("-")]
    failed = []
    for script in sorted(here.glob("bench_*.py")):
        if only and script.stem.removeprefix("bench_") not in only:
            continue
        print(f"\n=== {script.name} ===", flush=True)
        start = time.perf_counter()
        module = f"benchmarks.{script.stem}"
        code = subprocess.call([sys.executable, "-m", module, *flags], cwd=here.parent)
        print(
            f"=== {script.name}: exit {code} in {time.perf_counter() - start:.0f} s ===", flush=True
        )
        if code:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
