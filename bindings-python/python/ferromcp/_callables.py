"""What the package needs to know about a user's callable before calling it."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["is_coroutine_function"]


def is_coroutine_function(fn: Any) -> bool:
    """``async def`` functions and objects with an ``async def __call__``.

    >>> async def fetch() -> None: ...
    >>> is_coroutine_function(fetch), is_coroutine_function(print)
    (True, False)
    """
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 (an async __call__, not callability)
