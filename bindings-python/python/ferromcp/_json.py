"""Turning handler results that are not plain JSON types into JSON types.

The native converter calls :func:`json_default` (like ``json.dumps``'s
``default=``) for any object that is not a dict, list, tuple, str, int,
float, bool or None, and converts what it returns.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["json_default"]


def json_default(obj: Any) -> Any:
    """A JSON-compatible stand-in for ``obj``.

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Point:
    ...     x: int
    ...     y: int
    >>> json_default(Point(1, 2))
    {'x': 1, 'y': 2}

    Raises ``TypeError`` for objects with no JSON form.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    model_dump = getattr(obj, "model_dump", None)
    if callable(model_dump):  # pydantic models
        return model_dump(mode="json")
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    if isinstance(obj, (datetime.datetime, datetime.date, datetime.time)):
        return obj.isoformat()
    if isinstance(obj, uuid.UUID):
        return str(obj)
    if isinstance(obj, Mapping):
        return dict(obj)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
