"""Sets, corpora, systems and the evaluation loop of the development suite.

A *set* is a list of questions over one corpus. Three kinds:

- ``docs-<project>``: hand-written questions over a project's docs folder; the answer
  is a doc file and an anchor phrase that the right chunk contains.
- ``code-<project>``: hand-written questions over a library's source; the answer is
  one or more qualified symbol names (``path/to/file.py:Class.method``).
- ``selfsup-<project>``: the first sentence of a function's docstring, over the
  library's source with the function docstrings removed (see :mod:`.selfsup`).

Every set is split into a ``fit`` and a ``test`` half by the hash of the question's
text, so the halves never change when other questions are added.

Systems: ``bm25``, ``embed`` and ``rrf`` are the naive pipeline (:mod:`.naive`);
``rem-hybrid``, ``rem-vector`` and ``rem-text`` are remembrances' public search
(``kb.search`` / ``code.search``) in its three modes over a store built with
``kb.ingest`` / ``code.index``.

Everything slow is cached under the cache directory: the sdists and their corpora,
the naive chunks' vectors (by corpus, embedder and chunk texts) and one store file
per corpus and embedder. Re-running after a scoring change re-embeds nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import remembrances
from remembrances.embeddings import create
from remembrances.embeddings.base import Embedder, as_matrix, as_vector

from . import corpora, naive, selfsup

QUESTIONS_DIR = Path(__file__).resolve().parent / "questions"
NAIVE_SYSTEMS = ("bm25", "embed", "rrf")
REM_SYSTEMS = ("rem-hybrid", "rem-vector", "rem-text")
SYSTEMS = NAIVE_SYSTEMS + REM_SYSTEMS
SELFSUP_LIBRARIES = (
    "itsdangerous",
    "attrs",
    "requests",
    "flask",
    "click",
    "marshmallow",
    "python-dateutil",
)
TOP = 10
EMBED_BATCH = 64

Log = Callable[[str], None]


def halves(questions: Sequence[str]) -> dict[str, str]:
    """``fit`` or ``test`` per question: ordered by the hash of its text, the first half
    (rounded up) is ``fit``. Independent of file order; adding a question moves at most
    the one question at the boundary."""
    ranked = sorted(set(questions), key=lambda q: hashlib.sha256(q.encode()).hexdigest())
    cut = (len(ranked) + 1) // 2
    return {q: "fit" if i < cut else "test" for i, q in enumerate(ranked)}


def normalised(text: str) -> str:
    """Lower case, letters and digits only, single spaces: rst/markdown markup and line
    wrapping do not decide whether a chunk contains an anchor."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


@dataclass(frozen=True)
class Question:
    text: str
    answers: tuple[str, ...]  # code: "path:Qual.name"; docs: "path#anchor"
    half: str


@dataclass(frozen=True)
class Hit:
    path: str
    label: str  # qualified name (code) or "" (docs)
    text: str


@dataclass
class SetSpec:
    name: str
    kind: str  # "docs" | "code" | "tested" (code and its tests) | "selfsup"
    project: str

    @property
    def corpus_kind(self) -> str:
        return "docs" if self.kind == "docs" else "code"


def all_sets() -> dict[str, SetSpec]:
    specs: dict[str, SetSpec] = {}
    for path in sorted(QUESTIONS_DIR.glob("*.json")):
        data = json.loads(path.read_text())
        spec = SetSpec(f"{data['kind']}-{data['project']}", data["kind"], data["project"])
        specs[spec.name] = spec
    for spec in [s for s in specs.values() if s.kind == "code"]:
        # The same questions over the library with its tests, as a repository holds it.
        specs[f"tested-{spec.project}"] = SetSpec(f"tested-{spec.project}", "tested", spec.project)
    for lib in SELFSUP_LIBRARIES:
        specs[f"selfsup-{lib}"] = SetSpec(f"selfsup-{lib}", "selfsup", lib)
    return specs


@dataclass
class Corpus:
    """A prepared directory of files and the questions asked of it."""

    spec: SetSpec
    root: Path
    key: str
    files: list[Path]
    questions: list[Question]

    @property
    def id(self) -> str:
        return self.root.name

    @cached_property
    def chunks(self) -> list[naive.NaiveChunk]:
        if self.spec.corpus_kind == "docs":
            return naive.doc_chunks(self.root, self.files)
        return naive.symbol_chunks(self.root, self.files)

    def relevant(self, hit: Hit) -> set[int]:
        """Indices of the answers ``hit`` satisfies (usually none or one)."""
        found = set()
        for i, answer in enumerate(self._parsed_answers):
            path, target = answer
            if hit.path != path:
                continue
            if self.spec.corpus_kind == "docs":
                if target in normalised(hit.text):
                    found.add(i)
            elif hit.label == target:
                found.add(i)
        return found

    @cached_property
    def _parsed_answers(self) -> list[tuple[str, str]]:
        sep = "#" if self.spec.corpus_kind == "docs" else ":"
        return [(a.split(sep, 1)[0], a.split(sep, 1)[1]) for a in self.answer_list]

    @cached_property
    def answer_index(self) -> dict[str, int]:
        return {a: i for i, a in enumerate(self.answer_list)}

    @cached_property
    def answer_list(self) -> list[str]:
        seen: dict[str, None] = {}
        for q in self.questions:
            for a in q.answers:
                seen.setdefault(a, None)
        return list(seen)


