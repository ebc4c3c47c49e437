"""Skill problems shown once, in the output that found them.

Discovering skills reports each problem (an invalid SKILL.md, a duplicate name) twice: as a log
record and as a ``SkillWarning``. In a notebook both land on the cell's stderr — the warning with
a location inside IPython's magic machinery — next to the view that lists the problems anyway.
So the magics and the skills browser discover skills inside ``skill_problems()``, which keeps the
warnings' messages for the caller to show, passes any other warning on, and the extension gives
the skills loggers a ``NullHandler`` (a notebook that configures logging still gets the records).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["SKILLS_LOGGER", "quiet_skills_logger", "skill_problems"]

SKILLS_LOGGER = "ws_jupyter.skills"


@contextmanager
def skill_problems() -> Iterator[list[str]]:
    """Collects the ``SkillWarning`` messages raised inside the block (other warnings are shown)."""
    from .. import SkillWarning

    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkillWarning)
        yield found
    for w in caught:
        if issubclass(w.category, SkillWarning):
            if str(w.message) not in found:
                found.append(str(w.message))
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def quiet_skills_logger() -> Callable[[], None]:
    """Adds the ``NullHandler`` that keeps skill records off stderr; returns what removes it."""
    logger = logging.getLogger(SKILLS_LOGGER)
    handler = logging.NullHandler()
    logger.addHandler(handler)
    return lambda: logger.removeHandler(handler)
