"""Reading a user's object without running any of its code.

A user's class can do anything in ``__repr__``, ``__len__``, ``__eq__``, ``__sizeof__``, a property
or ``__getattr__`` — sleep, print a secret, delete a file. Even ``isinstance(obj, X)`` may call
``obj.__class__`` (a property of the user's class) and ``sys.getsizeof(obj)`` calls
``obj.__sizeof__``. So this module only ever

* asks ``type(obj)`` (a C-level field) and compares it by identity with known classes, or walks
  its MRO through ``type``'s own descriptors;
* reads names of classes through ``type``'s own descriptors (a metaclass cannot intercept them);
* measures unknown objects with ``object.__sizeof__`` (the C base, not an override) and the
  objects they reference (``gc.get_referents``: the C-level traversal), within a budget.

Known types are exact classes: a subclass of ``list`` or of ``pandas.DataFrame`` may override any
method, so it is an unknown object here (its type name and a size, nothing else).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import fractions
import gc
import pathlib
import sys
import time
import types
import uuid
from collections import Counter, OrderedDict, defaultdict, deque
from collections.abc import Callable
from typing import Any

__all__ = [
    "CONTAINERS",
    "DICTS",
    "PLAIN_SCALARS",
    "Budget",
    "TypeSet",
    "add_frame_sizer",
    "estimate_size",
    "exact_module_type",
    "is_plain_data",
    "is_plain_scalar",
    "known_tz",
    "mro_names",
    "type_name",
]


class TypeSet:
    """Classes matched by identity: ``type(x) in TypeSet(...)`` never runs a metaclass's
    ``__eq__`` or ``__hash__`` (a plain ``in`` on a tuple or set of classes would)."""

    def __init__(self, *classes: type) -> None:
        self.classes = classes
        self._ids = frozenset(id(c) for c in classes)

    def __contains__(self, cls: object) -> bool:
        return id(cls) in self._ids

    def __iter__(self) -> Any:
        return iter(self.classes)


_QUALNAME = type.__dict__["__qualname__"]
_MODULE = type.__dict__["__module__"]
_MRO = type.__dict__["__mro__"]
_OBJECT_SIZEOF = object.__sizeof__

#: Builtin types whose ``__sizeof__`` is C code nobody can replace.
_BUILTIN_SIZED = TypeSet(
    int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset, range, type(None)
)
_PATHS = (
    pathlib.PurePosixPath,
    pathlib.PureWindowsPath,
    pathlib.PosixPath,
    pathlib.WindowsPath,
    pathlib.Path,
)
#: Scalars read by value: their str/repr is the standard library's own code.
PLAIN_SCALARS = TypeSet(
    int, float, complex, bool, str, bytes, type(None), decimal.Decimal, fractions.Fraction,
    _dt.date, _dt.datetime, _dt.time, _dt.timedelta, uuid.UUID, range, *_PATHS,
)  # fmt: skip
#: Containers read item by item through their base class's C methods.
CONTAINERS = TypeSet(list, tuple, dict, set, frozenset, deque, OrderedDict, defaultdict, Counter)
#: The dict family (read with ``dict.items``/``dict.__len__``, whatever a subclass overrides).
DICTS = TypeSet(dict, OrderedDict, defaultdict, Counter)
SEQUENCES = TypeSet(list, tuple, set, frozenset)


class Budget:
    """A time limit and an object count shared by one inspection: past either, the reader
    stops and says what it left out instead of going on."""

    def __init__(self, seconds: float = 0.5, objects: int = 20_000) -> None:
        self.deadline = time.monotonic() + seconds
        self.objects = objects

    def spend(self, n: int = 1) -> bool:
        """Counts ``n`` objects; False once the budget is spent (time or count)."""
        self.objects -= n
        return self.objects >= 0 and time.monotonic() < self.deadline

    @property
    def deadline_left(self) -> float:
        """Seconds left."""
        return max(0.0, self.deadline - time.monotonic())

    @property
    def left(self) -> bool:
        return self.objects >= 0 and time.monotonic() < self.deadline


def type_name(t: type) -> str:
    """``module.QualName`` of a class, read through ``type``'s descriptors (``builtins`` dropped)."""
    try:
        qual = _QUALNAME.__get__(t)
        module = _MODULE.__get__(t)
    except Exception:
        return "?"
    qual = qual if type(qual) is str else "?"
    if type(module) is not str or module == "builtins":
        return qual
    return f"{module}.{qual}"


