"""``kata convert``: training data between KataGo's .npz and katacli's .h5, without loss."""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import typer

from katacli.cli_support import report_error_and_exit

HELP = """Convert training data between KataGo's .npz files and katacli's .h5 files.

Both hold the same arrays (binaryInputNCHWPacked, globalInputNC, policyTargetsNCMove, globalTargetsNC, scoreDistrN, valueTargetsNCHW, qValueTargetsNCMove), so conversion is exact in both directions. The direction follows the input: .npz becomes .h5 and .h5 becomes .npz. A directory is converted file by file (recursively) into OUTPUT, keeping relative paths (a file that cannot be read is reported and skipped, and the exit status is 1); the format follows the files found there, and --to picks it for a directory holding both kinds.

\b
Examples:
  kata convert selfplay/tdata/0A1B2C3D.h5        writes 0A1B2C3D.npz next to it
  kata convert katago/selfplay converted         every .npz below, as .h5
  kata convert --describe                        every dataset and channel
"""

# Listed after the main subcommands in `kata --help`.
HELP_PANEL = "Data tools"


@contextlib.contextmanager
def _progress_bar() -> Iterator[Callable[[int, int], None]]:
    """A bar on stderr for a folder's files, where a person watches (a terminal); nothing in a pipe or log."""
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("[bold]convert"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
                  TimeRemainingColumn(), console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("convert", total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def register(app: typer.Typer) -> None:
    @app.command("convert", help=HELP, rich_help_panel=HELP_PANEL, no_args_is_help=True)
    def convert(
        source: Optional[str] = typer.Argument(None, metavar="INPUT", help="A .npz or .h5 file, or a directory."),
        output: Optional[str] = typer.Argument(None, metavar="OUTPUT",
                                               help="Output file (.npz for a .h5 input, .h5 for a .npz) or directory (default: next to the input)."),
        to: Optional[str] = typer.Option(None, "--to", metavar="h5|npz",
                                         help="For directories: convert into this format (default: the other format of the files found; needed when both are there)."),
        describe: bool = typer.Option(False, "--describe", help="Print the data layout and exit."),
    ) -> None:
        from katacli.data import TrainingDataError, convert_file, convert_tree
        from katacli.data.schema import H5_SUFFIX, NPZ_SUFFIX, describe as describe_schema

        if describe:
            print(describe_schema())
            raise typer.Exit()
        if source is None:
            report_error_and_exit("give a .npz or .h5 file or a directory to convert (or --describe)")
        src = Path(source)
        if not src.exists():
            report_error_and_exit(f"{source} does not exist")
        try:
            if src.is_dir():
                if to is None:
                    # The direction the folder's files imply, as for one file; both kinds there: say which.
                    has_npz, has_h5 = any(src.rglob("*" + NPZ_SUFFIX)), any(src.rglob("*" + H5_SUFFIX))
                    if has_npz and has_h5:
                        report_error_and_exit(f"{source} holds both .npz and .h5 files: give --to h5 or --to npz")
                    to = "npz" if has_h5 else "h5"
                suffix = {"h5": H5_SUFFIX, "npz": NPZ_SUFFIX}.get(to)
                if suffix is None:
                    report_error_and_exit(f"--to must be h5 or npz, not {to!r}")
                unreadable: list[str] = []

                def skip(path: Path, exc: TrainingDataError) -> None:   # one bad file costs only itself
                    unreadable.append(str(path))
                    print(f"skipped: {exc}", file=sys.stderr, flush=True)

                with _progress_bar() as on_progress:
                    written = convert_tree(src, Path(output) if output else src, suffix, on_error=skip,
                                           on_progress=on_progress)
                if not written and not unreadable:
                    other = NPZ_SUFFIX if suffix == H5_SUFFIX else H5_SUFFIX
                    report_error_and_exit(f"no {other} files to convert in {source}")
                print(f"converted {len(written)} files")
                if unreadable:
                    report_error_and_exit(f"{len(unreadable)} file(s) could not be read and were not converted "
                                          "(listed above)")
            else:
                if to is not None and src.suffix.lstrip(".") == to:
                    report_error_and_exit(f"{source} is already a .{to} file")
                written = convert_file(src, output)
                print(f"wrote {written}")
        except TrainingDataError as exc:
            report_error_and_exit(str(exc))
        except OSError as exc:
            report_error_and_exit(f"cannot write output: {exc}")
