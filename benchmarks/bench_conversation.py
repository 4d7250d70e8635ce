"""Logging a long conversation one message at a time.

Question: what does ``log_conversation`` cost a call as a session grows, when an agent
sends only the new message (the usual hook)? Each call lines the message up with the
session's stored turns (``conversation.new_turns``), so it reads the session.

Setup: one session grown to each size in ``--sizes`` (messages logged 500 at a time),
then ``--calls`` calls that each log one new message. Embedder: ``hash:64`` (no model
time in the figures).

Figures, against a baseline measured in the same run: the median call at each size,
and that median ÷ the median ``events.log`` of a plain event into the same memory
(which reads nothing of a session).

Run: ``.venv/bin/python -m benchmarks.bench_conversation`` (``--quick``: 1,000 and
4,000 turns).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import remembrances
from benchmarks.harness import load_average


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 4_000, 8_000, 16_000])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = [1_000, 4_000] if args.quick else sorted(args.sizes)
    print(f"load average {load_average()}")
    with tempfile.TemporaryDirectory(prefix="bench-conversation-") as tmp:
        memory = remembrances.open(Path(tmp) / "m.db", embedder="hash:64")
        logged = 0
        for size in sizes:
            while logged < size:
                batch = [
                    {
                        "role": "user" if i % 2 == 0 else "assistant",
                        "content": f"message {i}: the build of step {i * 7} finished",
                    }
                    for i in range(logged, min(logged + 500, size))
                ]
                memory.events.log_conversation(batch, session="long", user="u")
                logged += len(batch)
            turn, plain = [], []
            for call in range(args.calls):
                start = time.perf_counter()
                memory.events.log_conversation(
                    [{"role": "user", "content": f"a new message {size}-{call}"}],
                    session="long",
                    user="u",
                )
                turn.append(time.perf_counter() - start)
                start = time.perf_counter()
                memory.events.log(f"a plain event {size}-{call}", subject="note")
                plain.append(time.perf_counter() - start)
            logged += args.calls
            t, p = statistics.median(turn), statistics.median(plain)
            print(
                f"{size:>6,} turns: log_conversation {t * 1000:.1f} ms, events.log "
                f"{p * 1000:.1f} ms, ratio {t / p:.1f}x",
                flush=True,
            )
        memory.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
