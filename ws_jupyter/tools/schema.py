"""Tool input schemas and argument validation.

Each tool declares its inputs once as :class:`Param` values; from them come

* a JSON Schema valid under OpenAI's strict function calling and Anthropic's tool input rules:
  root ``type: object``, every property listed in ``required``, optional ones nullable
  (``["integer", "null"]``), ``additionalProperties: false``, and only the keywords both accept
  (``type``, ``properties``, ``required``, ``additionalProperties``, ``items``, ``enum``,
  ``description``) — defaults and bounds are stated in the descriptions instead;
* the same schema for non-strict consumers (``build_schema(params, strict=False)``: MCP clients,
  agent frameworks, Anthropic without ``strict``): optional properties not required, with their
  ``default``;
* a validator that turns what a model (or a person) sent into clean keyword arguments, with
  defaults applied, and rejects bad input with one short line naming the field::

      Invalid arguments: "limit" must be an integer >= 1 (got -3)

Validation is lenient where it is safe (a missing optional field is its default; ``"5"`` for an
integer and ``"true"`` for a boolean are accepted, as models without strict mode send them) and
strict where it matters (unknown fields, wrong types, out-of-range numbers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ToolArgumentError

__all__ = ["Param", "build_schema", "validate_args"]

ParamType = Literal["string", "integer", "number", "boolean", "string_list", "object_list"]
_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "string_list": "a list of strings",
    "object_list": "a list of objects",
}


@dataclass(frozen=True)
class Param:
    """One tool input. ``required=False`` makes it nullable with ``default`` when absent or null."""

    name: str
    type: ParamType
    description: str
    required: bool = False
    default: Any = None
    enum: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    allow_empty: bool = True
    accept_single: bool = False  # a string_list may also be given as one string
    also_accept: tuple[str, ...] = ()  # values outside ``enum`` the tool handles itself (fallbacks)
    items: tuple[Param, ...] = ()  # an object_list's fields (each object is checked like the arguments)
    max_items: int | None = None  # most entries of a list

    def json_schema(self, *, strict: bool = True) -> dict[str, Any]:
        """This input's schema: strict (nullable when optional, default in the text only) or,
        for non-strict consumers, plain with the ``default`` stated as a keyword too."""
        desc = self.description
        if self.default is not None and "Default" not in desc:
            shown = str(self.default).lower() if isinstance(self.default, bool) else repr(self.default)
            desc = f"{desc} Default: {shown}."
        if self.type == "string_list":
            schema: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
        elif self.type == "object_list":
            schema = {"type": "array", "items": build_schema(self.items, strict=strict)}
        else:
            schema = {"type": self.type}
        nullable = strict and not self.required
        if nullable:
            schema["type"] = [schema["type"], "null"]
        if self.enum is not None:
            schema["enum"] = [*self.enum, *((None,) if nullable else ())]
        schema["description"] = desc
        if not strict and self.default is not None:
            schema["default"] = self.default
        return schema


def build_schema(params: Sequence[Param], *, strict: bool = True) -> dict[str, Any]:
    """The JSON Schema of a tool's inputs.

    ``strict=True`` (OpenAI strict function calling): every property required, optional ones
    nullable. ``strict=False`` (MCP clients, Anthropic without strict, agent frameworks): only
    the truly required properties are required, optional ones have their plain type and a
    ``default`` — clients that check calls against the schema then accept a call that leaves an
    optional field out.
    """
    return {
        "type": "object",
        "properties": {p.name: p.json_schema(strict=strict) for p in params},
        "required": [p.name for p in params if strict or p.required],
        "additionalProperties": False,
    }


def _fail(message: str) -> ToolArgumentError:
    return ToolArgumentError(f"Invalid arguments: {message}")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _coerce(p: Param, value: Any) -> Any:
    name = f'"{p.name}"'
    if p.type == "string":
        if isinstance(value, str):
            _check_unicode(name, value)
            if not p.allow_empty and not value.strip():
                raise _fail(f"{name} must not be empty")
            if p.enum is not None and value not in p.enum and value not in p.also_accept:
                raise _fail(f"{name} must be one of {', '.join(p.enum)} (got {_show(value)})")
            return value
        # a number for a text field is taken as its digits ("5" for 5), but never for a path
        # (NaN would name a file "nan") and never a non-finite one
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and p.enum is None
            and not p.name.endswith("path")
            and math.isfinite(value)
        ):
            return str(value)
        raise _fail(f"{name} must be a string (got {type(value).__name__})")
    if p.type in ("integer", "number"):
        number = value
        if isinstance(value, str):
            try:
                number = float(value.strip()) if p.type == "number" else _parse_int(value)
            except ValueError:
                raise _fail(f"{name} must be {_TYPE_WORDS[p.type]} (got {_show(value)})") from None
        if isinstance(number, bool) or not isinstance(number, (int, float)) or math.isnan(number):
            raise _fail(f"{name} must be {_TYPE_WORDS[p.type]} (got {_show(value)})")
        if p.type == "integer":
            if isinstance(number, float):
                if not number.is_integer():
                    raise _fail(f"{name} must be an integer (got {_show(value)})")
                number = int(number)
        elif math.isinf(number):
            raise _fail(f"{name} must be a finite number (got {_show(value)})")
        if p.minimum is not None and number < p.minimum:
            raise _fail(f"{name} must be {_TYPE_WORDS[p.type]} >= {_num(p.minimum)} (got {_show(value)})")
        if p.maximum is not None and number > p.maximum:
            raise _fail(f"{name} must be {_TYPE_WORDS[p.type]} <= {_num(p.maximum)} (got {_show(value)})")
        return number
    if p.type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise _fail(f"{name} must be true or false (got {_show(value)})")
    if p.type == "object_list":
        if not isinstance(value, (list, tuple)):
            raise _fail(f"{name} must be a list of objects (got {type(value).__name__})")
        if p.max_items is not None and len(value) > p.max_items:
            raise _fail(f"{name} has {len(value):,} entries: at most {p.max_items}")
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise _fail(f"{name}[{i}] must be an object (got {type(item).__name__})")
            try:
                out.append(validate_args(p.items, item))
            except ToolArgumentError as exc:
                raise _fail(f"{name}[{i}]: {str(exc).removeprefix('Invalid arguments: ')}") from None
        return out
    # string_list
    if isinstance(value, str):
        if p.accept_single:
            return [value]
        raise _fail(f"{name} must be a list of strings (got a string)")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _fail(f"{name} must be a list of strings (got {_show(value)})")
    if p.max_items is not None and len(value) > p.max_items:
        raise _fail(f"{name} has {len(value):,} entries: at most {p.max_items}")
    for v in value:
        _check_unicode(name, v)
    return list(value)


def _check_unicode(name: str, value: str) -> None:
    """Text must be valid Unicode: a lone surrogate (JSON allows ``"\\ud800"``) cannot be written,
    searched or shown, so it is refused here with the field named."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail(
            f"{name} contains a lone surrogate ({value[exc.start]!r} at position {exc.start}), which is not valid Unicode"
        ) from None


def _parse_int(text: str) -> int:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        f = float(text)
        if not f.is_integer():
            raise
        return int(f)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def validate_args(params: Sequence[Param], args: object) -> dict[str, Any]:
    """Clean keyword arguments for a tool, defaults applied; raises ``ToolArgumentError``."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise _fail(f"expected a JSON object of arguments, got {type(args).__name__}")
    known = {p.name: p for p in params}
    unknown = [k for k in args if k not in known]
    if unknown:
        expected = ", ".join(known) or "none"
        raise _fail(f'unknown argument "{unknown[0]}" (expected: {expected})')
    out: dict[str, Any] = {}
    for p in params:
        value = args.get(p.name)
        if value is None:
            if p.required:
                raise _fail(f'"{p.name}" is required')
            out[p.name] = p.default
            continue
        out[p.name] = _coerce(p, value)
    return out
