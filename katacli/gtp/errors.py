"""Exceptions of the GTP engine."""
from __future__ import annotations


class GtpError(Exception):
    """A command that fails: the message becomes the ``? message`` response and the engine goes on."""


class EngineStartupError(Exception):
    """The engine cannot start: its network could not be loaded (one line, EXIT_MODEL_FAILURE)."""