def prepare(spec: SetSpec, cache: Path) -> Corpus:
    project = corpora.PROJECTS[spec.project]
    unpacked = corpora.fetch(project, cache)
    sub = project.docs if spec.kind == "docs" else project.code
    if sub is None:
        raise ValueError(f"{project.name} has no {spec.kind} folder configured")
    src = unpacked / sub
    files = corpora.doc_files(src) if spec.kind == "docs" else corpora.code_files(src)
    tests = corpora.test_files(unpacked) if spec.kind == "tested" else []
    salt = selfsup.VERSION if spec.kind == "selfsup" else ""
    key = corpora.tree_hash(src, files, salt)
    if tests:
        key = corpora.tree_hash(unpacked, tests, key)
    root = cache / "corpora" / f"{spec.kind}-{project.key}-{key}"
    if spec.kind == "selfsup":
        # The questions are derived again each time (cheap, deterministic).
        if not root.exists():
            staging = root.with_name(root.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            selfsup.write_stripped(files, src, staging)
            staging.rename(root)
        raw = selfsup.questions(selfsup.docstrings(files, src), spec.project)
    else:
        if not root.exists():
            corpora.copy_tree(files, src, root, tests=tests, unpacked=unpacked)
        asked = "code" if spec.kind == "tested" else spec.kind
        raw = json.loads((QUESTIONS_DIR / f"{asked}_{spec.project}.json").read_text())["questions"]
    prepared = sorted(p for p in root.rglob("*") if p.is_file())
    split = halves([str(item["q"]) for item in raw])
    questions = [_question(spec, item, split) for item in raw]
    corpus = Corpus(spec, root, key, prepared, questions)
    _check_answers(corpus)
    return corpus


def _question(spec: SetSpec, item: dict[str, Any], split: dict[str, str]) -> Question:
    text = str(item["q"])
    if spec.kind == "docs":
        answers = item.get("answers") or [{"file": item["file"], "anchor": item["anchor"]}]
        keys = tuple(f"{a['file']}#{normalised(a['anchor'])}" for a in answers)
    else:
        keys = tuple(item["answers"])
    return Question(text, keys, split[text])


def _check_answers(corpus: Corpus) -> None:
    """Every answer must exist in the corpus: a typo would count as a miss for all."""
    problems = []
    if corpus.spec.corpus_kind == "docs":
        texts = {
            p.relative_to(corpus.root).as_posix(): normalised(p.read_text(errors="replace"))
            for p in corpus.files
        }
        for answer in corpus.answer_list:
            path, anchor = answer.split("#", 1)
            if path not in texts:
                problems.append(f"no file {path}")
            elif not any(anchor in normalised(c.text) for c in corpus.chunks if c.path == path):
                problems.append(f"{path}: no paragraph contains {anchor!r}")
    else:
        # The naive chunks stop at functions: a definition nested in one is accepted when
        # the question also lists the function (whose chunk holds it), and only then.
        labels = {f"{c.path}:{c.label}" for c in corpus.chunks}
        problems = [
            f"no symbol {a}"
            for q in corpus.questions
            for a in q.answers
            if a not in labels and not any(a.startswith(f"{b}.") for b in q.answers if b in labels)
        ]
    if problems:
        raise ValueError(f"{corpus.spec.name}: answers not in the corpus: " + "; ".join(problems))


# -- systems ---------------------------------------------------------------------------


class NaiveIndex:
    """BM25 and exact cosine over the naive chunks; vectors cached on disk."""

    def __init__(self, corpus: Corpus, embedder: Embedder, cache: Path, log: Log) -> None:
        self.corpus = corpus
        self.embedder = embedder
        self.chunks = corpus.chunks
        texts = [c.text for c in self.chunks]
        self.bm25 = naive.BM25(texts)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.name)
        path = cache / "embeddings" / f"{corpus.id}-{name}-{naive.texts_key(texts)}.npy"
        if path.exists():
            self.vectors: npt.NDArray[np.float32] = np.load(path)
        else:
            log(f"  embedding {len(texts)} naive chunks of {corpus.id}")
            start = time.perf_counter()
            parts = [
                as_matrix(
                    embedder.embed_documents(texts[i : i + EMBED_BATCH]),
                    count=len(texts[i : i + EMBED_BATCH]),
                    dim=embedder.dim,
                )
                for i in range(0, len(texts), EMBED_BATCH)
            ]
            self.vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), "f4")
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".partial.npy")
            np.save(tmp, self.vectors)
            tmp.rename(path)
            log(f"  ... {time.perf_counter() - start:.0f} s")

    def ranked(self, system: str, query: str) -> list[Hit]:
        if system == "bm25":
            order = self.bm25.search(query)
        else:
            qv = as_vector(self.embedder.embed_query(query), dim=self.embedder.dim)
            dense = naive.top((self.vectors @ qv).astype(np.float64), naive.POOL)
            order = dense if system == "embed" else naive.rrf(dense, self.bm25.search(query))
        return [self._hit(i) for i, _ in order[:TOP]]

    def _hit(self, i: int) -> Hit:
        c = self.chunks[i]
        return Hit(c.path, c.label, c.text)


