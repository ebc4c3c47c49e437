"""Hostile user objects: every hook a reader could call leaves a trace (a file) or hangs.

``Trap(marker)`` returns a class whose ``__repr__``/``__str__`` sleep for a minute, ``__len__``
raises, ``__getattr__``/``__getattribute__`` delete a file and leave a marker, and so do
``__eq__``, ``__hash__``, ``__iter__``, ``__bool__``, ``__sizeof__``, ``__class__``,
``__reduce_ex__``/``__deepcopy__``, ``__format__`` and the metaclass's own hooks. A test asserts
that the marker file was never written and the victim file still exists.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def trap_class(marker: Path, victim: Path, base: type = object) -> type:
    def hit(what: str) -> None:
        marker.write_text(what)
        victim.unlink(missing_ok=True)

    class Meta(type):
        def __eq__(cls, other: Any) -> bool:
            hit("metaclass __eq__")
            return False

        def __hash__(cls) -> int:
            hit("metaclass __hash__")
            return 1

        def __getattribute__(cls, name: str) -> Any:
            if not name.startswith("__"):
                hit(f"metaclass getattr {name}")
            return type.__getattribute__(cls, name)

        def __instancecheck__(cls, obj: Any) -> bool:
            hit("metaclass __instancecheck__")
            return False

    namespace = {
        "__repr__": lambda self: (time.sleep(60), "x")[1],
        "__str__": lambda self: (time.sleep(60), "x")[1],
        "__format__": lambda self, spec: (hit("__format__"), "x")[1],
        "__len__": lambda self: (_ for _ in ()).throw(RuntimeError("len")),
        "__getattr__": lambda self, name: (hit(f"__getattr__ {name}"), 1)[1],
        "__eq__": lambda self, other: (hit("__eq__"), False)[1],
        "__ne__": lambda self, other: (hit("__ne__"), True)[1],
        "__lt__": lambda self, other: (hit("__lt__"), True)[1],
        "__hash__": lambda self: (hit("__hash__"), 1)[1],
        "__iter__": lambda self: (hit("__iter__"), iter(()))[1],
        "__bool__": lambda self: (hit("__bool__"), True)[1],
        "__sizeof__": lambda self: (time.sleep(60), 1)[1],
        "__reduce_ex__": lambda self, protocol: (hit("__reduce_ex__"), (object, ()))[1],
        "__deepcopy__": lambda self, memo: (hit("__deepcopy__"), self)[1],
        "__class__": property(lambda self: (hit("__class__"), dict)[1]),
        "__dict__": property(lambda self: (hit("__dict__"), {})[1]),
    }
    if base is object:
        namespace["__getattribute__"] = _getattribute(hit)
    return Meta("Hostile", (base,), namespace)


def _getattribute(hit: Any) -> Any:
    def __getattribute__(self: Any, name: str) -> Any:
        if name not in ("__class__",):
            hit(f"__getattribute__ {name}")
        return object.__getattribute__(self, name)

    return __getattribute__
