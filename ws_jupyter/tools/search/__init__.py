"""The search tools: ``workspace_search`` (``search``) and ``workspace_index`` (``index``)."""
