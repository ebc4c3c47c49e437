"""A sandbox execution as notebook outputs, for the cell of the open notebook that asked for it.

The code ran in the workspace's sandbox kernel, so its outputs are the agent's, and they are drawn
in the user's page: each rich output goes through the same inert form as ``%%ws py`` shows
(:meth:`~ws_jupyter.sandbox.kernels.MimeBundle._repr_mimebundle_`: HTML in a sandboxed frame, SVG as an
image, no JavaScript, Markdown or widget types), and streams, the error and the number of outputs
are bounded by the kernel's own output limits. Streams come first, then the displays, the result
and the error (the order ``ExecutionResult`` keeps).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_OUTPUTS", "notebook_outputs"]

#: Rich outputs put into one cell (a loop that displays thousands is summarised).
MAX_OUTPUTS = 50
_MAX_TRACEBACK_LINES = 200


def notebook_outputs(result: Any) -> list[dict[str, Any]]:
    """nbformat 4 outputs of an :class:`~ws_jupyter.sandbox.kernels.ExecutionResult` (inert, bounded)."""
    outputs: list[dict[str, Any]] = []
    if result.stdout:
        outputs.append({"output_type": "stream", "name": "stdout", "text": result.stdout})
    if result.stderr:
        outputs.append({"output_type": "stream", "name": "stderr", "text": result.stderr})
    bundles = list(result.display)
    dropped = result.displays_dropped + max(0, len(bundles) - MAX_OUTPUTS)
    for bundle in bundles[:MAX_OUTPUTS]:
        data, metadata = bundle._repr_mimebundle_()
        outputs.append({"output_type": "display_data", "data": data, "metadata": metadata})
    if dropped:
        outputs.append(
            {"output_type": "stream", "name": "stderr", "text": f"[{dropped} more outputs were not kept]\n"}
        )
    if result.result is not None:
        data, metadata = result.result._repr_mimebundle_()
        outputs.append(
            {
                "output_type": "execute_result",
                "data": data,
                "metadata": metadata,
                "execution_count": result.execution_count,
            }
        )
    if result.error is not None:
        outputs.append(
            {
                "output_type": "error",
                "ename": result.error.ename[:500],
                "evalue": result.error.evalue[:5000],
                "traceback": [line[:5000] for line in result.error.traceback[-_MAX_TRACEBACK_LINES:]],
            }
        )
    for note in result.notes:
        outputs.append({"output_type": "stream", "name": "stderr", "text": f"[{note}]\n"})
    return outputs
