"""Second looks at the best thread count: settings whose `auto` value is a guess, searched the other way.

Two of katacli's own search settings are chosen by rules measured on a few machines, and on a GPU the
right answer depends on the host's cores:

* ``searchPipelining`` (katacli.search.pipeline): `auto` pipelines a search when the GPU is the likely
  bottleneck (a big net launched with CUDA graphs). For a small net pipelining hides the GPU's time behind
  the search thread's but splits each batch in two: g170-b6c96 on an H100 host measured 0.89-1.15x
  pipelined, by thread count.
* ``numLeafFeatureThreads`` (katacli.search.leaf_threads): `auto` runs one or two helper threads that fill
  the leaves' inputs beside the search thread. Where the search thread is the bottleneck (a small net on a
  fast GPU) one more helper may pay: on the H100 host the second gave 1.21x at 256 leaves, the trend not
  flattened.

So `kata benchmark` and `kata genconfig` on a GPU search the recommended numSearchThreads again with
pipelining the other way, then (with the better pipelining) with one more helper, and recommend a setting
when it wins clearly (:data:`MIN_GAIN`); otherwise `auto` stays.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from katacli.config import Enabled
from katacli.config_keys.search_keys import AUTO_LEAF_FEATURE_THREADS, MAX_LEAF_FEATURE_THREADS
from katacli.cpu_cores import usable_cpu_count
from katacli.search.leaf_threads import leaf_feature_threads
from katacli.search.pipeline import PIPELINE_LANES, lane_capacity, pipelining_applies
from katacli.search.speed_benchmark import BenchmarkResult

# Another setting is recommended when it is at least this much faster (the runs are short: a few percent
# either way is noise).
MIN_GAIN = 0.05
# Below this many threads the batches are too small for either setting to matter.
MIN_THREADS = 16
# One more helper is tried only where this many cores are left over beside the search thread, the helpers
# already running and the network's own thread.
SPARE_CORES_FOR_A_HELPER = 1


@dataclass(frozen=True)
class SettingCheck:
    """One thread count searched with the config's setting (``chosen``, the benchmark's run) and with
    ``key`` set to ``other_value`` (``other``); values as a config file spells them."""

    key: str
    chosen_value: str
    other_value: str
    chosen: BenchmarkResult
    other: BenchmarkResult

    @property
    def num_threads(self) -> int:
        return self.chosen.num_threads

    @property
    def gain(self) -> float:
        """The other setting's speed over the chosen one's, minus one (medians over positions)."""
        return self.other.median_visits_per_second / max(self.chosen.median_visits_per_second, 1e-9) - 1.0

    @property
    def recommended(self) -> Optional[str]:
        """The value to set ``key`` to when the other setting wins clearly; None: keep the config's."""
        return self.other_value if self.gain >= MIN_GAIN else None

    @property
    def best(self) -> BenchmarkResult:
        """The run of the setting to keep."""
        return self.other if self.recommended is not None else self.chosen

    def lines(self) -> list[str]:
        head = (f"{self.key} at numSearchThreads = {self.num_threads}: yours ({self.chosen_value}) "
                f"{self.chosen.median_visits_per_second:.0f} visits/s, {self.other_value} "
                f"{self.other.median_visits_per_second:.0f} ({self.gain + 1:.2f}x; medians over the positions).")
        if self.gain < 0:
            verdict = f"Your config's {self.key} ({self.chosen_value}) is the faster here: keep it."
        elif self.recommended is None:
            verdict = (f"{self.key} = {self.other_value} is within {MIN_GAIN:.0%} of your config's "
                       f"({self.chosen_value}), about as much as runs this short vary: keep your config's.")
        else:
            verdict = f"Recommended: {self.key} = {self.other_value} ({self.gain:.0%} faster here)."
        return [head, verdict]

    def config_note(self) -> str:
        """The comment `kata genconfig` writes above the key it sets from this check."""
        return (f"Chosen by `kata genconfig`: {self.other.median_visits_per_second:.0f} visits/s at "
                f"{self.num_threads} threads against {self.chosen.median_visits_per_second:.0f} with "
                f"{self.key} = {self.chosen_value}.")

    def to_dict(self) -> dict:
        return {"key": self.key, "num_threads": self.num_threads, "config_value": self.chosen_value,
                "config_visits_per_second": self.chosen.median_visits_per_second, "other_value": self.other_value,
                "other_visits_per_second": self.other.median_visits_per_second, "recommended": self.recommended}


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


