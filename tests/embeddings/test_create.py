"""Choosing an embedder by spec: names that round-trip, keys and SDKs checked up front."""

from __future__ import annotations

import subprocess
import sys

import pytest

from remembrances.embeddings import HashEmbedder, create
from remembrances.embeddings.remote import RemoteEmbedder
from remembrances.errors import EmbedderUnavailableError

from .wire_servers import KEY

SPECS_WITH_KEYS = [
    ("openai:text-embedding-3-small", "OPENAI_API_KEY", 1536),
    ("openai:text-embedding-3-small@256", "OPENAI_API_KEY", 256),
    ("voyage:voyage-3.5", "VOYAGE_API_KEY", 1024),
    ("voyage:voyage-3.5@2048", "VOYAGE_API_KEY", 2048),
    ("google:gemini-embedding-001", "GOOGLE_API_KEY", 3072),
    ("google:gemini-embedding-001@768", "GEMINI_API_KEY", 768),
]


@pytest.mark.parametrize(("spec", "variable", "dim"), SPECS_WITH_KEYS)
def test_name_is_a_spec_that_create_accepts_again(
    spec: str, variable: str, dim: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, KEY)
    embedder = create(spec)
    again = create(embedder.name)
    assert embedder.name == again.name == spec
    assert embedder.dim == again.dim == dim  # known per model: no request needed


@pytest.mark.parametrize(("spec", "variable", "_dim"), SPECS_WITH_KEYS)
def test_missing_key_is_reported_at_create(spec: str, variable: str, _dim: int) -> None:
    # the variable first (the CLI's way), the Python argument as the alternative
    with pytest.raises(EmbedderUnavailableError, match=rf"{variable}.*from Python, api_key="):
        create(spec)


def test_ollama_needs_no_key_and_makes_no_request_at_create() -> None:
    embedder = create("ollama:nomic-embed-text", host="127.0.0.1:9")  # nothing listens there
    assert (embedder.name, embedder.dim) == ("ollama:nomic-embed-text", 768)


def test_ollama_model_names_with_tags_keep_their_tag() -> None:
    embedder = create("ollama:snowflake-arctic-embed:22m@256", host="127.0.0.1:9")
    assert embedder.name == "ollama:snowflake-arctic-embed:22m@256"
    assert embedder.dim == 256


@pytest.mark.parametrize(
    ("provider", "module", "extra", "options"),
    [
        ("openai", "openai", "openai", {"api_key": KEY}),
        ("voyage", "voyageai", "voyage", {"api_key": KEY}),
        ("google", "google.genai", "google", {"api_key": KEY}),
        ("ollama", "httpx", "ollama", {}),
    ],
)
def test_missing_sdk_names_the_extra(
    provider: str,
    module: str,
    extra: str,
    options: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(EmbedderUnavailableError, match=rf"pip install 'remembrances\[{extra}\]'"):
        create(f"{provider}:some-model", dim=8, **options)


@pytest.mark.parametrize(
    "spec",
    [
        "cohere:embed-v4",
        "openai:text-embedding-3-small@",
        "openai:text-embedding-3-small@0",
        "openai:text-embedding-3-small@-5",
        "openai:text-embedding-3-small@abc",
        "openai:@256",
        "hash:notanumber",
        "hash:4",
    ],
)
def test_bad_specs_are_refused(spec: str) -> None:
    with pytest.raises(EmbedderUnavailableError):
        create(spec, api_key=KEY) if not spec.startswith("hash") else create(spec)


def test_conflicting_dimensions_are_refused() -> None:
    with pytest.raises(EmbedderUnavailableError, match="also given"):
        create("openai:text-embedding-3-small@256", api_key=KEY, dimensions=512)


def test_unknown_option_is_a_clear_error() -> None:
    with pytest.raises(EmbedderUnavailableError, match="bad options for the openai embedder"):
        create("openai:text-embedding-3-small", api_key=KEY, colour="blue")


def test_bare_provider_uses_its_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    assert create("voyage").name == "voyage:voyage-3.5"
    assert create("ollama", host="127.0.0.1:9").name == "ollama:nomic-embed-text"


def test_environment_variable_chooses_the_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "hash:32")
    embedder = create()
    assert isinstance(embedder, HashEmbedder) and embedder.dim == 32
    monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "openai:text-embedding-3-large")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    remote = create()
    assert isinstance(remote, RemoteEmbedder) and remote.dim == 3072


def test_compatible_base_url_without_key_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    embedder = create("openai:text-embedding-3-small")
    assert embedder.name == "openai:text-embedding-3-small"
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    with pytest.raises(EmbedderUnavailableError, match="OPENAI_API_KEY"):
        create("openai:text-embedding-3-small")


@pytest.mark.parametrize(
    "bad",
    [
        {"dim": 0},
        {"dim": -3},
        {"dim": True},
        {"dimensions": 2.5},
        {"timeout": 0},
        {"timeout": float("nan")},
        {"timeout": "5"},
        {"concurrency": 0},
        {"batch_size": 0},
    ],
)
def test_bad_numeric_options_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(EmbedderUnavailableError):
        create("ollama:custom", host="127.0.0.1:9", **bad)


def test_sdks_are_imported_only_when_their_provider_is_used() -> None:
    code = (
        "import sys\n"
        "from remembrances.embeddings import create\n"
        "create('hash:16')\n"
        "before = [m for m in ('openai', 'voyageai', 'google.genai', 'httpx') if m in sys.modules]\n"
        "create('voyage:voyage-3.5', api_key='k')\n"
        "print(before, 'voyageai' in sys.modules, 'openai' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["[]", "True", "False"]