def mro_names(t: type) -> list[str]:
    """The names of a class's bases, most specific first (for "a subclass of X" notes)."""
    try:
        mro = _MRO.__get__(t)
    except Exception:
        return []
    return [type_name(b) for b in mro[1:] if b is not object]


def exact_module_type(module: str, name: str) -> type | None:
    """The class ``module.name`` if that module is already imported (nothing is imported here:
    an object of a library's class can only exist once the library is loaded)."""
    mod = sys.modules.get(module)
    if mod is None:
        return None
    found = mod.__dict__.get(name)
    return found if type(found) is type or (isinstance(found, type)) else None


def known_tz(tz: Any) -> bool:
    """A tzinfo whose methods are the standard library's (None, ``timezone``, ``ZoneInfo``)."""
    if tz is None or type(tz) is _dt.timezone:
        return True
    zoneinfo = sys.modules.get("zoneinfo")
    return zoneinfo is not None and type(tz) is zoneinfo.ZoneInfo


def is_plain_scalar(value: Any) -> bool:
    """A scalar whose text the standard library (or numpy/pandas) writes, with no user code."""
    t = type(value)
    if t in PLAIN_SCALARS:
        if t is _dt.datetime or t is _dt.time:
            return known_tz(value.tzinfo)
        return True
    return _library_scalar(t, value)


def _library_scalar(t: type, value: Any) -> bool:
    np = sys.modules.get("numpy")
    if np is not None and t in _numpy_scalars(np):
        return True
    pd = sys.modules.get("pandas")
    if pd is not None:
        if t is pd.Timestamp:
            return known_tz(value.tzinfo)
        if t is pd.Timedelta or value is pd.NaT or value is pd.NA:
            return True
    return False


def is_plain_data(value: Any, depth: int = 0, budget: list[int] | None = None) -> bool:
    """Plain scalars in exact lists, tuples, sets and dicts (at most 20 levels, 10,000 items):
    data that copying, comparing or printing cannot turn into a call of user code."""
    budget = budget if budget is not None else [10_000]
    budget[0] -= 1
    if budget[0] < 0 or depth > 20:
        return False
    t = type(value)
    if t in SEQUENCES:
        return all(is_plain_data(v, depth + 1, budget) for v in value)
    if t is dict:
        return all(
            is_plain_data(k, depth + 1, budget) and is_plain_data(v, depth + 1, budget)
            for k, v in dict.items(value)
        )
    return is_plain_scalar(value)


_NUMPY_SCALARS: TypeSet | None = None


def _numpy_scalars(np: Any) -> TypeSet:
    global _NUMPY_SCALARS
    if _NUMPY_SCALARS is None:
        found = {t for t in np.sctypeDict.values() if type(t) is type}
        _NUMPY_SCALARS = TypeSet(*(found - {str, bytes, int, float, complex, bool, np.void, np.object_}))
    return _NUMPY_SCALARS


# --- sizes -----------------------------------------------------------------------------------------

_SKIP_REFERENTS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType)
_SAMPLE = 256  # items of a big container measured; the rest is extrapolated


def shallow_size(value: Any) -> int:
    """The object's own bytes, without what it references (never its own ``__sizeof__``)."""
    if type(value) in _BUILTIN_SIZED:
        return sys.getsizeof(value)
    return int(_OBJECT_SIZEOF(value))


def estimate_size(value: Any, budget: Budget | None = None) -> tuple[int, bool]:
    """``(bytes, exact)``: the memory ``value`` holds, measured without running its code.

    Arrays and frames report their buffers (see :mod:`.frames`); containers add their items
    (a sample of a big one, extrapolated: ``exact`` is then False); an unknown object counts
    itself and what it references, a few levels deep.
    """
    budget = budget or Budget(0.2)
    seen: set[int] = set()
    return _size(value, budget, seen, 0)


