"""Real English text that has nothing to do with the test notes, to bury them under.

Sentences from Python's own reference (``pydoc_data.topics``) and the first
paragraphs of standard-library docstrings: varied, on disk everywhere Python is,
and the same on every run of one Python version. Words like "release",
"branch" and "frozen" occur in it, so it moves the word statistics the way a
real store would.
"""

from __future__ import annotations

import importlib
import inspect
import pydoc_data.topics
import re

MODULES = [
    "argparse",
    "asyncio",
    "base64",
    "collections",
    "concurrent.futures",
    "contextlib",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "email.message",
    "enum",
    "fractions",
    "ftplib",
    "functools",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "http.client",
    "http.server",
    "imaplib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "logging",
    "mailbox",
    "multiprocessing",
    "numbers",
    "operator",
    "os",
    "pathlib",
    "pickle",
    "platform",
    "plistlib",
    "poplib",
    "pprint",
    "queue",
    "random",
    "re",
    "sched",
    "secrets",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "smtplib",
    "socket",
    "socketserver",
    "sqlite3",
    "ssl",
    "statistics",
    "string",
    "struct",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "tokenize",
    "traceback",
    "types",
    "unittest",
    "urllib.parse",
    "urllib.request",
    "uuid",
    "warnings",
    "weakref",
    "xml.dom.minidom",
    "xml.etree.ElementTree",
    "zipfile",
    "zoneinfo",
]


def _paragraphs() -> list[str]:
    found = [p for text in pydoc_data.topics.topics.values() for p in text.split("\n\n")]
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # a module this Python lacks
            continue
        for _, member in sorted(vars(module).items()):
            members = [member]
            if inspect.isclass(member):
                members += [m for _, m in sorted(vars(member).items()) if callable(m)]
            for item in members:
                doc = inspect.getdoc(item) if callable(item) else None
                if doc:
                    found.append(doc.split("\n\n")[0])
    return found


def unrelated_sentences(count: int) -> list[str]:
    """``count`` distinct sentences of six to sixteen words (fewer if Python has fewer).

    Long sentences are cut at sixteen words: embedding 5,000 of them then takes
    about a minute on two cores.
    """
    sentences: dict[str, None] = {}
    for paragraph in _paragraphs():
        text = " ".join(paragraph.split())
        if text.startswith((">>>", "...")):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            words = sentence.split()
            if len(words) >= 6:
                sentences[" ".join(words[:16])] = None
    return list(sentences)[:count]