class RemembrancesIndex:
    """remembrances' own store for a corpus, built once and reopened from the cache."""

    def __init__(
        self, corpus: Corpus, embedder: Embedder, cache: Path, log: Log, *, rebuild: bool = False
    ) -> None:
        self.corpus = corpus
        self.path = store_path(corpus, embedder, cache)
        if rebuild:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        self.service = remembrances.open(self.path, embedder=embedder)
        start = time.perf_counter()
        # Incremental: on a cached store this only checks the files are unchanged.
        if corpus.spec.corpus_kind == "docs":
            report: Any = self.service.kb.ingest(corpus.root, collection=corpus.id)
        else:
            report = self.service.code.index(corpus.root, project=corpus.id)
        if fresh:
            log(f"  built {self.path.name} in {time.perf_counter() - start:.0f} s: {report}")

    def ranked(self, system: str, query: str) -> list[Hit]:
        mode: Any = system.removeprefix("rem-")
        if self.corpus.spec.corpus_kind == "docs":
            hits = self.service.kb.search(query, limit=TOP, collection=self.corpus.id, mode=mode)
            return [Hit(_relative(h.source, self.corpus.root), "", h.text) for h in hits]
        code_hits = self.service.code.search(query, project=self.corpus.id, limit=TOP, mode=mode)
        return [Hit(h.path, h.qualified_name, h.code) for h in code_hits]

    def unreachable(self) -> list[str]:
        """Answers that no chunk of the store can match (cut by chunking, or not indexed):
        no search mode can find them, so they bound what the store can score."""
        missing = []
        for answer in self.corpus.answer_list:
            if self.corpus.spec.corpus_kind == "docs":
                path, anchor = answer.split("#", 1)
                chunks = [
                    c
                    for source in (path, str(self.corpus.root / path))
                    for c in self.service.store.get_source("kb", source, collection=self.corpus.id)
                ]
                if not any(anchor in normalised(c.text) for c in chunks):
                    missing.append(answer)
            else:
                path, qualified = answer.split(":", 1)
                symbols = self.service.code.find_symbol(qualified, project=self.corpus.id)
                if not any(s.path == path and s.qualified_name == qualified for s in symbols):
                    missing.append(answer)
        return missing

    def close(self) -> None:
        self.service.close()


def _relative(source: str, root: Path) -> str:
    """A KB document's name as a path under the corpus root: ingested documents are
    named by their path under the ingested folder (absolute paths before 1a0c38d)."""
    if not Path(source).is_absolute():
        return Path(source).as_posix()
    try:
        return Path(source).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return source


def store_path(corpus: Corpus, embedder: Embedder, cache: Path) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.name)
    return cache / "stores" / f"{corpus.id}-{name}.db"


# -- metrics ---------------------------------------------------------------------------


@dataclass
class Metrics:
    n: int = 0
    hit1: float = 0.0
    hit3: float = 0.0
    hit5: float = 0.0
    mrr: float = 0.0
    ndcg10: float = 0.0

    def add(self, rank: int) -> None:
        """``rank``: 1-based rank of the first hit that is an answer, 0 if none in the top 10.

        A question's answers are alternatives (any one of them answers it), so nDCG@10
        has one relevant item: 1 / log2(rank + 1).
        """
        self.n += 1
        self.hit1 += rank == 1
        self.hit3 += 0 < rank <= 3
        self.hit5 += 0 < rank <= 5
        self.mrr += 1 / rank if rank else 0.0
        self.ndcg10 += 1 / math.log2(rank + 1) if 0 < rank <= TOP else 0.0

    def mean(self) -> dict[str, float]:
        d = max(self.n, 1)
        return {
            "n": self.n,
            "hit@1": self.hit1 / d,
            "hit@3": self.hit3 / d,
            "hit@5": self.hit5 / d,
            "MRR": self.mrr / d,
            "nDCG@10": self.ndcg10 / d,
        }


