"""What a GGUF file says about itself, read from its header without loading the model.

A GGUF starts with key/value metadata (architecture, trained context, layer and
head counts, the tokenizer's vocabulary and merges) before its tensors. `read_info`
walks that header through a memory map, so only the header's pages are read, and
returns what the local provider needs: the trained context, the size of the KV
cache per token of context (to fit the context to the machine's memory), and a
digest of the `tokenizer.*` entries: the tokenizer's identity, which keys the
token-count cache (two files with one tokenizer share their counts).

Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (little-endian).
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from novel_agent.errors import ModelError

MAGIC = b"GGUF"
# value type -> struct format of a scalar; 8 = string, 9 = array
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q",
            12: "d"}
_STRING, _ARRAY = 8, 9
KV_BYTES = 2           # llama.cpp's default KV cache type is f16


@dataclass(frozen=True)
class GGUFInfo:
    """The parts of a GGUF's metadata the local provider uses."""

    architecture: str
    name: str
    context_length: int          # the trained context (0 when the file does not say)
    kv_bytes_per_token: int      # KV cache bytes per token of context (f16), 0 if unknown
    tokenizer_digest: str        # sha256 of the tokenizer.* entries, as stored
    has_chat_template: bool


class _Reader:
    """A cursor over the mapped header."""

    def __init__(self, data: mmap.mmap | bytes):
        self.data, self.pos = data, 0

    def unpack(self, fmt: str) -> object:
        (value,) = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return value

    def count(self, fmt: str) -> int:
        """Read one unsigned integer (a size, a count or a value type)."""
        value = self.unpack(fmt)
        assert isinstance(value, int), fmt
        return value

    def string(self) -> str:
        size = self.count("Q")
        if size > len(self.data) - self.pos:
            raise ValueError("a string runs past the end of the file")
        raw = self.data[self.pos:self.pos + size]
        self.pos += size
        return bytes(raw).decode("utf-8", "replace")

    def value(self, kind: int) -> object:
        """Read one value; arrays of scalars are skipped over (None), the rest decoded."""
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, count = self.count("I"), self.count("Q")
            if item in _SCALARS:
                self.pos += struct.calcsize("<" + _SCALARS[item]) * count
            else:
                for _ in range(count):
                    self.value(item)
            return None
        raise ValueError(f"unknown GGUF value type {kind}")


def read_metadata(path: Path) -> tuple[dict[str, object], str]:
    """The header's scalar and string values by key, and the digest of its tokenizer.* entries."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _parse(_Reader(data))
    except (OSError, ValueError, struct.error) as exc:
        raise ModelError(f"{path} is not a readable GGUF file: {exc}") from None


def _parse(reader: _Reader) -> tuple[dict[str, object], str]:
    if bytes(reader.data[:4]) != MAGIC:
        raise ValueError("it does not start with GGUF")
    reader.pos = 4
    version = reader.unpack("I")
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} is not supported")
    reader.unpack("Q")                                   # tensor count
    count = reader.count("Q")
    values: dict[str, object] = {}
    tokenizer = hashlib.sha256()
    for _ in range(count):
        start = reader.pos
        key = reader.string()
        value = reader.value(reader.count("I"))
        if key.startswith("tokenizer.") and key != "tokenizer.chat_template":
            tokenizer.update(bytes(reader.data[start:reader.pos]))
        if value is not None:
            values[key] = value
    return values, tokenizer.hexdigest()


def read_info(path: Path) -> GGUFInfo:
    """What `path`'s header says: architecture, trained context, KV bytes per token, tokenizer."""
    values, digest = read_metadata(path)
    arch = str(values.get("general.architecture", ""))

    def number(key: str, default: int = 0) -> int:
        value = values.get(f"{arch}.{key}", default)
        return int(value) if isinstance(value, (int, float)) else default

    heads = number("attention.head_count")
    head_dim = number("embedding_length") // heads if heads else 0
    per_token = number("block_count") * number("attention.head_count_kv", heads) * (
        number("attention.key_length", head_dim) + number("attention.value_length", head_dim))
    return GGUFInfo(architecture=arch, name=str(values.get("general.name", "")),
                    context_length=number("context_length"),
                    kv_bytes_per_token=per_token * KV_BYTES, tokenizer_digest=digest,
                    has_chat_template="tokenizer.chat_template" in values)


def write_gguf(path: Path, values: Mapping[str, str | int | float | Sequence[str]]) -> None:
    """Write a GGUF holding only `values` (str, int, float, bool, or lists of str) and no
    tensors: a fixture for tests, and a way to see what `read_info` reads."""
    out = [MAGIC, struct.pack("<IQQ", 3, 0, len(values))]

    def string(text: str) -> bytes:
        raw = text.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw

    for key, value in values.items():
        out.append(string(key))
        if isinstance(value, bool):
            out.append(struct.pack("<I?", 7, value))
        elif isinstance(value, int):
            out.append(struct.pack("<Iq", 11, value))
        elif isinstance(value, float):
            out.append(struct.pack("<Id", 12, value))
        elif isinstance(value, str):
            out.append(struct.pack("<I", _STRING) + string(value))
        else:
            items = [str(v) for v in value]
            out.append(struct.pack("<IIQ", _ARRAY, _STRING, len(items)))
            out += [string(item) for item in items]
    Path(path).write_bytes(b"".join(out))
