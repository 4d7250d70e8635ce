"""Grammars load and parse with networking disabled for the whole process."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.code.sample_sources import EXPECTED_LANGUAGES

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import socket, sys

    def refuse(*args, **kwargs):
        raise OSError("networking is disabled in this test")

    def audit(event, args):
        if event.startswith("socket."):
            raise OSError(f"networking is disabled in this test ({event})")

    sys.addaudithook(audit)
    socket.socket = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    from remembrances.code.parsing.analysis import analyze_source
    from remembrances.code.parsing.languages import GRAMMARS
    from tests.code.test_symbols import EXPECTED

    parsed = []
    for grammar in GRAMMARS:
        source, expected = EXPECTED[grammar.name]
        analysis = analyze_source("f", grammar.name, source.encode())
        assert not analysis.has_error, grammar.name
        assert [s.qualified_name for s in analysis.symbols] == [e[1] for e in expected]
        parsed.append(grammar.name)
    try:
        socket.create_connection(("pypi.org", 443), timeout=2)
    except OSError:
        pass
    else:
        raise SystemExit("the network was reachable")
    print(" ".join(parsed))
    """
)


def _isolation() -> list[str]:
    """``unshare -n`` (a process without network interfaces) when this machine allows it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True)
    return [unshare, "-n"] if probe.returncode == 0 else []


def test_all_grammars_parse_without_network() -> None:
    result = subprocess.run(
        [*_isolation(), sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    languages = set(result.stdout.split())
    assert languages == EXPECTED_LANGUAGES
