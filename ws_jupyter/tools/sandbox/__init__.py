"""The tools of the sandbox: ``execute_command`` (with ``shell_tail``), the background-process
tools (``processes``), the kernel tools (``kernels``) and ``run_notebook``."""
