"""Words in Chinese, Japanese and Korean text, for the text indexes.

Both text indexes read a word as a run of letters between separators, and these
scripts put no space between words: "東京に住んでいます" was one word, so a search
for 東京 found nothing. Each run of CJK characters is read as its overlapping pairs
(東京 京に に住 ...), as Lucene's CJK analyzer does: any word of two characters or
more is then found by the pairs it is made of, without a dictionary. A lone character
stays a word. The same function reads the documents (the index) and the questions, so
both sides agree. Text without these scripts is returned as it is.
"""

from __future__ import annotations

import re
import unicodedata

#: Han (with extensions A-F and the compatibility block), kana (half-width too) and
#: Hangul: the scripts written without spaces between words (Korean between phrases).
_RUN = re.compile(
    "["
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # Han extension A
    "\u4e00-\u9fff"  # Han
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # Han compatibility
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # Han extensions B-G
    "]+"
)


def cjk_words(text: str, *, normalize: bool = True, max_bytes: int | None = None) -> str:
    """``text`` with each run of CJK characters written as its overlapping pairs, set
    apart by spaces ("Python3で動く" -> "Python3 で動 動く"); other text unchanged.

    ``normalize``: each run is brought to NFKC first, so half-width katakana, decomposed
    Hangul and compatibility ideographs pair as their usual forms. Only the runs: these
    scripts' mappings do not change between Unicode versions, so a chunk deleted under
    another Python takes back what was indexed. (False: as store step 5 read them.)
    ``max_bytes``: pairs past that many bytes of UTF-8 are left out (PostgreSQL's
    ``tsvector`` holds at most 1 MB).
    """
    if text.isascii() or _RUN.search(text) is None:
        return text
    left = max_bytes

    def pairs(run: re.Match[str]) -> str:
        nonlocal left
        chars = unicodedata.normalize("NFKC", run.group(0)) if normalize else run.group(0)
        words = [chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)]
        if left is not None:
            kept = []
            for word in words:
                left -= len(word.encode("utf-8", "surrogatepass"))
                if left < 0:
                    left = 0
                    break
                kept.append(word)
            words = kept
        return f" {' '.join(words)} " if words else " "

    return _RUN.sub(pairs, text)


def is_pair(term: str) -> bool:
    """Whether ``term`` (a word of :func:`cjk_words`' output) is CJK characters."""
    return _RUN.fullmatch(term) is not None
