"""Token counting: the encoding per model, cached counts, the offline vocabulary.

tiktoken downloads its vocabulary on first use, which fails offline. The
`bpe-openai` package ships the same files gzipped (their sha256 equals what
tiktoken expects), so `ensure_vocabulary` decompresses the one needed into
tiktoken's cache under the name tiktoken looks for (`sha1(url)`), and tiktoken
then loads and verifies it without touching the network.

Counts are cached by content hash, in memory and in an optional `CountStore`
(the SQLite index implements it), so a scene is counted once in its life.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.metadata
import importlib.resources
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import tiktoken

from novel_agent.errors import ConfigError, NovelError

_BLOB = "https://openaipublic.blob.core.windows.net/encodings"


@dataclass(frozen=True)
class Vocabulary:
    """Where tiktoken fetches an encoding's ranks from, and the sha256 it expects."""

    url: str
    sha256: str

    @property
    def cache_key(self) -> str:
        """The file name tiktoken gives this vocabulary in its cache dir."""
        return hashlib.sha1(self.url.encode()).hexdigest()


# Copied from tiktoken_ext/openai_public.py (tiktoken 0.7 - 0.14).
VOCABULARIES: dict[str, Vocabulary] = {
    "cl100k_base": Vocabulary(f"{_BLOB}/cl100k_base.tiktoken",
                              "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": Vocabulary(f"{_BLOB}/o200k_base.tiktoken",
                             "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}

# 4o, 4.1, 4.5, 5, gpt-oss (o200k ranks plus chat specials) and the o-series.
_O200K_MODELS = re.compile(r"^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o\d)")


def encoding_name_for_model(model: str, override: str = "") -> str:
    """The tiktoken encoding for `model`: `override` if set, else by model family.

    >>> encoding_name_for_model("openai/gpt-4o-mini")
    'o200k_base'
    """
    if override:
        return override
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = name.removeprefix("ft:")
    return "o200k_base" if _O200K_MODELS.match(name) else "cl100k_base"


# ---------------------------------------------------------------- vocabulary


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads its cache from, by tiktoken's own rule.

    TIKTOKEN_CACHE_DIR, else DATA_GYM_CACHE_DIR, else `<tempdir>/data-gym-cache`.
    None when caching is disabled (the variable is set to "").
    """
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            value = os.environ[variable]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _private_cache_dir() -> Path:
    """A per-user cache dir for when tiktoken's own is unusable."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "novel_agent" / "tiktoken"


def _shipped_vocabulary(encoding_name: str) -> bytes:
    """The decompressed vocabulary file that `bpe-openai` ships."""
    relative = f"bpe_openai/data/{encoding_name}.tiktoken.gz"
    try:
        files = importlib.metadata.files("bpe-openai") or []
        located = [f.locate() for f in files if str(f).replace("\\", "/") == relative]
        path = Path(located[0]) if located else None
        if path is None or not path.is_file():  # no RECORD: ask the import system
            path = importlib.resources.files("bpe_openai") / "data" / f"{encoding_name}.tiktoken.gz"
        return gzip.decompress(path.read_bytes())
    except (importlib.metadata.PackageNotFoundError, ModuleNotFoundError, OSError) as exc:
        raise NovelError(f"cannot read the offline vocabulary {relative} "
                         f"(is bpe-openai installed?): {exc}") from None


def _file_matches(path: Path, sha256: str) -> bool:
    """True when `path` exists and holds content with this sha256."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except FileNotFoundError:
        return False


def _seed(vocabulary: Vocabulary, encoding_name: str, cache_dir: Path) -> Path:
    """Write the shipped vocabulary into `cache_dir` unless a good copy is there."""
    target = cache_dir / vocabulary.cache_key
    if _file_matches(target, vocabulary.sha256):
        return target
    data = _shipped_vocabulary(encoding_name)
    actual = hashlib.sha256(data).hexdigest()
    if actual != vocabulary.sha256:
        raise NovelError(f"the shipped {encoding_name} vocabulary has sha256 {actual}, "
                         f"but tiktoken expects {vocabulary.sha256}; reinstall bpe-openai")
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=cache_dir, prefix=f".{vocabulary.cache_key}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, 0o644)  # as tiktoken writes it: the default dir is shared
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def ensure_vocabulary(encoding_name: str, cache_dir: Path | None = None) -> Path:
    """Make sure tiktoken's cache holds `encoding_name`'s vocabulary; return its path.

    With `cache_dir`, seed exactly there. Without it, seed tiktoken's own cache
    dir; when that is unwritable (or caching is disabled), seed a private dir
    under the user's cache and point TIKTOKEN_CACHE_DIR at it, so tiktoken
    finds the file there.
    """
    vocabulary = VOCABULARIES.get(encoding_name)
    if vocabulary is None:
        known = ", ".join(sorted(VOCABULARIES))
        raise ConfigError(f"unknown encoding '{encoding_name}' (expected one of: {known})",
                          key="context.encoding")
    if cache_dir is not None:
        return _seed(vocabulary, encoding_name, Path(cache_dir))
    default = tiktoken_cache_dir()
    if default is not None:
        try:
            return _seed(vocabulary, encoding_name, default)
        except OSError:
            pass
    private = _private_cache_dir()
    path = _seed(vocabulary, encoding_name, private)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(private)
    return path


@functools.lru_cache(maxsize=None)
def get_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's Encoding for `name`, its vocabulary seeded offline first."""
    ensure_vocabulary(name)
    return tiktoken.get_encoding(name)


# ---------------------------------------------------------------- counting


class CountStore(Protocol):
    """A persistent cache of token counts, keyed by content hash."""

    def get(self, key: str) -> int | None: ...

    def put(self, key: str, n: int) -> None: ...


class DictStore:
    """The simplest CountStore: a dict in memory."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def get(self, key: str) -> int | None:
        """The stored count for `key`, or None."""
        return self.counts.get(key)

    def put(self, key: str, n: int) -> None:
        """Remember a count."""
        self.counts[key] = n


@dataclass
class CountStats:
    """How counts were answered: from memory, from the store, or by encoding."""

    hits: int = 0
    store_hits: int = 0
    misses: int = 0


# Per OpenAI's cookbook ("How to count tokens with tiktoken"), for current chat models.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3
DEFAULT_MARKER = "\n[… {n} tokens cut …]\n"


class TokenCounter:
    """Counts tokens for one model's encoding, each distinct text encoded once."""

    def __init__(self, model: str, encoding: str = "", store: CountStore | None = None):
        self.model = model
        self.encoding_name = encoding_name_for_model(model, encoding)
        self.store = store
        self.stats = CountStats()
        self._memo: dict[str, int] = {}

    @functools.cached_property
    def encoding(self) -> tiktoken.Encoding:
        """The tiktoken Encoding, loaded on first use."""
        return get_encoding(self.encoding_name)

    def key(self, text: str) -> str:
        """The cache key of `text`: sha1 of the encoding name and the text."""
        return hashlib.sha1(f"{self.encoding_name}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()

    def count(self, text: str) -> int:
        """The number of tokens in `text` (special-token strings count as plain text)."""
        key = self.key(text)
        n = self._memo.get(key)
        if n is not None:
            self.stats.hits += 1
            return n
        n = self.store.get(key) if self.store is not None else None
        if n is not None:
            self.stats.store_hits += 1
        else:
            self.stats.misses += 1
            n = len(self.encoding.encode_ordinary(text))
            if self.store is not None:
                self.store.put(key, n)
        self._memo[key] = n
        return n

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of a chat request: every string field of every message,
        3 per message, 1 more per `name`, 3 for priming the reply. List contents
        (multimodal parts) count their text parts."""
        total = REPLY_PRIMING
        for message in messages:
            total += TOKENS_PER_MESSAGE
            for field, value in message.items():
                if isinstance(value, str):
                    total += self.count(value)
                elif field == "content" and isinstance(value, list):
                    total += sum(self.count(part.get("text") or "") for part in value
                                 if isinstance(part, dict))
                if field == "name":
                    total += TOKENS_PER_NAME
        return total

    def truncate_middle(self, text: str, max_tokens: int, marker: str = DEFAULT_MARKER) -> str:
        """Keep the head and tail of `text` around `marker` within `max_tokens`.

        `{n}` in the marker becomes the number of tokens cut. The result, marker
        included, never exceeds `max_tokens`; when even the marker does not fit,
        only the head is kept.
        """
        tokens = self.encoding.encode_ordinary(text)
        if len(tokens) <= max_tokens:
            return text
        keep = max_tokens - self._encoded_len(_render(marker, len(tokens)))
        while keep > 0:
            head = self._decode(tokens[:(keep + 1) // 2])
            tail = self._decode(tokens[len(tokens) - keep // 2:]) if keep // 2 else ""
            result = head + _render(marker, len(tokens) - keep) + tail
            excess = self._encoded_len(result) - max_tokens
            if excess <= 0:
                return result
            keep -= excess
        return self._head(tokens, max_tokens)

    def _head(self, tokens: list[int], max_tokens: int) -> str:
        """The longest decoded prefix of `tokens` that re-encodes within `max_tokens`."""
        keep = max_tokens
        while keep > 0:
            head = self._decode(tokens[:keep])
            excess = self._encoded_len(head) - max_tokens
            if excess <= 0:
                return head
            keep -= excess
        return ""

    def _encoded_len(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    def _decode(self, tokens: list[int]) -> str:
        # "ignore" drops the halves of characters split at the cut, so the
        # head stays a true prefix of the text and the tail a true suffix.
        return self.encoding.decode_bytes(tokens).decode("utf-8", "ignore")


def _render(marker: str, n: int) -> str:
    return marker.replace("{n}", f"{n:,}")
