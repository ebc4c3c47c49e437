"""The skill tools: ``skill``, ``skill_search`` and ``skill_read`` (``skills``)."""
