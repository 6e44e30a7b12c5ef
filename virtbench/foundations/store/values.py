"""The small values the store writes: JSON-safe columns, the time, a run's id, a failed
trial's output tail. Pure but for the clock and the random part of a run id."""
from __future__ import annotations

import secrets
from datetime import datetime, timezone


def jsonable(value):
    """`value` with anything JSON cannot hold (paths, enums...) as text, for JSON columns."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def now() -> datetime:
    return datetime.now(timezone.utc)


# what a failed trial keeps of each of its output streams: the last 64 KiB (a successful
# trial keeps its whole output, as its parser read it)
OUTPUT_TAIL_BYTES = 64 * 1024


def output_tail(text: str | None, limit: int = OUTPUT_TAIL_BYTES) -> tuple[str, int | None]:
    """(the last `limit` bytes of `text` as UTF-8, its whole size in bytes when it was cut,
    else None). Pure; a character cut in two at the start is dropped."""
    text = text or ""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text, None
    return data[-limit:].decode("utf-8", errors="ignore"), len(data)


def new_run_id() -> str:
    return now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
