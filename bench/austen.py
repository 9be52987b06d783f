"""Jane Austen's six novels, chapter by chapter, from Debian's r-cran-janeaustenr.

The package (`apt-get install --no-install-recommends r-cran-janeaustenr`) keeps the
novels as R's lazy-load database: `data/Rdata.rdx`, a gzipped serialized R list that
says where each object lies in `data/Rdata.rdb` (its offset and length), and at each
place there a 4-byte length and a zlib stream of the object, serialized. Each novel is a
character vector of the book's lines ("" between paragraphs), so a reader of R's
serialization format (XDR, version 2 or 3) needs only a few of its types: vectors of
strings, integers, reals and logicals, lists, pairlists (attributes) and symbols. R is
not needed.

    python -m bench.austen            # each novel's chapters and words
"""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from pathlib import Path
from typing import Any

DATA = Path("/usr/lib/R/site-library/janeaustenr/data")
INSTALL = ("apt-get install --no-install-recommends r-cran-janeaustenr "
           "(Debian's package of the janeaustenr data set; R itself is not needed)")
NOVELS = {                                  # in the order they were published
    "sensesensibility": "Sense and Sensibility", "prideprejudice": "Pride and Prejudice",
    "mansfieldpark": "Mansfield Park", "emma": "Emma",
    "northangerabbey": "Northanger Abbey", "persuasion": "Persuasion",
}
_HEADING = re.compile(r"^\s*chapter\s+(?:[ivxlc]+|\d+)\b\.?\s*$", re.IGNORECASE)
_VOLUME = re.compile(r"^\s*volume\b", re.IGNORECASE)
_END = re.compile(r"^\s*(?:finis|the end|a note on the text)\s*$", re.IGNORECASE)

# R's SEXP types (src/main/serialize.c) that a data set of texts uses.
NILVALUE, REF, SYM, LIST, CHAR, LGL, INT, REAL, STR, VEC, EXPR = (
    254, 255, 1, 2, 9, 10, 13, 14, 16, 19, 20)
_SPECIAL = {241, 242, 250, 251, 252, 253}    # base and empty environments, missing args…
_PAIRS = {LIST, 6, 17}                        # pairlist, language, dotted pairs
_LATIN1 = 1 << 2


class RVector(list):
    """An R vector read back: its items, and its attributes (`names` and so on)."""

    def __init__(self, items: list, attributes: dict[str, Any] | None = None):
        super().__init__(items)
        self.attributes = attributes or {}

    def named(self) -> dict[str, Any]:
        """The items by their names (a named list or vector)."""
        return dict(zip(self.attributes.get("names") or [], self))


class Unserializer:
    """R's serialization format, XDR (big-endian), read for the types above."""

    def __init__(self, data: bytes):
        self.data, self.at, self.refs = data, 0, []
        if data[:2] != b"X\n":
            raise ValueError(f"not R's XDR serialization (it starts {data[:2]!r})")
        self.at = 2
        version = self._int()
        self._int(), self._int()                 # the R that wrote it, the R it needs
        if version == 3:
            n = self._int()
            self.at += n                         # the native encoding's name

    def _int(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.at)
        self.at += 4
        return value

    def _length(self) -> int:
        n = self._int()
        if n == -1:                              # a long vector: two words
            n = (self._int() << 32) + self._int()
        return n

    def _numbers(self, code: str, size: int) -> list:
        n = self._length()
        values = struct.unpack_from(f">{n}{code}", self.data, self.at)
        self.at += n * size
        return list(values)

    def read(self) -> Any:
        """The next object."""
        flags = self._int()
        kind, has_attr, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind == NILVALUE or kind in _SPECIAL:
            return None
        if kind == REF:
            return self.refs[(flags >> 8 or self._int()) - 1]
        if kind == SYM:
            name = self.read()
            self.refs.append(name)
            return name
        if kind in _PAIRS:
            return self._pairs(has_attr, has_tag)
        if kind == CHAR:
            n = self._int()
            if n == -1:
                return None                      # NA_character_
            raw = self.data[self.at:self.at + n]
            self.at += n
            return raw.decode("latin-1" if (flags >> 12) & _LATIN1 else "utf-8")
        if kind in (LGL, INT):
            items = self._numbers("i", 4)
        elif kind == REAL:
            items = self._numbers("d", 8)
        elif kind in (STR, VEC, EXPR):
            items = [self.read() for _ in range(self._length())]
        else:
            raise ValueError(f"R type {kind} at byte {self.at - 4}: not one a data set of "
                             "texts holds")
        return RVector(items, self.read() if has_attr else None)

    def _pairs(self, has_attr: int, has_tag: int) -> dict[str, Any]:
        """A pairlist (attributes, mostly) as a dict by tag, its items in order."""
        if has_attr:
            self.read()
        tag = self.read() if has_tag else None
        out = {str(tag): self.read()}
        rest = self.read()
        return {**out, **rest} if isinstance(rest, dict) else out


def unserialize(data: bytes) -> Any:
    """One serialized R object."""
    return Unserializer(data).read()


def lazy_load(folder: Path, name: str = "Rdata") -> dict[str, Any]:
    """Every object of the lazy-load database `folder/name.rdx` + `.rdb`, by name."""
    index = unserialize(gzip.decompress((folder / f"{name}.rdx").read_bytes())).named()
    if index.get("compressed") not in (None, [1], [True]):
        raise ValueError(f"{folder / name}.rdb: compressed by {index['compressed']}, not zlib")
    blob = (folder / f"{name}.rdb").read_bytes()
    out = {}
    for var, (offset, length) in index["variables"].named().items():
        out[var] = unserialize(zlib.decompress(blob[offset + 4:offset + length]))
    return out


def novels(folder: Path = DATA) -> dict[str, list[str]]:
    """The six novels' lines, by title, in the order they were published; FileNotFoundError
    when the package is not installed."""
    if not (folder / "Rdata.rdx").is_file():
        raise FileNotFoundError(f"no {folder / 'Rdata.rdx'}: {INSTALL}")
    data = lazy_load(folder)
    return {title: [line or "" for line in data[key]] for key, title in NOVELS.items()}


def chapters(lines: list[str]) -> list[str]:
    """A novel's chapters as prose: the lines of each paragraph joined, paragraphs by a
    blank line; the title page, the headings, "VOLUME II" and the editor's note after
    the end left out."""
    out: list[list[str]] = []
    paragraph: list[str] = []

    def end_paragraph() -> None:
        if paragraph and out:
            out[-1].append(" ".join(paragraph))
        paragraph.clear()

    for line in lines:
        if _END.match(line):
            break
        if _HEADING.match(line):
            end_paragraph()
            out.append([])
        elif not line.strip() or _VOLUME.match(line):
            end_paragraph()
        else:
            paragraph.append(line.strip())
    end_paragraph()
    return ["\n\n".join(paras) for paras in out if paras]


def main() -> None:
    try:
        books = novels()
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from None
    for title, lines in books.items():
        cut = chapters(lines)
        print(f"{title:<22} {len(cut):>3} chapters {sum(len(c.split()) for c in cut):>8,} words")


if __name__ == "__main__":
    main()
