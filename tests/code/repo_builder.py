"""Builds the fixture repository the code-index tests run against."""

from __future__ import annotations

import os
from pathlib import Path

from tests.code import sample_sources as S

#: path -> (language, source)
SOURCES: dict[str, tuple[str, str]] = {
    "src/upload.py": ("python", S.PYTHON),
    "web/cart.js": ("javascript", S.JAVASCRIPT),
    "web/shapes.ts": ("typescript", S.TYPESCRIPT),
    "web/greeting.tsx": ("tsx", S.TSX),
    "go/server.go": ("go", S.GO),
    "rust/point.rs": ("rust", S.RUST),
    "java/UserRepository.java": ("java", S.JAVA),
    "c/point.c": ("c", S.C),
    "cpp/vec.cpp": ("cpp", S.CPP),
    "cs/Order.cs": ("csharp", S.CSHARP),
    "ruby/billing.rb": ("ruby", S.RUBY),
    "php/Mailer.php": ("php", S.PHP),
    "kotlin/Box.kt": ("kotlin", S.KOTLIN),
    "swift/Car.swift": ("swift", S.SWIFT),
    "scripts/deploy.sh": ("bash", S.BASH),
    "docs/guide.md": ("markdown", S.MARKDOWN),
}

BROKEN_PY = "def broken(:\n    pass\n\n\ndef still_found():\n    return 1\n"
#: Mentions getUserName only in a comment and a string: not references.
MENTIONS_PY = (
    "# getUserName is documented elsewhere\n"
    "LABEL = 'getUserName'\n"
    "\n"
    "def caller(session):\n"
    "    return session.getUserName(None)\n"
)

#: The files the indexer must index (everything else is ignored or skipped).
INDEXED = sorted([*SOURCES, "src/broken.py", "src/mentions.py", "src/generated_keep.py"])
MAX_FILE_BYTES = 100_000


def build_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, (_, source) in SOURCES.items():
        write(root / rel, source)
    write(root / "src/broken.py", BROKEN_PY)
    write(root / "src/mentions.py", MENTIONS_PY)
    # Nested .gitignore with a negation, root .gitignore, .git/info/exclude.
    write(root / ".gitignore", "*.log\nsecret/\n")
    write(root / "src/.gitignore", "generated_*.py\n!generated_keep.py\n")
    write(root / "src/generated_skip.py", "def generated(): pass\n")
    write(root / "src/generated_keep.py", "def kept(): pass\n")
    write(root / "secret/hidden.py", "def hidden(): pass\n")
    write(root / "debug.log", "log line\n")
    write(root / ".git/info/exclude", "local_only.py\n")
    write(root / ".git/config", "[core]\n")
    write(root / "local_only.py", "def local(): pass\n")
    # Default excludes.
    write(root / "node_modules/lib/index.js", "function vendored() {}\n")
    write(root / "build/out.py", "def built(): pass\n")
    # A binary file with a code extension, and an unsupported one.
    (root / "c/blob.c").write_bytes(b"\x7fELF\x00\x00\x01binary\x00stuff")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    # A file over the size limit.
    write(root / "src/huge.py", "X = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    # A symlink loop.
    os.symlink("..", root / "src" / "loop")
    return root


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
