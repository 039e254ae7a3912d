"""Defaults of the server's limits: the concurrent scheduler's, the resource folders' and HTTP bodies';
and the rule a number of seconds given for one follows.

Kept apart so the command line can show them, and check a value, without importing what applies them.
"""

from math import isfinite

#: Handlers in flight at most; at the limit the server stops reading input. A flood of N calls
#: that each wait W takes at least N * W / limit: 2000 lets 10,000 calls waiting 20 ms finish
#: in about 0.1 s of waiting, for about 10 MiB at the peak.
DEFAULT_MAX_CONCURRENCY = 2000
#: Worker threads for tools registered with ``blocking=True``.
DEFAULT_WORKERS = 32
#: Seconds handlers in flight at end of input may still take before they are cancelled.
DEFAULT_EOF_GRACE = 30.0
#: Largest file a resource folder serves (``--max-resource-bytes``).
DEFAULT_MAX_RESOURCE_BYTES = 16 * 1024 * 1024
#: After a stop, seconds cancelled handlers may take to unwind.
SETTLE_SECONDS = 1.0
#: Seconds an HTTP request body may take to arrive whole, from the moment the app starts reading it.
DEFAULT_BODY_SECONDS = 30.0
#: Bytes an HTTP request head (request line and header fields) may take (``--max-head-bytes``).
DEFAULT_MAX_HEAD_BYTES = 64 * 1024
#: Seconds an HTTP request head may take to arrive whole, from its first byte (``--head-timeout``).
DEFAULT_HEAD_SECONDS = 10.0


def check_seconds(value: float, name: str, zero: bool = False) -> float:
    """``value`` when it is a finite number of seconds, more than 0 (or 0 itself when ``zero``); else
    ValueError naming ``name``: ``inf`` would turn a limit off, ``nan`` compares as nothing."""
    if type(value) not in (int, float) or not isfinite(value) or value < 0 or (value == 0 and not zero):
        kind = "a finite number of seconds, 0 or more" if zero else "a finite number of seconds, more than 0"
        raise ValueError(f"{name} must be {kind}, not {value!r}")
    return value


def check_count(value: int, name: str) -> int:
    """``value`` when it is a whole number, at least 1; else ValueError naming ``name``."""
    if type(value) is not int or value < 1:
        raise ValueError(f"{name} must be a whole number, at least 1, not {value!r}")
    return value
