"""A tiny check runner for `kata runtests`: named checks, one result each, no test framework needed.

A check is a function that returns a short detail string (shown next to PASS) or raises
:class:`CheckFailed` (or anything else: an unexpected error counts as a failure too)::

    @check("board.captures", "stones without liberties are removed")
    def captures() -> str:
        ...
        expect(board.color_at((1, 1)) == EMPTY, "the surrounded stone is still on the board")
        return "1 stone and a 3-stone group captured"
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from typing import Callable, Iterable, Optional


class CheckFailed(AssertionError):
    """A check found the build behaving wrongly; the message says how."""


@dataclass(frozen=True)
class Check:
    name: str
    description: str
    run: Callable[[], Optional[str]]


@dataclass(frozen=True)
class CheckResult:
    name: str
    description: str
    passed: bool
    seconds: float
    detail: str = ""
    trace: str = ""  # the traceback of an unexpected error (shown with --verbose)


REGISTRY: list[Check] = []


def check(name: str, description: str) -> Callable[[Callable[[], Optional[str]]], Callable[[], Optional[str]]]:
    """Register a check under ``name`` (``area.what``); checks run in registration order."""
    def register(func: Callable[[], Optional[str]]) -> Callable[[], Optional[str]]:
        if any(existing.name == name for existing in REGISTRY):
            raise RuntimeError(f"self-check {name!r} registered twice")
        REGISTRY.append(Check(name, description, func))
        return func
    return register


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_close(name: str, got: float, expected: float, tolerance: float) -> None:
    if not abs(got - expected) <= tolerance:
        raise CheckFailed(f"{name}: got {got:.6g}, expected {expected:.6g} (tolerance {tolerance:g})")


def run_check(item: Check) -> CheckResult:
    start = time.perf_counter()
    try:
        detail = item.run() or ""
        return CheckResult(item.name, item.description, True, time.perf_counter() - start, detail)
    except CheckFailed as exc:
        return CheckResult(item.name, item.description, False, time.perf_counter() - start, str(exc))
    except Exception as exc:  # a crash is a failure of the build, reported like one
        return CheckResult(item.name, item.description, False, time.perf_counter() - start,
                           f"unexpected {type(exc).__name__}: {exc}", traceback.format_exc())


def select(checks: Iterable[Check], patterns: Optional[list[str]]) -> list[Check]:
    """Checks whose name contains any of the patterns (all checks without patterns)."""
    checks = list(checks)
    if not patterns:
        return checks
    return [c for c in checks if any(p.lower() in c.name.lower() for p in patterns)]
