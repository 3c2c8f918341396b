"""Whether two batches in flight pay on this machine: the best thread count searched both ways.

``searchPipelining = auto`` (katacli.search.pipeline) pipelines a search when the network is launched on
a GPU and costs enough per position that the GPU, not the search, is the likely bottleneck. For a small
net on a GPU the answer depends on the host's cores: pipelining hides the GPU's time behind the search
thread's, but splits each batch in two. So `kata benchmark` and `kata genconfig` on a GPU search the
recommended numSearchThreads again with pipelining the other way, and recommend the faster setting when
it wins clearly (:data:`MIN_GAIN`); otherwise `auto` stays.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from katacli.config import Enabled
from katacli.search.pipeline import PIPELINE_LANES, pipelining_applies
from katacli.search.speed_benchmark import BenchmarkResult

# The other setting is recommended when it is at least this much faster (the runs are short: a few
# percent either way is noise).
MIN_GAIN = 0.05
# Below this many threads a lane holds too few leaves for the comparison to matter.
MIN_THREADS = 16


@dataclass(frozen=True)
class PipeliningCheck:
    """The same thread count searched with and without pipelining; ``chosen`` is the run the config's own
    setting made (the benchmark's), ``other`` the run with pipelining the other way."""

    chosen: BenchmarkResult
    other: BenchmarkResult

    @property
    def num_threads(self) -> int:
        return self.chosen.num_threads

    @property
    def pipelined(self) -> BenchmarkResult:
        return self.chosen if self.chosen.pipelined else self.other

    @property
    def unpipelined(self) -> BenchmarkResult:
        return self.other if self.chosen.pipelined else self.chosen

    @property
    def gain(self) -> float:
        """The other setting's speed over the chosen one's, minus one (medians over positions)."""
        return self.other.median_visits_per_second / max(self.chosen.median_visits_per_second, 1e-9) - 1.0

    @property
    def recommended(self) -> Optional[bool]:
        """searchPipelining to set (True / False) when the other setting wins clearly; None: keep the config's."""
        return self.other.pipelined if self.gain >= MIN_GAIN else None

    def lines(self) -> list[str]:
        p, u = self.pipelined, self.unpipelined
        ratio = p.median_visits_per_second / max(u.median_visits_per_second, 1e-9)
        head = (f"Two batches in flight (searchPipelining) at numSearchThreads = {self.num_threads}: pipelined "
                f"{p.median_visits_per_second:.0f} visits/s, one batch at a time {u.median_visits_per_second:.0f} "
                f"(pipelined {ratio:.2f}x; medians over the positions).")
        setting = "pipelined" if self.chosen.pipelined else "did not pipeline"
        if self.gain < 0:
            verdict = f"Your config's setting ({setting}) is the faster here: keep it."
        elif self.recommended is None:
            verdict = (f"The other setting is within {MIN_GAIN:.0%} of your config's ({setting}), about as much as "
                       "runs this short vary: keep your config's.")
        else:
            verdict = (f"Recommended: searchPipelining = {'true' if self.recommended else 'false'} "
                       f"(your config's setting {setting}; the other is {self.gain:.0%} faster here).")
        return [head, verdict]

    def to_dict(self) -> dict:
        return {"num_threads": self.num_threads, "config_pipelined": self.chosen.pipelined,
                "pipelined_visits_per_second": self.pipelined.median_visits_per_second,
                "unpipelined_visits_per_second": self.unpipelined.median_visits_per_second,
                "recommended_search_pipelining": self.recommended}


def worth_checking(evaluator, human_evaluator, num_threads: int, forced: Optional[bool] = None) -> bool:
    """Whether to search the best count the other way: ``forced`` True / False decides; None: on a GPU that
    runs launched calls (where ``auto`` guesses), from MIN_THREADS threads, when a search can pipeline."""
    if forced is False or not pipelining_applies(evaluator, human_evaluator, max(num_threads, PIPELINE_LANES)):
        return False
    if forced:
        return num_threads >= PIPELINE_LANES
    return bool(getattr(evaluator, "launches_async", False)) and num_threads >= MIN_THREADS


def check_pipelining(benchmarker, best: BenchmarkResult) -> PipeliningCheck:
    """Search ``best``'s thread count again with pipelining the other way (see the module docstring)."""
    flipped = Enabled.FALSE if best.pipelined else Enabled.TRUE
    other = benchmarker.measure_variant(best.num_threads, search_pipelining=flipped)
    return PipeliningCheck(best, other)
