"""Shared helpers for the self-play and training-data tests (no tests of its own).

Small, fast settings: 7x7 boards, a handful of visits, a tiny random-weight network
on one CPU thread, and the shipped example config as the base.
"""
from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Optional

import torch

import katacli
from katacli.config import Config
from katacli.nn.configs import random_description
from katacli.nn.evaluator import NNEvaluator
from katacli.nn.torch_model import KataGoModel
from katacli.selfplay.game import FixedModel, GameRunner, ModelHandle
from katacli.selfplay.mcts import MctsSelfplaySearch
from katacli.selfplay.raw_policy import NetEvaluator
from katacli.selfplay.searching import RawNetSearcher
from katacli.selfplay.settings import SelfplaySettings

from support.paths import CONFIGS, MODELS, REPO, TEST_B4  # noqa: F401  (REPO: used by the self-play tests)

EXAMPLE_CONFIG = CONFIGS / "selfplay_example.cfg"
SHARED_TEST_MODEL = MODELS / TEST_B4

# Overrides that keep games tiny and quick; individual tests add their own on top.
TINY_OVERRIDES = (
    "bSizes=7,bSizeRelProbs=1,allowRectangleProb=,dataBoardLen=9,maxVisits=12,cheapSearchVisits=4,"
    "reducedVisitsMin=4,numGameThreads=2,handicapAsymmetricPlayoutProb=0,normalAsymmetricPlayoutProb=0,"
    "komiAuto=false,komiMean=7,maxMovesPerGame=120,logToStdout=false,nnMaxBatchSize=16"
)

torch.set_num_threads(1)  # tiny batches: extra threads only contend


def subprocess_env() -> dict:
    """Environment for `python -m katacli.cli` children: they import the same katacli as this process."""
    env = dict(os.environ)
    package_root = str(Path(katacli.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    return env


def tiny_config(extra: str = "") -> Config:
    cfg = Config.from_file(EXAMPLE_CONFIG, mode="selfplay")
    cfg.apply_overrides(TINY_OVERRIDES)
    if extra:
        cfg.apply_overrides(extra)
    return cfg


def tiny_settings(extra: str = "") -> SelfplaySettings:
    return SelfplaySettings.from_config(tiny_config(extra))


_NETS: dict = {}


def random_model(name: str = "b2c16", seed: int = 7) -> KataGoModel:
    return KataGoModel(random_description(name, seed=seed, model_name=f"random-{name}-{seed}"))


def random_handle(name: str = "b2c16", seed: int = 7) -> ModelHandle:
    key = (name, seed)
    if key not in _NETS:
        model = random_model(name, seed)
        evaluator = NNEvaluator(model, device="cpu", cache_size_power_of_two=None)
        _NETS[key] = ModelHandle(model.name, NetEvaluator(evaluator, model.name))
    return _NETS[key]


def play_games(settings: SelfplaySettings, count: int, *, seed: int = 1, search: str = "raw",
               handle: Optional[ModelHandle] = None, runner: Optional[GameRunner] = None):
    """Play ``count`` games in this thread; returns the finished games."""
    handle = handle or random_handle()
    if search == "raw":
        factory = lambda model, rng: RawNetSearcher(model.net, rng)  # noqa: E731
    else:
        factory = lambda model, rng: MctsSelfplaySearch(model.net, rng)  # noqa: E731
    runner = runner or GameRunner(settings, factory)
    rng = random.Random(seed)
    return [runner.run_game(rng, FixedModel(handle)) for _ in range(count)]
