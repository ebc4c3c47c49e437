"""Metadata filters in Chroma's ``where`` syntax, evaluated the same way on both search sides.

The vector side hands the filter to Chroma; the BM25 side evaluates it here, so ``filter=`` means
the same thing in every mode. Supported: ``{"key": value}`` (equality), operators ``$eq $ne $gt
$gte $lt $lte $in $nin`` per key, and ``$and`` / ``$or`` lists.

>>> matches_filter({"lang": "py", "size": 3}, {"lang": "py", "size": {"$gte": 2}})
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidArgumentError

__all__ = ["chroma_where", "matches_filter"]

_OPS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"}
_SCALAR = (str, int, float, bool)


def _check(filter: Any, where: str = "filter") -> None:
    if not isinstance(filter, Mapping) or not filter:
        raise InvalidArgumentError(f"{where} must be a non-empty mapping, got {filter!r}")
    for key, value in filter.items():
        if key in ("$and", "$or"):
            if not isinstance(value, (list, tuple)) or not value:
                raise InvalidArgumentError(f"{key} needs a non-empty list of filters")
            for sub in value:
                _check(sub, key)
        elif key.startswith("$"):
            raise InvalidArgumentError(f"unknown filter operator {key!r} (use $and/$or at the top level)")
        elif isinstance(value, Mapping):
            if len(value) != 1 or next(iter(value)) not in _OPS:
                raise InvalidArgumentError(
                    f"filter on {key!r} must be a value or one of {sorted(_OPS)}, got {dict(value)!r}")
            op, arg = next(iter(value.items()))
            if op in ("$in", "$nin"):
                if not isinstance(arg, (list, tuple)) or not all(isinstance(a, _SCALAR) for a in arg):
                    raise InvalidArgumentError(f"{op} on {key!r} needs a list of scalars")
            elif not isinstance(arg, _SCALAR):
                raise InvalidArgumentError(f"{op} on {key!r} needs a scalar, got {arg!r}")
        elif not isinstance(value, _SCALAR):
            raise InvalidArgumentError(f"filter value for {key!r} must be a str, number or bool, got {value!r}")


def chroma_where(filter: Mapping[str, Any]) -> dict[str, Any]:
    """Validated filter in the form Chroma accepts (several keys become an ``$and``)."""
    _check(filter)

    def norm(f: Mapping[str, Any]) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for key, value in f.items():
            if key in ("$and", "$or"):
                subs = [norm(s) for s in value]
                parts.append({key: subs} if len(subs) > 1 else subs[0])
            else:
                parts.append({key: dict(value) if isinstance(value, Mapping) else {"$eq": value}})
        return parts[0] if len(parts) == 1 else {"$and": parts}

    return norm(filter)


def _compare(actual: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(actual == arg)
    if op == "$ne":
        return bool(actual != arg)
    if op == "$in":
        return actual in arg
    if op == "$nin":
        return actual not in arg
    if actual is None or isinstance(actual, bool) != isinstance(arg, bool):
        return False
    try:
        if op == "$gt":
            return bool(actual > arg)
        if op == "$gte":
            return bool(actual >= arg)
        if op == "$lt":
            return bool(actual < arg)
        if op == "$lte":
            return bool(actual <= arg)
    except TypeError:
        return False
    return False


def matches_filter(metadata: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` satisfies ``filter`` (a missing key never matches, except ``$ne``/``$nin``)."""
    for key, value in filter.items():
        if key == "$and":
            if not all(matches_filter(metadata, f) for f in value):
                return False
        elif key == "$or":
            if not any(matches_filter(metadata, f) for f in value):
                return False
        else:
            op, arg = next(iter(value.items())) if isinstance(value, Mapping) else ("$eq", value)
            if key not in metadata:
                if op not in ("$ne", "$nin"):
                    return False
                continue
            if not _compare(metadata[key], op, arg):
                return False
    return True
