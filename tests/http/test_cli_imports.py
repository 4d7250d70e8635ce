"""The CLI's start stays light: through --url a hook never loads numpy, apsw or a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .conftest import REPO, Server, ServerFactory

HEAVY = ("numpy", "apsw", "sqlite_vec", "onnxruntime", "tokenizers", "fastapi", "mcp", "email")


def test_importing_the_cli_loads_no_store_model_or_server() -> None:
    code = (
        "import json, sys, remembrances.cli; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(done.stdout) == []


def heavy_after(server: Server, *args: str) -> list[str]:
    """The heavy modules loaded by one CLI command sent to ``server``."""
    heavy = [m for m in HEAVY if m != "email"]  # the client's http.client needs email
    code = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: print(json.dumps([m for m in {heavy!r} if m in sys.modules])))\n"
        "from remembrances.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True, text=True, env=_client_env(server), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def _client_env(server: Server) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "REMEMBRANCES_URL": server.url}
    env.pop("REMEMBRANCES_TOKEN", None)
    return env


def test_enrich_through_a_server_loads_no_store_model_or_server(serve: ServerFactory) -> None:
    assert heavy_after(serve(), "enrich", "how do uploads retry?") == []


def test_search_by_kind_through_a_server_loads_no_store(serve: ServerFactory) -> None:
    """``search --kind`` checks the layers' kinds without opening the service (which
    imports the store) or asking the server for its stats on every search."""
    server = serve()
    for kinds in (("--kind", "kb"), ("--kind", "events", "--kind", "code")):
        assert heavy_after(server, "search", "retry", *kinds) == [], kinds
    typo = subprocess.run(
        [sys.executable, "-m", "remembrances.cli", "search", "retry", "--kind", "widget"],
        capture_output=True, text=True, env=_client_env(server), timeout=120,
    )  # fmt: skip
    assert typo.returncode != 0 and "use one of: code, event, kb" in typo.stderr
