"""The public projects the suite reads, pinned, and the corpora made from them.

Each project is a source distribution from PyPI, fetched with ``pip download`` at
benchmark time (never committed), checked against its sha256 and unpacked under the
cache directory. A corpus is a directory of files made from one project (its docs,
its package source, or its source with function docstrings removed) plus the chunks
the naive baselines index; its key hashes the sdist and the preparation, so every
cache built from it (embeddings, stores) is invalidated when either changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CACHE = Path("~/.cache/remembrances/devsuite").expanduser()

# Bump when the way a corpus is prepared from its sdist changes.
PREPARATION_VERSION = "1"


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    sha256: str
    docs: str | None = None  # docs folder inside the sdist
    code: str | None = None  # folder holding the package inside the sdist

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


PROJECTS: dict[str, Project] = {
    p.name: p
    for p in (
        Project(
            "click",
            "8.1.7",
            "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de",
            docs="docs",
            code="src",
        ),
        Project(
            "attrs",
            "24.2.0",
            "5cfb1b9148b5b086569baec03f20d7b6bf3bcacc9a42bebf87ffaaca362f6346",
            docs="docs",
            code="src",
        ),
        Project(
            "jinja2",
            "3.1.4",
            "4a3aee7acbbe7303aede8e9648d13b8bf88a429282aa6122a993f0ac800cb369",
            docs="docs",
            code="src",
        ),
        Project(
            "requests",
            "2.32.3",
            "55365417734eb18255590a9ff9eb97e9e1da868d4ccd6402399eaf68af20a760",
            code="src",
        ),
        Project(
            "httpx",
            "0.27.2",
            "f7c2be1d2f3c3c3160d441802406b206c2b76f5947b11115e6df10c6c65e66c2",
            code=".",
        ),
        Project(
            "werkzeug",
            "3.0.4",
            "34f2371506b250df4d4f84bfe7b0921e4762525762bbd936614909fe25cd7306",
            docs="docs",
            code="src",
        ),
        Project(
            "flask",
            "3.0.3",
            "ceb27b0af3823ea2737928a4d99d125a06175b8512c445cbd9a9ce200ef76842",
            docs="docs",
            code="src",
        ),
        Project(
            "marshmallow",
            "3.23.1",
            "3a8dfda6edd8dcdbf216c0ede1d1e78d230a6dc9c5a088f58c4083b974a0d468",
            docs="docs",
            code="src",
        ),
        Project(
            "python-dateutil",
            "2.9.0.post0",
            "37dd54208da7e1cd875388217d5e00ebd4179249f90fb72437e91a35459a0ad3",
            docs="docs",
            code="src",
        ),
        Project(
            "itsdangerous",
            "2.2.0",
            "e0050c0b7da1eea53ffaf149c0cfbb5c6e2e2b69c4bef22c81fa6eb73e5f6173",
            docs="docs",
            code="src",
        ),
        Project(
            "tomlkit",
            "0.13.2",
            "fff5fe59a87295b278abd31bec92c15d9bc4a06885ab12bcea52c71119392e79",
            code=".",
        ),
        Project(
            "boltons",
            "24.1.0",
            "4a49b7d57ee055b83a458c8682a2a6f199d263a8aa517098bda9bab813554b87",
            code=".",
        ),
        Project(
            "structlog",
            "26.1.0",
            "f63a716cbd1b1291cf7661de7794b455acfa4c43c5bcf1630e6ad5ddc1adb3b7",
            docs="docs",
        ),
        Project(
            "cattrs",
            "26.2.1",
            "679132bfdc225c5ee40c024fc42519954767c387f950dc6751946c586bccdc6d",
            docs="docs",
        ),
        Project(
            "sqlparse",
            "0.6.1",
            "ca722573f848ff2d30e40ea30f53a104b7dea7635ea9285891263eb2c58fb6e7",
            code=".",
        ),
    )
}

DOC_SUFFIXES = (".rst", ".md", ".txt")
# Folders of an sdist's code root that are not the library itself.
NOT_LIBRARY = {"tests", "test", "docs", "examples", "bench", "benchmarks"}


def cache_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """``path``, else ``REMEMBRANCES_DEVSUITE_CACHE``, else ``~/.cache/remembrances/devsuite``."""
    chosen = path or os.environ.get("REMEMBRANCES_DEVSUITE_CACHE") or DEFAULT_CACHE
    root = Path(chosen).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    return root


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(project: Project, cache: Path) -> Path:
    """The unpacked sdist, downloading and checking it on first use."""
    unpacked = cache / "src" / project.key
    if (unpacked / ".verified").exists():
        return unpacked
    downloads = cache / "sdists"
    downloads.mkdir(parents=True, exist_ok=True)
    archive = _archive(project, downloads)
    if archive is None:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--dest",
                str(downloads),
                f"{project.name}=={project.version}",
            ],
            check=True,
        )
        archive = _archive(project, downloads)
        if archive is None:
            raise RuntimeError(f"pip download gave no sdist for {project.key} in {downloads}")
    digest = sha256_of(archive)
    if digest != project.sha256:
        raise RuntimeError(f"{archive} has sha256 {digest}, expected {project.sha256}")
    staging = cache / "src" / f".{project.key}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    (top,) = list(staging.iterdir())
    shutil.rmtree(unpacked, ignore_errors=True)
    top.rename(unpacked)
    shutil.rmtree(staging)
    (unpacked / ".verified").write_text(project.sha256)
    return unpacked


def _archive(project: Project, downloads: Path) -> Path | None:
    for path in downloads.iterdir():
        low = path.name.lower().replace("_", "-")
        if low.startswith(f"{project.name.lower()}-{project.version}.") and low.endswith(
            (".tar.gz", ".zip")
        ):
            return path
    return None


def doc_files(root: Path) -> list[Path]:
    """The docs' prose files, in a stable order."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in DOC_SUFFIXES and not p.name.startswith(".")
    )


def code_files(root: Path) -> list[Path]:
    """The library's own ``.py`` files (no tests, docs or examples), in a stable order."""
    files = []
    for p in sorted(root.rglob("*.py")):
        parts = p.relative_to(root).parts
        if any(part in NOT_LIBRARY or part.startswith(".") for part in parts[:-1]):
            continue
        if p.name in {"setup.py", "conftest.py", "noxfile.py"}:
            continue
        files.append(p)
    return files


def test_files(unpacked: Path) -> list[Path]:
    """The ``.py`` files of the sdist's ``tests/`` folder, in a stable order."""
    folder = unpacked / "tests"
    return sorted(folder.rglob("*.py")) if folder.is_dir() else []


def tree_hash(root: Path, files: list[Path], salt: str = "") -> str:
    digest = hashlib.sha256((PREPARATION_VERSION + salt).encode())
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def copy_tree(
    files: list[Path],
    src_root: Path,
    dest: Path,
    *,
    tests: Sequence[Path] = (),
    unpacked: Path | None = None,
) -> None:
    """Copy ``files`` under ``dest`` (replacing what was there), keeping their paths
    relative to ``src_root``; ``tests`` go under ``dest/tests`` with their paths in the
    sdist's ``tests/`` folder (``unpacked/tests``)."""
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    pairs = [(path, path.relative_to(src_root)) for path in files]
    if tests:
        assert unpacked is not None
        pairs += [(path, path.relative_to(unpacked)) for path in tests]
    for path, relative in pairs:
        target = staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)
