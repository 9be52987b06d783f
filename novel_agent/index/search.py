"""Queries on the search index: BM25 through SQLite FTS5, and documents by key or tick.

`novel search` calls `search`; retrieval (retrieve.py) calls the lower-level
`bm25`, `rows_by_id`, `scene_rows`, `fact_rows_of_scenes` and `pinned_rows`.
Free text becomes an FTS5 query with `match_query` (each word or "quoted
phrase" a term, any of them matching, so a typo never becomes a syntax error);
BM25 ranks the hits, and scores are shown positive (higher is better).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from novel_agent.index.db import Index
from novel_agent.index.documents import KINDS

# Words too common to tell scenes apart (BM25 weighs them low anyway; leaving them out
# keeps queries short).
STOPWORDS = frozenset("""a an and are as at be been but by for from had has have he her
hers him his i in into is it its me my no not of on or our she so than that the their them
then there they this to too us was we were what when where which who will with you your
scene scenes about after again all also any back before being could did does down each
even ever every first go goes going into just like made make more most much must new now
only other out over said same see should some still such take tell through time under up
very way well would""".split())
BM25_WEIGHTS = (2.0, 3.0, 1.0, 2.0)          # title, summary, body, names


def words(text: str) -> list[str]:
    """The distinct content words of `text`, lowercased, in order."""
    seen: dict[str, None] = {}
    for word in re.findall(r"[^\W_]+(?:['’][^\W_]+)?", text.lower()):
        word = word.replace("’", "'")
        if len(word) >= 3 and word not in STOPWORDS and not word.isdigit():
            seen.setdefault(word, None)
    return list(seen)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def any_of(terms: Iterable[str]) -> str:
    """An FTS5 query matching any of `terms` (phrases kept whole)."""
    quoted = [_quote(t) for t in dict.fromkeys(t.strip() for t in terms) if t]
    return " OR ".join(quoted)


def doc_counts(index: Index, terms: Sequence[str], cap: int) -> dict[str, int]:
    """How many documents hold each term (a word or a phrase), counted up to `cap` (a
    term in more is as good as everywhere: the count stops there, so it stays cheap)."""
    counts = {}
    for term in dict.fromkeys(terms):
        try:
            counts[term] = index.db.execute(
                "SELECT COUNT(*) FROM (SELECT rowid FROM search WHERE search MATCH ? LIMIT ?)",
                (_quote(term), cap)).fetchone()[0]
        except sqlite3.OperationalError:
            counts[term] = 0
    return counts


def total_docs(index: Index) -> int:
    return index.db.execute("SELECT COUNT(*) FROM docs").fetchone()[0]


def by_spread(index: Index, terms: Sequence[str], rare: float = 0.10,
              common: float = 0.25) -> tuple[list[str], list[str]]:
    """The terms split by how many documents hold them: (in at most `rare` of them, in
    at most `common`); terms in more are left out (they barely move BM25 but make a
    query walk a posting list as long as the book)."""
    total = total_docs(index)
    few, most = max(50, int(total * rare)), max(100, int(total * common))
    counts = doc_counts(index, terms, most + 1)
    return ([t for t, n in counts.items() if 0 < n <= few],
            [t for t, n in counts.items() if few < n <= most])


def information(index: Index, names: Sequence[str]) -> dict[str, float]:
    """How much finding each name in a document tells, from 0 (it is in every one) to 1
    (it is in one): log(N / documents holding it) / log(N)."""
    total = max(2, total_docs(index))
    counts = doc_counts(index, names, total)
    return {name: max(0.0, min(1.0, math.log(total / max(1, n)) / math.log(total)))
            for name, n in counts.items()}


def told_by(index: Index, query: str, kinds: Sequence[str], limit: int, upto: int) -> list[Row]:
    """The documents among `kinds` matching `query` that tell tick `upto` or earlier,
    newest tick first. Unlike `newest`, what it gives for an `upto` does not change as
    the book grows past it: a prompt's settled part is chosen with it."""
    if not query or not kinds:
        return []
    marks = ", ".join("?" for _ in kinds)
    sql = (f"SELECT {HEAD} FROM docs WHERE id IN (SELECT rowid FROM search WHERE search "
           f"MATCH ?) AND kind IN ({marks}) AND tick <= ? ORDER BY tick DESC, key LIMIT ?")
    try:
        return _rows(index, index.db.execute(sql, (query, *kinds, upto, limit)).fetchall())
    except sqlite3.OperationalError:
        return []


