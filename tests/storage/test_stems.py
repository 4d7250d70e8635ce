"""Store.stems: words as the text index stems them, on both engines (the code layer
compares a query's words with symbol names through it)."""

from __future__ import annotations

import pytest

from remembrances import Store

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_words_are_stemmed_as_the_index_stems_them(store: Store) -> None:
    stems = store.stems(["deploys", "deploy", "parsing", "parse", "Headers", "header"])
    assert stems[0] == stems[1] and stems[2] == stems[3] and stems[4] == stems[5]
    assert len(set(stems)) == 3
    assert store.stems([]) == []
