"""The package version, written once: hatch reads it from here for the wheel's metadata, the
package re-exports it as ``ws_jupyter.__version__``, and code below the package face (the CLI,
``doctor``, the MCP server's handshake) imports it from here without loading the face."""

__version__ = "0.1.0"