def information_upto(index: Index, names: Sequence[str], upto: int) -> dict[str, float]:
    """`information` among the scenes and facts that tell tick `upto` or earlier (as
    `told_by`, the same for an `upto` however the book grows)."""
    total = max(2, index.db.execute("SELECT COUNT(*) FROM docs WHERE kind IN ('scene', "
                                    "'fact') AND tick <= ?", (upto,)).fetchone()[0])
    out = {}
    for name in dict.fromkeys(names):
        try:
            n = index.db.execute(
                "SELECT COUNT(*) FROM docs WHERE id IN (SELECT rowid FROM search WHERE search "
                "MATCH ?) AND kind IN ('scene', 'fact') AND tick <= ?",
                (_quote(name), upto)).fetchone()[0]
        except sqlite3.OperationalError:
            n = 0
        out[name] = max(0.0, min(1.0, math.log(total / max(1, n)) / math.log(total)))
    return out


def newest(index: Index, query: str, kinds: Sequence[str], limit: int,
           before: int | None = None) -> list[Row]:
    """The newest documents (by when they were indexed) matching `query` among `kinds`,
    unranked: cheap whatever the posting lists' length. Of the `limit` * 3 newest
    matches, those of `kinds` pointing before tick `before` (if given), at most `limit`
    (chosen in one query: only those are read whole)."""
    if not query or not kinds:
        return []
    marks = ", ".join("?" for _ in kinds)
    # (a join with the matches, not `docs.id IN (...)`: SQLite would read every document
    # of those kinds by its kind index to test each against the list)
    sql = (f"SELECT {HEAD} FROM (SELECT rowid AS id FROM search WHERE search MATCH ? "
           "ORDER BY rowid DESC LIMIT ?) AS hits JOIN docs ON docs.id = hits.id "
           f"WHERE docs.kind IN ({marks}) AND (? IS NULL OR docs.tick IS NULL OR "
           "docs.tick < ?) ORDER BY docs.id DESC LIMIT ?")
    try:
        return _rows(index, index.db.execute(
            sql, (query, limit * 3, *kinds, before, before, limit)).fetchall())
    except sqlite3.OperationalError:
        return []


def _kept(index: Index, ids: Sequence[int], kinds: Sequence[str], before: int | None,
          limit: int) -> list[Sequence[Any]]:
    """The heads (id, key, sha) of the first `limit` documents of `ids`, in their order,
    among `kinds` and pointing before tick `before` (if given): only those kept are read
    whole (most of a long book's hits are filtered out or past the limit)."""
    found = {values[0]: values for values in _raw_rows(index, ids, FILTER)}
    out = []
    for row_id in ids:
        values = found.get(row_id)
        if values is None or values[3] not in kinds or (
                before is not None and values[4] is not None and values[4] >= before):
            continue
        out.append(values[:3])
        if len(out) >= limit:
            break
    return out


def match_query(text: str, limit: int = 48) -> str:
    """An FTS5 query for free text: its "quoted phrases" and content words, any matching."""
    phrases = [p.strip() for p in re.findall(r'"([^"]+)"', text) if p.strip()]
    rest = re.sub(r'"[^"]*"', " ", text)
    return any_of([*phrases, *words(rest)][:limit])


@dataclass(frozen=True)
class Row:
    """A document as the index holds it."""

    id: int
    key: str
    kind: str
    tick: int | None
    title: str
    body: str
    meta: dict[str, Any] = field(default_factory=dict)
    score: float = 0.0               # BM25, positive, higher is better (0 when not matched)
    snippet: str = ""


COLUMNS = "docs.id, docs.key, docs.sha, docs.kind, docs.tick, docs.title, docs.body, docs.meta"
# What tells a document's parsed row (its id, key and sha, the hash of everything stored)
# and what filters it (kind, tick): the columns before its text in the table, so a query
# asking only these reads no text (a scene's prose spills into overflow pages).
HEAD = "docs.id, docs.key, docs.sha"
FILTER = "docs.id, docs.key, docs.sha, docs.kind, docs.tick"
# Documents parsed, each kept by its head: a document is read again every tick (the
# newest naming the cast, the scenes just before the recent tiers), and its meta is
# JSON. Rows are never changed (their meta neither).
_PARSED: dict[tuple[int, str, str], Row] = {}
PARSED_KEPT = 20_000


def _row(values: Sequence[Any]) -> Row:
    """The document of a row of COLUMNS, parsed (or as parsed before)."""
    key = (values[0], values[1], values[2])
    row = _PARSED.get(key)
    if row is None:
        meta = json.loads(values[7]) if values[7] else {}
        row = Row(values[0], values[1], values[3], values[4], values[5] or "",
                  values[6] or "", meta)
        if len(_PARSED) >= PARSED_KEPT:
            _PARSED.clear()
        _PARSED[key] = row
    return row


def _rows(index: Index, heads: Sequence[Sequence[Any]]) -> list[Row]:
    """The documents of these heads (rows of HEAD), in their order: those parsed before
    from the cache, the rest read whole in one query."""
    rows: list[Row | None] = list(map(_PARSED.get, map(tuple, heads)))
    missing = [head[0] for head, row in zip(heads, rows) if row is None]
    if missing:
        read = {values[0]: _row(values) for values in _raw_rows(index, missing)}
        rows = [row if row is not None else read.get(head[0])
                for head, row in zip(heads, rows)]
    return [row for row in rows if row is not None]