def worth_checking(evaluator, human_evaluator, num_threads: int, forced: Optional[bool] = None) -> bool:
    """Whether to take second looks at the best count: ``forced`` True / False decides; None: on a GPU that
    runs launched calls (where the `auto` values guess), from MIN_THREADS threads; never where a search
    cannot pipeline (no array batches, a human-SL net, one leaf)."""
    if forced is False or num_threads < PIPELINE_LANES or not pipelining_applies(evaluator, human_evaluator,
                                                                                  num_threads):
        return False
    if forced:
        return True
    return bool(getattr(evaluator, "launches_async", False)) and num_threads >= MIN_THREADS


def check_pipelining(benchmarker, best: BenchmarkResult) -> SettingCheck:
    """``best``'s thread count searched again with searchPipelining the other way."""
    flipped = not best.pipelined
    other = benchmarker.measure_variant(best.num_threads, search_pipelining=Enabled.TRUE if flipped else Enabled.FALSE)
    return SettingCheck("searchPipelining", _bool_text(best.pipelined), _bool_text(flipped), best, other)


def helpers_in_use(params, result: BenchmarkResult) -> int:
    """Leaf helper threads the search of ``result`` ran (numLeafFeatureThreads resolved for its batches)."""
    lanes = PIPELINE_LANES if result.pipelined else 1
    return leaf_feature_threads(params, lane_capacity(result.num_threads, lanes))


def check_helpers(benchmarker, best: BenchmarkResult) -> Optional[SettingCheck]:
    """``best`` searched again with one more leaf helper, where numLeafFeatureThreads is auto and the cores
    allow (None otherwise). ``best`` may be a pipelining check's run: the variant keeps its pipelining."""
    params = benchmarker.params
    if params.num_leaf_feature_threads != AUTO_LEAF_FEATURE_THREADS:
        return None   # set by the user: theirs to change
    helpers = helpers_in_use(params, best)
    if helpers == 0 or helpers + 1 > MAX_LEAF_FEATURE_THREADS:
        return None
    if usable_cpu_count() < 1 + helpers + 1 + 1 + SPARE_CORES_FOR_A_HELPER:   # search, helpers, one more, network
        return None
    pipelining = Enabled.TRUE if best.pipelined else Enabled.FALSE
    other = benchmarker.measure_variant(best.num_threads, search_pipelining=pipelining,
                                        num_leaf_feature_threads=helpers + 1)
    return SettingCheck("numLeafFeatureThreads", f"auto: {helpers}", str(helpers + 1), best, other)


def second_looks(benchmarker, best: BenchmarkResult) -> list[SettingCheck]:
    """The pipelining check, then the helper check on the better pipelining's run (where it applies)."""
    checks = [check_pipelining(benchmarker, best)]
    helper_check = check_helpers(benchmarker, checks[0].best)
    if helper_check is not None:
        checks.append(helper_check)
    return checks


def take_second_looks(benchmarker, best: BenchmarkResult, evaluator, human_evaluator, say: Callable[[str], None],
                      forced: Optional[bool] = None) -> list[SettingCheck]:
    """:func:`second_looks` where :func:`worth_checking` (``forced`` as there), each check's lines said;
    the checks ([] where none ran)."""
    if not worth_checking(evaluator, human_evaluator, best.num_threads, forced):
        return []
    say(f"Searching numSearchThreads = {best.num_threads} again with searchPipelining the other way (and one "
        "more leaf helper, numLeafFeatureThreads, where the cores allow), to compare: ")
    checks = second_looks(benchmarker, best)
    for check in checks:
        for text in check.lines():
            say(text)
    return checks
