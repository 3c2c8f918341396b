"""An engine's launch line read without building the typer app, so that a GUI's engine starts sooner.

KaTrain starts ``kata analysis -model M -human-model H -config C -analysis-threads 12`` and waits for
"ready"; Lizzie, Sabaki and match runners start ``kata gtp -model M -config C`` the same way. Through
typer, that line first costs ~0.2 s on a 2-core machine (typer, the pydantic it
converts every option with, and every subcommand's module), close to half the time to "ready". A
subcommand that declares :class:`LaunchOptions` (the options of its typer command) is run directly
when its line holds only those options, each in ``--name value`` or ``--name=value`` form, given at
most once (the repeatable ones any number of times), with numbers as plain digits. Any other line
(``--help``, an unknown, repeated or valueless option, a value starting with ``-``, a stray argument)
goes through typer as before, which prints its usual help and errors. This module imports no typer.
"""
from __future__ import annotations

import errno
import importlib
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

# Subcommands whose launch line is read here: name -> module defining LAUNCH_OPTIONS and launch(**params).
DIRECT_LAUNCH_MODULES = {"analysis": "katacli.commands.analysis", "gtp": "katacli.commands.gtp"}

# Exit statuses as typer's standalone mode gives them around a command: input ended at a prompt
# (Abort), Ctrl-C, and a closed stdout.
EXIT_ABORTED = 1
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 1


@dataclass(frozen=True)
class LaunchOptions:
    """A command's options as its typer command declares them: ``--name`` -> parameter name.

    ``values``: one string each (None when absent); ``repeated``: a list of strings (None when absent);
    ``counts``: an int each (None when absent); ``flags``: True when given, else False."""

    values: dict[str, str] = field(default_factory=dict)
    repeated: dict[str, str] = field(default_factory=dict)
    counts: dict[str, str] = field(default_factory=dict)
    flags: dict[str, str] = field(default_factory=dict)

    def names(self) -> set[str]:
        return set(self.values) | set(self.repeated) | set(self.counts) | set(self.flags)


def parse_launch_line(args: list[str], options: LaunchOptions) -> Optional[dict]:
    """The command's parameters from ``args`` (after the subcommand, ``--long`` spelling), or None when
    the line is anything but the plain form this module reads (typer then reads it)."""
    params: dict = {name: None for name in (*options.values.values(), *options.repeated.values(),
                                            *options.counts.values())}
    params.update({name: False for name in options.flags.values()})
    seen: set[str] = set()
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        name, has_value, value = arg.partition("=")
        if name in options.flags:
            if has_value or name in seen:
                return None
            seen.add(name)
            params[options.flags[name]] = True
            continue
        if name not in options.names() - set(options.flags):
            return None
        if not has_value:
            if position >= len(args):
                return None
            value = args[position]
            position += 1
        if value.startswith("-"):
            return None
        if name in options.repeated:
            params[options.repeated[name]] = (params[options.repeated[name]] or []) + [value]
            continue
        if name in seen:
            return None
        seen.add(name)
        if name in options.counts:
            if not (value.isascii() and value.isdigit()):
                return None
            params[options.counts[name]] = int(value)
        else:
            params[options.values[name]] = value
    return params


def launch_directly(args: list[str]) -> Optional[int]:
    """Run ``args`` (normalised, subcommand first) without typer when its subcommand allows it and the
    line is plain; the exit status, or None to let typer run it."""
    if not args or args[0] not in DIRECT_LAUNCH_MODULES:
        return None
    try:
        module = importlib.import_module(DIRECT_LAUNCH_MODULES[args[0]])
    except Exception:  # typer registers it as unavailable and says why
        return None
    params = parse_launch_line(args[1:], module.LAUNCH_OPTIONS)
    if params is None:
        return None
    try:
        return module.launch(**params)
    except EOFError:
        print("\nAborted!", file=sys.stderr)
        return EXIT_ABORTED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # The reader went away: nothing more can be written, and the exit must not complain about it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