def _scored(row: Row, score: float = 0.0, snippet: str = "") -> Row:
    """`row` with a BM25 score and a snippet."""
    if score or snippet:
        return replace(row, score=score, snippet=snippet)
    return row


def bm25(index: Index, query: str, kinds: Sequence[str] = KINDS, limit: int = 200,
         before: int | None = None, *, snippets: bool = True) -> list[Row]:
    """The best BM25 matches of an FTS5 `query` among `kinds` (docs pointing before tick
    `before`, if given), best first; each with a snippet of its text around the match
    unless `snippets` is off (retrieval reads none: FTS5 makes each one afresh)."""
    if not query:
        return []
    snippet = "snippet(search, 2, '[', ']', ' … ', 12)" if snippets else "''"
    sql = (f"SELECT rowid, rank, {snippet} FROM search "
           "WHERE search MATCH ? ORDER BY rank LIMIT ?")
    # Scenes and facts are nearly every doc: they are kept after the match (cheaper than
    # an AND with a posting list that long); a rarer kind is filtered inside it. Docs
    # dropped after the match (later ticks, other kinds) are made up by asking for more.
    bulk = {"scene", "fact"} <= set(kinds)
    match = query if bulk else f"kind : ({' OR '.join(_quote(k) for k in kinds)}) AND ({query})"
    wanted = limit * 2 if before is not None or bulk else limit
    try:
        hits = index.db.execute(sql, (match, wanted)).fetchall()
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower() or "syntax" in str(exc).lower():
            return []
        raise
    ranks = {row_id: (rank, text) for row_id, rank, text in hits}
    return [_scored(row, -float(ranks[row.id][0]), ranks[row.id][1])
            for row in _rows(index, _kept(index, [h[0] for h in hits], kinds, before, limit))]


def rows_by_id(index: Index, ids: Sequence[int]) -> list[Row]:
    """Documents by their row ids (any order)."""
    return [_row(r) for r in _raw_rows(index, ids)]


def _raw_rows(index: Index, ids: Sequence[int], columns: str = COLUMNS) -> list[Sequence[Any]]:
    """The `columns` of the documents with these row ids (any order), unparsed."""
    out: list[Sequence[Any]] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start:start + 500])
        marks = ", ".join("?" for _ in chunk)
        out += index.db.execute(f"SELECT {columns} FROM docs WHERE id IN ({marks})",
                                chunk).fetchall()
    return out


def search(index: Index, text: str, kind: str | None = None, limit: int = 10) -> list[Row]:
    """`novel search`: what the index finds for free `text`, best first."""
    return bm25(index, match_query(text), [kind] if kind else KINDS, limit)


def rows_where(index: Index, where: str, args: Sequence[Any], limit: int = 500,
               using: str = "") -> list[Row]:
    """Documents matching a SQL condition on `docs`, in tick order (`using`: the index
    to read them by, when SQLite would choose a worse one)."""
    table = f"docs INDEXED BY {using}" if using else "docs"
    sql = f"SELECT {HEAD} FROM {table} WHERE {where} ORDER BY docs.tick, docs.key LIMIT ?"
    return _rows(index, index.db.execute(sql, [*args, limit]).fetchall())


def scene_rows(index: Index, first: int, last: int) -> list[Row]:
    """Scenes with ticks from `first` to `last`."""
    return rows_where(index, "kind = 'scene' AND tick BETWEEN ? AND ?", (first, last))


def fact_rows_of_scenes(index: Index, ticks: Iterable[int], limit: int = 500) -> list[Row]:
    """Facts established in the given scenes."""
    ticks = sorted(set(ticks))
    if not ticks:
        return []
    marks = ", ".join("?" for _ in ticks)
    return rows_where(index, f"kind = 'fact' AND tick IN ({marks})", ticks, limit)


def pinned_rows(index: Index, kinds: Sequence[str] = ("scene", "fact")) -> list[Row]:
    """Documents marked `pinned: true` by hand."""
    marks = ", ".join("?" for _ in kinds)
    # by the index of pinned documents: asked for one kind, SQLite would read every
    # document of that kind in tick order (for the ORDER BY) to find the few pinned
    return rows_where(index, f"pinned = 1 AND kind IN ({marks})", kinds, using="docs_pinned")


def points_to(row: Row) -> str:
    """Where a hit leads, for people: "scene 12", "summary of scenes 1–10", "lore/x.yaml"."""
    if row.kind == "summary":
        return f"scenes {row.meta.get('first')}–{row.meta.get('last')}"
    if row.kind in ("scene", "fact") and row.tick:
        return f"scene {row.tick}"
    if row.kind in ("character", "location") and row.tick:
        return f"last seen in scene {row.tick}"
    if row.kind == "loop" and row.tick:
        return f"opened in scene {row.tick}"
    return ""
