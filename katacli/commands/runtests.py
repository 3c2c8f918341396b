"""``kata runtests``: check that this installation computes what it should (like `katago runtests`)."""
from __future__ import annotations

from typing import List, Optional

import typer

from katacli.cli_support import report_error_and_exit
from katacli.launch_line import EXIT_INTERRUPTED

HELP = """Check this installation: rules, scoring, features, the network, search and GTP (like `katago runtests`).

Runs a set of quick built-in checks (about half a minute) and prints one line per check, PASS or FAIL.
Network results are compared with reference numbers bundled with katacli, recorded from a build that
reproduces KataGo 1.17.2's own outputs, using tiny bundled networks (a normal one and one laid out
like KataGo's human-SL nets). One check starts `kata gtp -human-model` as a separate process, plays a
move and asks the human net through GTP.

The exit status is 0 when every check passes and 1 otherwise, so scripts can use it.

\b
Examples:
  kata runtests
  kata runtests --only network --only gtp     # just the checks whose names contain these words
  kata runtests --list
"""

EXIT_FAILED = 1
NAME_WIDTH = 20


def run(only: Optional[List[str]], list_only: bool, verbose: bool) -> int:
    from rich.console import Console
    from rich.markup import escape

    from katacli import KATAGO_COMPAT_VERSION, __version__
    from katacli.selfcheck import all_checks, run_check, select

    console = Console(highlight=False, soft_wrap=True)
    checks = select(all_checks(), only)
    if not checks:
        report_error_and_exit(f"no check name contains {' or '.join(repr(p) for p in only or [])}; "
                              "see `kata runtests --list`")
    if list_only:
        for item in checks:
            console.print(f"{item.name:<{NAME_WIDTH}} {escape(item.description)}")
        return 0
    console.print(f"katacli {__version__} self-check (KataGo {KATAGO_COMPAT_VERSION} compatible): "
                  f"{len(checks)} check{'' if len(checks) == 1 else 's'}")
    failed = []
    try:
        for item in checks:
            result = run_check(item)
            status = "[bold green]PASS[/]" if result.passed else "[bold red]FAIL[/]"
            detail = escape(result.detail or item.description)
            console.print(f"{status} {escape(item.name):<{NAME_WIDTH}} {result.seconds:6.2f}s  "
                          + (detail if result.passed else f"[red]{detail}[/]"))
            if not result.passed:
                failed.append(result)
                if verbose and result.trace:
                    console.print(escape(result.trace.rstrip()), style="dim")
    except KeyboardInterrupt:
        console.print("Interrupted.")
        return EXIT_INTERRUPTED   # a script tells a stop from a failed check (ends by SIGINT, as other commands)
    if failed:
        console.print(f"[bold red]{len(failed)} of {len(checks)} checks FAILED:[/] "
                      + ", ".join(escape(r.name) for r in failed))
        if not verbose and any(r.trace for r in failed):
            console.print("Rerun with --verbose to see where the unexpected errors happened.")
        return EXIT_FAILED
    console.print(f"[bold green]All {len(checks)} checks passed.[/]")
    return 0


def register(app: typer.Typer) -> None:
    @app.command("runtests", help=HELP)
    def runtests(
        only: Optional[List[str]] = typer.Option(None, "--only", metavar="WORD",
                                                 help="Run only checks whose names contain WORD (repeatable)."),
        list_only: bool = typer.Option(False, "--list", help="List the checks and exit."),
        verbose: bool = typer.Option(False, "-v", "--verbose", help="Show tracebacks of unexpected errors."),
    ) -> None:
        raise typer.Exit(run(only, list_only, verbose))
