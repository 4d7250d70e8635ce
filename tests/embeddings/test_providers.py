"""Every provider, driven through its real SDK against a server speaking its wire format."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from remembrances.embeddings import RetryPolicy
from remembrances.embeddings.remote import RemoteEmbedder
from remembrances.errors import EmbeddingError, InvalidInputError, InvalidVectorError

from .conftest import Case, Sleeps
from .wire_servers import HANG, MALFORMED, WRONG_DIM, Fail, WireServer, fake_vector, unit

Make = Callable[..., RemoteEmbedder]


def test_documents_and_query_round_trip(case: Case, server: WireServer, make: Make) -> None:
    embedder = make()
    texts = ["the cat sat on the mat", "grüße aus köln ☕", "def f(x): return x"]
    matrix = embedder.embed_documents(texts)
    query = embedder.embed_query("where did the cat sit?")

    assert embedder.name == case.spec
    assert matrix.shape == (3, case.dim) and matrix.dtype == np.float32
    for row, text in zip(matrix, texts, strict=True):
        expected = unit(fake_vector(case.document(text), case.dim))
        np.testing.assert_allclose(row, expected, atol=1e-6)
    np.testing.assert_allclose(
        query, unit(fake_vector(case.query("where did the cat sit?"), case.dim)), atol=1e-6
    )
    assert [case.texts_of(server, i) for i in range(2)] == [
        [case.document(t) for t in texts],
        [case.query("where did the cat sit?")],
    ]
    assert embedder.calls == 3 and embedder.requests == 2 and embedder.truncated == 0


def test_batches_respect_batch_size_and_keep_order(
    case: Case, server: WireServer, make: Make
) -> None:
    embedder = make(batch_size=2, concurrency=3)
    texts = [f"text number {i}" for i in range(7)]
    matrix = embedder.embed_documents(texts)

    sizes = sorted(len(case.texts_of(server, i)) for i in range(len(server.embed_requests)))
    assert sizes == [1, 2, 2, 2]
    for row, text in zip(matrix, texts, strict=True):
        np.testing.assert_allclose(row, unit(fake_vector(case.document(text), case.dim)), atol=1e-6)


def test_concurrency_is_bounded(case: Case, server: WireServer, make: Make) -> None:
    server.delay = 0.05
    embedder = make(batch_size=1, concurrency=2)
    embedder.embed_documents([f"t{i}" for i in range(8)])
    assert len(server.embed_requests) == 8
    assert server.max_in_flight <= 2


def test_a_large_call_is_spread_over_the_request_slots(
    case: Case, server: WireServer, make: Make
) -> None:
    server.delay = 0.05
    embedder = make(batch_size=1000, concurrency=4)
    texts = [f"text number {i}" for i in range(200)]
    matrix = embedder.embed_documents(texts)
    sizes = sorted(len(case.texts_of(server, i)) for i in range(len(server.embed_requests)))
    assert sizes == [50, 50, 50, 50]
    assert server.max_in_flight > 1
    for row, text in zip(matrix, texts, strict=True):
        np.testing.assert_allclose(row, unit(fake_vector(case.document(text), case.dim)), atol=1e-6)
    # small calls are not cut into tiny requests
    before = len(server.embed_requests)
    embedder.embed_documents(texts[:20])
    assert len(server.embed_requests) == before + 1
    # what the Store hands it per call: a full request per slot (Google takes 100 at most)
    assert embedder.call_size == min(embedder.batch_size, 128) * 4


def test_rate_limit_then_success_honours_retry_after(
    case: Case, server: WireServer, make: Make, sleeps: Sleeps
) -> None:
    server.plan(Fail(429, {"Retry-After": "2"}))
    matrix = make().embed_documents(["hello"])
    np.testing.assert_allclose(
        matrix[0], unit(fake_vector(case.document("hello"), case.dim)), atol=1e-6
    )
    assert len(server.embed_requests) == 2
    assert sleeps == [2.0]


def test_server_error_storm_ends_in_a_clear_error(
    case: Case, server: WireServer, make: Make, sleeps: Sleeps
) -> None:
    server.default = Fail(500)
    embedder = make()
    with pytest.raises(EmbeddingError, match=r"failed after 4 attempts; last error: HTTP 500"):
        embedder.embed_documents(["hello"])
    assert len(server.embed_requests) == 4
    assert len(sleeps) == 3  # backoff between attempts, none after the last
    assert all(0 < s <= 0.05 for s in sleeps)
    assert embedder.calls == 0


def test_503_is_retried_too(case: Case, server: WireServer, make: Make) -> None:
    server.plan(Fail(503), Fail(502))
    make().embed_documents(["hello"])
    assert len(server.embed_requests) == 3


def test_malformed_json_is_a_clear_error_without_retries(
    case: Case, server: WireServer, make: Make
) -> None:
    server.plan(MALFORMED)
    with pytest.raises(EmbeddingError, match=r"JSON|could not be read"):
        make().embed_documents(["hello"])
    assert len(server.embed_requests) == 1


def test_wrong_length_vectors_are_refused(case: Case, server: WireServer, make: Make) -> None:
    server.plan(WRONG_DIM)
    with pytest.raises(InvalidVectorError, match=f"length {case.dim - 1}, expected {case.dim}"):
        make().embed_documents(["hello"])
    server.plan(WRONG_DIM)  # a file that recorded a bad size (one odd probe answer) can mend
    with pytest.raises(InvalidVectorError, match="remembrances reembed --embedder"):
        make().embed_documents(["hello"])


def test_hung_server_hits_the_timeout(case: Case, server: WireServer, make: Make) -> None:
    server.default = HANG
    embedder = make(timeout=0.3, retry=RetryPolicy(attempts=2, base_delay=0.01))
    with pytest.raises(EmbeddingError, match="timeout"):
        embedder.embed_query("anyone there?")
    assert len(server.embed_requests) == 2


def test_over_long_input_is_truncated_and_counted(
    case: Case, server: WireServer, make: Make
) -> None:
    embedder = make(max_input_tokens=100)
    embedder.embed_documents(["short", "word " * 10_000])
    sent = case.texts_of(server, 0)
    assert sent[0] == case.document("short")
    assert len(sent[1]) == 300  # 100 tokens at a conservative 3 ASCII chars each
    assert sent[1].startswith(case.document("word word"))
    assert embedder.truncated == 1


@pytest.mark.parametrize("bad", ["", "   ", "lone \ud800 surrogate", None, b"bytes"])
def test_hostile_input_is_refused_before_any_request(
    case: Case, server: WireServer, make: Make, bad: object
) -> None:
    with pytest.raises(InvalidInputError):
        make().embed_documents(["fine", bad])  # type: ignore[list-item]
    assert server.embed_requests == []


def test_empty_list_sends_nothing(case: Case, server: WireServer, make: Make) -> None:
    matrix = make().embed_documents([])
    assert matrix.shape == (0, case.dim)
    assert server.embed_requests == []


def test_fts_syntax_and_quotes_are_just_text(case: Case, server: WireServer, make: Make) -> None:
    text = 'what\'s "NEAR(a b)" -x OR y AND (z*) ? {"json": true}'
    vector = make().embed_query(text)
    assert case.texts_of(server, 0) == [case.query(text)]
    np.testing.assert_allclose(vector, unit(fake_vector(case.query(text), case.dim)), atol=1e-6)


def test_bad_request_fails_at_once(
    case: Case, server: WireServer, make: Make, sleeps: Sleeps
) -> None:
    server.plan(Fail(400))
    with pytest.raises(EmbeddingError, match=r"rejected the request \(HTTP 400\)"):
        make().embed_documents(["hello"])
    assert len(server.embed_requests) == 1 and sleeps == []


def test_first_failure_stops_the_batches_not_yet_started(
    case: Case, server: WireServer, make: Make
) -> None:
    server.plan(Fail(400))
    server.delay = 0.05
    embedder = make(batch_size=1, concurrency=2)
    with pytest.raises(EmbeddingError):
        embedder.embed_documents([f"t{i}" for i in range(12)])
    assert len(server.embed_requests) < 12
    assert embedder.calls == len(server.embed_requests) - 1
