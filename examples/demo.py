"""The remembrances demo: a memory for this repository, built and queried offline.

Creates a store in a temporary directory, puts this repository's docs and code in
it, logs a few events, runs two searches and prints what ``enrich_context`` would
hand an agent for a realistic coding question. Uses the default local embedder
(no network) and leaves no files behind in the repository.

    make demo            # or: .venv/bin/python examples/demo.py
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import remembrances
from remembrances import Chunk

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = (
    "How does hybrid search combine BM25 and vector scores?",
    "what happens when I open a file with a different embedding model",
)
PROMPT = (
    "Please fix the bug where Store.search returns fewer results than the limit "
    "when a metadata filter is used, it started failing yesterday"
)
#: (subject, what happened, how long ago)
EVENTS = (
    ("search", "Bob reported that filtered searches return fewer results than the limit "
     "when a metadata filter is used.", timedelta(days=1)),
    ("release", "Tagged v0.1.0: one-file store with hybrid search and the local embedder.",
     timedelta(days=3)),
    ("embeddings", "Switched the default embedder to the int8 MiniLM ONNX model (offline).",
     timedelta(days=10)),
)  # fmt: skip
#: How long the demo spends embedding code; the rest stays searchable by words.
EMBED_SECONDS = float(os.environ.get("DEMO_EMBED_SECONDS", "25"))

console = Console(stderr=False)


def progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
    )


def doc_files() -> list[Path]:
    return [p for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))] if p.is_file()]


def paragraphs(text: str, size: int = 1200) -> list[str]:
    """Plain paragraph chunks (only used when the KB layer is not available)."""
    chunks, current = [], ""
    for para in re.split(r"\n\s*\n", text):
        if current and len(current) + len(para) > size:
            chunks.append(current)
            current = ""
        current = f"{current}\n\n{para}" if current else para
    return [c for c in [*chunks, current] if c.strip()]


def add_docs(svc: remembrances.RemembrancesService) -> None:
    files = doc_files()
    with progress() as bar:
        task = bar.add_task("docs", total=len(files), rate="")
        started = time.perf_counter()
        chunks = 0
        for path in files:
            text = path.read_text(encoding="utf-8")
            source = str(path.relative_to(REPO))
            try:
                kb = svc.kb
            except ImportError:
                kb = None
            if kb is not None:
                report = kb.add(text, source=source, title=path.stem)
                chunks += int(getattr(report, "chunks", 0))
            else:
                pieces = paragraphs(text)
                svc.store.put_source("kb", source, [Chunk(p) for p in pieces])
                chunks += len(pieces)
            rate = chunks / max(time.perf_counter() - started, 1e-9)
            bar.update(task, advance=1, rate=f"{chunks} chunks, {rate:.0f} chunks/s")


def index_code(svc: remembrances.RemembrancesService) -> bool:
    """Index the package: every symbol is text-searchable at once; vectors follow in
    batches for up to EMBED_SECONDS (what is left stays searchable by words, and a
    later ``backfill`` finishes it)."""
    try:
        code = svc.code
    except ImportError:
        console.print("[dim]code layer not available yet; skipping the code index[/]")
        return False
    with progress() as bar:
        task = bar.add_task("code: parsing", total=None, rate="")
        started = time.perf_counter()

        def parsed(phase: str, done: int, total: int | None) -> None:
            rate = done / max(time.perf_counter() - started, 1e-9)
            bar.update(task, description=f"code: {phase}", completed=done, total=total,
                       rate=f"{rate:.0f} files/s")  # fmt: skip

        report = code.index(
            REPO / "remembrances", project="remembrances", embed=False, progress=parsed
        )
        pending = svc.store.pending_embeddings(kind="code")
        embed = bar.add_task("code: embedding", total=pending, rate="")
        started = time.perf_counter()
        done = 0
        while done < pending and time.perf_counter() - started < EMBED_SECONDS:
            done += code.backfill("remembrances", limit=32)
            rate = done / max(time.perf_counter() - started, 1e-9)
            bar.update(embed, completed=done, rate=f"{rate:.0f} chunks/s")
    left = svc.store.pending_embeddings(kind="code")
    console.print(
        f"indexed {report.files_indexed} files, {report.symbols} symbols, {report.chunks} "
        f"chunks; {report.chunks - left} with vectors, {left} searchable by words only "
        f"(finish with: code.backfill('remembrances'))"
    )
    return True


def log_events(svc: remembrances.RemembrancesService) -> None:
    try:
        log = svc.events
    except ImportError:
        console.print("[dim]event layer not available yet; skipping events[/]")
        return
    now = datetime.now().astimezone()
    yesterday_afternoon = (now - timedelta(days=1)).replace(hour=15, minute=0)
    for subject, content, ago in EVENTS:
        at = yesterday_afternoon if ago == timedelta(days=1) else now - ago
        log.log(content, subject=subject, at=at)
    console.print(f"logged {len(EVENTS)} events")


def show_search(svc: remembrances.RemembrancesService, question: str) -> None:
    console.rule(f"[bold]search:[/] {question}")
    for n, hit in enumerate(svc.store.search(question, limit=4), start=1):
        where = hit.metadata.get("qualified_name") or hit.metadata.get("heading_path") or ""
        # a code chunk's text starts with a header for the text index; show the code
        text = " ".join(hit.text[int(hit.metadata.get("code_offset", 0)) :].split())
        console.print(
            f"{n}. [cyan]{hit.score:.3f}[/] [magenta]{hit.kind}[/] [green]{hit.source}[/] {where}"
        )
        console.print(f"   {text[:200]}{'…' if len(text) > 200 else ''}", markup=False)


def show_enrichment(svc: remembrances.RemembrancesService) -> None:
    console.rule("[bold]enrich_context[/]")
    console.print(f"prompt: {PROMPT}", markup=False)
    try:
        context = svc.enrich_context(PROMPT)
    except ImportError:
        console.print("[dim]enrichment not available yet[/]")
        return
    console.print(
        Panel(context or "(nothing relevant)", title="context for the agent"), markup=False
    )


def main() -> int:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="remembrances-demo-") as scratch:
        path = Path(scratch) / "memory.db"
        console.print(f"memory file: {path} (deleted at exit)")
        with remembrances.open(path) as svc:
            console.print(f"embedder: {svc.embedder.name if svc.embedder else '?'} (offline)")
            add_docs(svc)
            index_code(svc)
            log_events(svc)
            stats = svc.stats()
            console.print(f"{stats['chunks']} chunks by kind: {stats['chunks_by_kind']}")
            for question in QUESTIONS:
                show_search(svc, question)
            show_enrichment(svc)
    console.print(f"done in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