def answer_rank(corpus: Corpus, question: Question, hits: Sequence[Hit]) -> int:
    """1-based rank of the first hit that answers ``question``; 0 if none does."""
    wanted = {corpus.answer_index[a] for a in question.answers}
    for rank, hit in enumerate(hits, 1):
        if corpus.relevant(hit) & wanted:
            return rank
    return 0


@dataclass
class Row:
    set: str
    half: str
    system: str
    metrics: dict[str, float]


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    # (set, system) -> per question: (question, half, 1-based rank of the first answer or 0)
    per_question: dict[tuple[str, str], list[tuple[str, str, int]]] = field(default_factory=dict)
    corpora: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def table(self, half: str | None = None) -> list[Row]:
        return [r for r in self.rows if half is None or r.half == half]


# -- the loop --------------------------------------------------------------------------


def run(
    sets: Iterable[str] | None = None,
    split: str = "both",
    systems: Iterable[str] | None = None,
    *,
    cache: str | Path | None = None,
    embedder: str | Embedder = "local",
    rebuild: bool = False,
    log: Log | None = None,
) -> Results:
    """Evaluate ``systems`` on ``sets`` (all by default) for the ``fit``/``test`` half or both.

    Stores and vectors come from the cache directory when present, so after a scoring
    change only the searches run again. ``rebuild=True`` rebuilds remembrances' stores
    (use it after a change to chunking or indexing).
    """
    say: Log = log or (lambda _msg: None)
    root = corpora.cache_dir(cache)
    known = all_sets()
    names = list(sets) if sets is not None else list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown sets {unknown}; known: {sorted(known)}")
    wanted = list(systems) if systems is not None else list(SYSTEMS)
    bad = [s for s in wanted if s not in SYSTEMS]
    if bad:
        raise ValueError(f"unknown systems {bad}; known: {list(SYSTEMS)}")
    if split not in ("fit", "test", "both"):
        raise ValueError("split must be 'fit', 'test' or 'both'")
    halves = ["fit", "test"] if split == "both" else [split]
    model = create(embedder) if isinstance(embedder, str) else embedder
    results = Results()
    for name in names:
        spec = known[name]
        say(f"{name}: preparing")
        corpus = prepare(spec, root)
        results.corpora[name] = {
            "corpus": corpus.id,
            "files": len(corpus.files),
            "naive chunks": len(corpus.chunks),
            "questions": {h: sum(q.half == h for q in corpus.questions) for h in ("fit", "test")},
        }
        indexes: dict[str, Any] = {}
        if any(s in NAIVE_SYSTEMS for s in wanted):
            nv = NaiveIndex(corpus, model, root, say)
            indexes.update(dict.fromkeys(NAIVE_SYSTEMS, nv))
        rem = None
        if any(s in REM_SYSTEMS for s in wanted):
            rem = RemembrancesIndex(corpus, model, root, say, rebuild=rebuild)
            indexes.update(dict.fromkeys(REM_SYSTEMS, rem))
            results.corpora[name]["store chunks"] = rem.service.store.count()
            results.corpora[name]["unreachable"] = rem.unreachable()
        try:
            for system in wanted:
                start = time.perf_counter()
                per_half = {h: Metrics() for h in halves}
                detail = []
                for q in corpus.questions:
                    if q.half not in per_half:
                        continue
                    hits = indexes[system].ranked(system, q.text)
                    rank = answer_rank(corpus, q, hits)
                    per_half[q.half].add(rank)
                    detail.append((q.text, q.half, rank))
                results.per_question[(name, system)] = detail
                results.seconds[f"{name}/{system}"] = time.perf_counter() - start
                for h in halves:
                    results.rows.append(Row(name, h, system, per_half[h].mean()))
        finally:
            if rem is not None:
                rem.close()
    return results


def open_store(set_name: str, *, cache: str | Path | None = None, embedder: str = "local") -> Any:
    """The cached remembrances store of a set's corpus (building it if needed), open.

    Returns ``(service, corpus)``; search it with ``service.kb.search(...,
    collection=corpus.id)`` or ``service.code.search(..., project=corpus.id)``.
    """
    root = corpora.cache_dir(cache)
    corpus = prepare(all_sets()[set_name], root)
    index = RemembrancesIndex(corpus, create(embedder), root, lambda _m: None)
    return index.service, corpus