def _size(value: Any, budget: Budget, seen: set[int], depth: int) -> tuple[int, bool]:
    if id(value) in seen:
        return 0, True
    seen.add(id(value))
    if not budget.spend():
        return shallow_size(value), False
    t = type(value)
    special = _library_size(t, value, budget)
    if special is not None:
        return special
    if t in PLAIN_SCALARS or t in _BUILTIN_SIZED:
        if t in CONTAINERS:
            return _container_size(value, budget, seen, depth)
        return shallow_size(value), True
    if t in CONTAINERS:
        return _container_size(value, budget, seen, depth)
    np = sys.modules.get("numpy")
    if np is not None and t in _numpy_scalars(np):
        return int(_OBJECT_SIZEOF(value)), True
    return _unknown_size(value, budget, seen, depth)


def _container_items(value: Any) -> list[Any]:
    t = type(value)
    if t in DICTS:
        out: list[Any] = []
        for i, (k, v) in enumerate(dict.items(value)):
            if i >= _SAMPLE:
                break
            out += (k, v)
        return out
    items = []
    for i, item in enumerate(value):  # exact list/tuple/set/frozenset/deque: C iteration
        if i >= _SAMPLE:
            break
        items.append(item)
    return items


def _container_length(value: Any) -> int:
    t = type(value)
    if t in DICTS:
        return dict.__len__(value)
    return len(value)  # exact builtin containers


def _container_size(value: Any, budget: Budget, seen: set[int], depth: int) -> tuple[int, bool]:
    total = shallow_size(value) if type(value) in _BUILTIN_SIZED else int(_OBJECT_SIZEOF(value))
    if depth >= 6:
        return total, False
    n = _container_length(value)
    items = _container_items(value)
    measured, exact = 0, True
    for item in items:
        size, ok = _size(item, budget, seen, depth + 1)
        measured += size
        exact = exact and ok
    per_key = 2 if type(value) in DICTS else 1
    shown = len(items) // per_key
    if shown < n and shown:
        measured = measured * n // shown
        exact = False
    return total + measured, exact


def _unknown_size(value: Any, budget: Budget, seen: set[int], depth: int) -> tuple[int, bool]:
    total = int(_OBJECT_SIZEOF(value))
    if depth >= 4:
        return total, False
    try:
        referents = gc.get_referents(value)
    except Exception:
        return total, False
    for ref in referents[:_SAMPLE]:
        if isinstance_safe(ref, _SKIP_REFERENTS):
            continue
        size, _ = _size(ref, budget, seen, depth + 1)
        total += size
        if not budget.left:
            break
    return total, False


def isinstance_safe(value: Any, classes: tuple[type, ...]) -> bool:
    """``isinstance`` by the object's real type only (never its ``__class__`` attribute)."""
    return issubclass(type(value), classes)


def _library_size(t: type, value: Any, budget: Budget) -> tuple[int, bool] | None:
    np = sys.modules.get("numpy")
    if np is not None and t is np.ndarray:
        if value.dtype.hasobject:
            return _object_array_size(value, budget)
        return int(value.nbytes), True
    if sys.modules.get("pandas") is not None or sys.modules.get("polars") is not None:
        for sizer in _FRAME_SIZERS:
            found = sizer(value, budget)
            if found is not None:
                return found
    return None


#: Sizers of library objects measured elsewhere (the frames module adds its own when it is
#: imported, which the package does first): this module stays below the modules that use it.
_FRAME_SIZERS: list[Callable[[Any, Budget], tuple[int, bool] | None]] = []


def add_frame_sizer(sizer: Callable[[Any, Budget], tuple[int, bool] | None]) -> None:
    """Let :func:`estimate_size` measure the objects ``sizer`` knows (it answers None for others)."""
    if sizer not in _FRAME_SIZERS:
        _FRAME_SIZERS.append(sizer)


def _object_array_size(array: Any, budget: Budget) -> tuple[int, bool]:
    total = int(array.nbytes)
    n = int(array.size)
    if not n:
        return total, True
    flat = array.reshape(-1) if array.flags.c_contiguous else array.ravel()
    sample = min(n, _SAMPLE)
    seen: set[int] = set()
    measured = sum(_size(flat[i], budget, seen, 1)[0] for i in range(sample))
    return total + measured * n // sample, sample == n
