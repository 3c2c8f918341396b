"""`kata runtests`: the self-check a user runs after installing katacli.

Each check is small and independent; together they cover the Go rules, SGF files, the config registry,
the input features and network arithmetic (against a bundled reference recorded from a build verified
against KataGo 1.17.2), search, the benchmark core, a GTP round trip with a real engine process, and
human-SL nets (-human-model: outputs per humanSLProfile, humanSLChosenMoveProp in the search,
kata-raw-human-nn through GTP). Nothing here needs pytest or any test-only dependency.

    from katacli.selfcheck import all_checks, run_check
    for item in all_checks():
        print(run_check(item))

Bundled data (``katacli/selfcheck/data``): ``tiny-b2c16.bin.gz`` (a 2-block, 16-channel network with
random weights), ``tiny-b2c16-human.bin.gz`` (the same with the SGF metadata encoder of KataGo's human-SL
nets) and ``reference.npz``; scripts/make_selfcheck_reference.py regenerates all three.
"""
from katacli.selfcheck.framework import Check, CheckFailed, CheckResult, REGISTRY, run_check, select

# Importing a module registers its checks; this order is the order they run in (cheap, basic ones first).
_CHECK_MODULES = ("rules_checks", "reference_checks", "engine_checks", "human_checks")


def all_checks() -> list[Check]:
    import importlib

    for name in _CHECK_MODULES:
        importlib.import_module(f"katacli.selfcheck.{name}")
    return list(REGISTRY)


__all__ = ["Check", "CheckFailed", "CheckResult", "all_checks", "run_check", "select"]
