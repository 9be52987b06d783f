"""`.novel/state.yaml`: a cache beside the scenes, checked whenever it is read.

It holds the tick counter (the scenes on disk are the truth; see
recovery.reconcile), the writer's tier bounds and the checkpoints owed. A
value of the wrong type is a FileFormatError naming the file, the line and the
way out (`novel doctor --fix` rebuilds the file), never a traceback later.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from novel_agent.errors import FileFormatError, NovelError
from novel_agent.files import read_yaml, yaml_line

FIX = ("it is a cache: `novel doctor --fix` brings back the history's copy, or rebuilds it from "
       "the scenes")


def _fail(path: Path, key: str | None, message: str) -> FileFormatError:
    line = yaml_line(path, key) if key else 1
    return FileFormatError(f"{message}; {FIX}", file=str(path), line=line)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def check_state(path: Path, data: Any) -> dict[str, Any]:
    """`data` read from state.yaml at `path`, checked: a mapping with a whole-number `tick`,
    a list of whole-number `pending_checkpoints`, a mapping of `writer_tiers`, the recall
    probe's `recall` rows."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _fail(path, None, "expected a mapping (tick, writer_tiers, ...)")
    if "tick" in data and not _whole(data["tick"]):
        raise _fail(path, "tick", f"'tick' must be a whole number, not {data['tick']!r}")
    pending = data.get("pending_checkpoints")
    if pending is not None and not (isinstance(pending, list) and all(map(_whole, pending))):
        raise _fail(path, "pending_checkpoints",
                    f"'pending_checkpoints' must be a list of ticks, not {pending!r}")
    tiers = data.get("writer_tiers")
    if tiers is not None and not (isinstance(tiers, dict) and all(map(_whole, tiers.values()))):
        raise _fail(path, "writer_tiers",
                    f"'writer_tiers' must map tiers to ticks, not {tiers!r}")
    recall = data.get("recall")
    if recall is not None and not (isinstance(recall, list) and all(
            isinstance(r, list) and len(r) == 3 and all(map(_whole, r)) for r in recall)):
        raise _fail(path, "recall", "'recall' must be a list of [tick, relevant facts, "
                                    f"reached] (or remove it), not {recall!r}")
    return dict(data)


def state_in(data: bytes) -> dict[str, Any] | None:
    """The values of a state.yaml whose bytes are `data` (a version the history keeps),
    read and checked as the file is (in a folder of its own); None when they do not read."""
    with tempfile.TemporaryDirectory(prefix="novel-check-") as folder:
        path = Path(folder) / "state.yaml"
        path.write_bytes(data)
        try:
            return check_state(path, read_yaml(path, {}))
        except NovelError:
            return None
