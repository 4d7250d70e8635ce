"""The CLI's start stays light: through --url a hook never loads numpy, apsw or a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .conftest import REPO

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
