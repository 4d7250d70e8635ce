"""A real ``remembrances serve`` on loopback, driven with a real HTTP client (httpx)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    db: Path
    root: Path
    process: subprocess.Popen[bytes]

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def start_server(
    db: Path, root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    for name in ("REMEMBRANCES_DB", "REMEMBRANCES_URL", "REMEMBRANCES_TOKEN"):
        if name not in (env or {}):
            environment.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-m", "remembrances.cli", "--db", str(db), "--embedder", "hash:64",
         "serve", "--allow-root", str(root), *args],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
    )  # fmt: skip


def wait_until_up(url: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise AssertionError("server did not answer /health")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


ServerFactory = Callable[..., Server]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServerFactory]:
    """``serve("--token", "t")``: a server on a fresh file; stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def factory(*args: str, db: Path | None = None, env: dict[str, str] | None = None) -> Server:
        root = tmp_path / "root"
        root.mkdir(exist_ok=True)
        port = free_port()
        db = db or tmp_path / "served.db"
        process = start_server(db, root, "--port", str(port), *args, env=env)
        started.append(process)
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, process)
        return Server(url, db, root, process)

    yield factory
    for process in started:
        stop(process)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server per test module (starting one takes a second or two)."""
    base = tmp_path_factory.mktemp("served")
    root = base / "root"
    root.mkdir()
    port = free_port()
    process = start_server(base / "served.db", root, "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        yield Server(url, base / "served.db", root, process)
    finally:
        stop(process)


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A CLI runner that reaches no memory but the one a test names (--db or --url)."""
    for name in ("REMEMBRANCES_DB", "REMEMBRANCES_URL", "REMEMBRANCES_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "hash:64")
    return CliRunner()
