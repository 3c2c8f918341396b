"""A KataGo network for Python: ``net = load_network("net.bin.gz")``, ``net.evaluate(game)``.

:class:`Network` wraps :class:`katacli.nn.evaluator.NNEvaluator` (the evaluator ``kata gtp`` and
``kata analysis`` run) and turns its White's-view outputs into :class:`Evaluation` objects whose
plain names are for the side to move (``winrate``, ``score_lead``, ``ownership``) and whose
``white_`` names are for White. Subclass and override :meth:`Network.adjust` to change what every
search sees (see ``examples/custom_search_hook.py``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import numpy as np

from katacli.api.args import color_name
from katacli.config_keys import default_value
from katacli.game.coords import WHITE, format_vertex

if TYPE_CHECKING:
    from katacli.api.game import Game
    from katacli.nn.evaluator import NNEvaluator, NNRequest
    from katacli.nn.postprocess import NNOutput

# Architecture of Network.random's default: the smallest one (2 blocks, 16 channels), for tests and examples.
DEFAULT_RANDOM_ARCHITECTURE = "b2c16"


@dataclass(frozen=True)
class Evaluation:
    """One raw network evaluation. Plain names are for the side to move, ``white_`` names for White.

    Arrays are indexed [row, column] with row 0 the top row, like :attr:`Game.board`.

    >>> from katacli.api.game import Game
    >>> evaluation = Network.random(seed=0).evaluate(Game(5))
    >>> evaluation.next_player, evaluation.ownership.shape, len(evaluation.top_moves(3))
    ('B', (5, 5), 3)
    """

    next_player: str          # "B" or "W": the side the evaluation is for
    winrate: float            # side to move's winning chance (no-result counts half)
    white_winrate: float
    no_result: float          # probability of no result (only under rules with cycles)
    score_lead: float         # points the side to move is ahead by
    white_score_lead: float
    policy: np.ndarray        # float32 [rows, columns]: move probabilities, 0 where illegal
    pass_policy: float        # probability of passing
    ownership: np.ndarray     # float32 [rows, columns] in [-1, 1]: +1 the side to move owns the point
    white_ownership: np.ndarray
    x_size: int
    y_size: int
    raw: Any = None           # the NNOutput (White's view, flat arrays, -1 for illegal moves)

    @property
    def best_move(self) -> str:
        """The move the policy likes most ("pass" included)."""
        return self.top_moves(1)[0][0]

    def top_moves(self, count: int = 5) -> list[tuple[str, float]]:
        """The ``count`` most likely moves as (vertex, probability), most likely first."""
        flat = self.policy.reshape(-1)
        candidates = [(float(p), format_vertex((i % self.x_size, i // self.x_size), self.x_size, self.y_size))
                      for i, p in enumerate(flat) if p > 0]
        candidates.append((self.pass_policy, "pass"))
        candidates.sort(key=lambda item: -item[0])
        return [(vertex, prob) for prob, vertex in candidates[:count]]


def evaluation_from_output(output, next_player: int) -> Evaluation:
    """An :class:`Evaluation` from an NNOutput (White's view) for ``next_player`` (1 Black, 2 White).

    >>> from katacli.api.game import Game
    >>> from katacli.search.raw_eval import position_request
    >>> net, game = Network.random(seed=0), Game(5)
    >>> output = net.nn.evaluate([position_request(game.state, 1)])[0]
    >>> evaluation_from_output(output, 1).next_player
    'B'
    """
    x_size, y_size = output.board_x, output.board_y
    white_winrate = 0.5 + 0.5 * (float(output.white_win) - float(output.white_loss))
    sign = 1.0 if next_player == WHITE else -1.0
    policy = np.clip(np.asarray(output.policy, np.float32), 0.0, None).reshape(y_size, x_size)
    white_ownership = np.asarray(output.white_ownership, np.float32).reshape(y_size, x_size)
    return Evaluation(
        next_player=color_name(next_player),
        winrate=white_winrate if sign > 0 else 1.0 - white_winrate, white_winrate=white_winrate,
        no_result=float(output.no_result),
        score_lead=sign * float(output.white_lead), white_score_lead=float(output.white_lead),
        policy=policy, pass_policy=max(0.0, float(output.policy_pass)),
        ownership=sign * white_ownership, white_ownership=white_ownership,
        x_size=x_size, y_size=y_size, raw=output,
    )


class Network:
    """A loaded network. Get one with :func:`load_network` (or :meth:`Network.random` for experiments).

    >>> from katacli.api.game import Game
    >>> net = Network.random(seed=1)
    >>> result = net.evaluate(Game(9).play("E5"))
    >>> result.next_player, 0.0 <= result.winrate <= 1.0, result.policy.shape
    ('W', True, (9, 9))
    >>> result.winrate == result.white_winrate  # White is to move: the same view
    True
    """

    def __init__(self, evaluator: "NNEvaluator", name: str | None = None) -> None:
        self.nn = evaluator
        self.name = name or evaluator.model_name

    # ------------------------------------------------------------------ construction
    @classmethod
    def random(cls, architecture: str = DEFAULT_RANDOM_ARCHITECTURE, seed: int | None = None,
               **evaluator_options: Any) -> "Network":
        """A randomly initialised net of a named architecture ("b2c16", "b6c96", "b18c384nbt", ...): it plays
        nonsense, but everything runs without a model file."""
        from katacli.nn.evaluator import NNEvaluator
        from katacli.nn.torch_model import KataGoModel

        evaluator_options.setdefault("device", "cpu")
        evaluator_options.setdefault("default_symmetry", 0)
        return cls(NNEvaluator(KataGoModel.from_config(architecture, seed=seed).eval(), **evaluator_options),
                   name=f"random-{architecture}")

    # ------------------------------------------------------------------ facts
    @property
    def version(self) -> int:
        """The model format version (8-17)."""
        return int(self.nn.version)

    @property
    def evaluator(self):
        """What searches evaluate leaves with: the NNEvaluator itself, or, when :meth:`adjust` is
        overridden, a wrapper that applies it to every evaluation."""
        if type(self).adjust is Network.adjust:
            return self.nn
        return _AdjustingEvaluator(self)

    # ------------------------------------------------------------------ evaluating
    @property
    def is_human_sl(self) -> bool:
        """Whether this is a human-SL net (KataGo's -human-model kind): it needs a ``profile`` to evaluate."""
        return bool(self.nn.needs_metadata)

    def evaluate(self, game: "Game", symmetry: int | None = None, profile: str | None = None,
                 policy_optimism: float | None = None) -> Evaluation:
        """The network's view of ``game``'s position for the side to move (policy, value, ownership).

        ``profile``: for human-SL nets, whom to imitate (KataGo's humanSLProfile: "rank_5k", "preaz_3d",
        "proyear_1990", ...). ``policy_optimism``: see :meth:`evaluate_many`.
        """
        return self.evaluate_many([game], symmetry, profile, policy_optimism)[0]

    def evaluate_many(self, games: Sequence["Game"], symmetry: int | None = None,
                      profile: str | None = None, policy_optimism: float | None = None) -> list[Evaluation]:
        """Evaluate many positions in batches (mixed board sizes are fine); one Evaluation per game, in order.

        ``symmetry``: 0-7 for one of KataGo's board symmetries, None for the network's default.
        ``profile``: the humanSLProfile a human-SL net needs (ignored by other nets).
        ``policy_optimism``: the optimistic policy's share in the priors of nets that have one (version 12+):
        None takes KataGo's rootPolicyOptimism default, what ``kata-raw-nn`` and a search's root use (0.2);
        0 is the plain policy.
        """
        from katacli.search.raw_eval import position_request
        from katacli.nn.human_profile import parse_human_profile

        from katacli.api.game import Game

        if symmetry is not None and not 0 <= symmetry < 8:
            raise ValueError(f"symmetry must be 0..7 or None, got {symmetry!r}")
        for game in games:
            if not isinstance(game, Game):
                raise TypeError(f"evaluate takes katacli.Game positions, got {type(game).__name__}")
            if game.nogo:
                raise ValueError("a network evaluates Go positions, not NoGo (its games search by rollouts)")
        parsed = parse_human_profile(profile or "")
        if self.is_human_sl and not parsed.is_set:
            raise ValueError(f"{self.name} is a human-SL net: pass profile=, e.g. profile=\"rank_5k\"")
        players = [game.session.next_player for game in games]
        if policy_optimism is None:
            policy_optimism = default_value("rootPolicyOptimism", "gtp")
        elif not 0.0 <= policy_optimism <= 1.0:
            raise ValueError(f"policy_optimism must be from 0 to 1, got {policy_optimism!r}")
        requests = [position_request(game.session.state, pla, symmetry, policy_optimism, meta_profile=parsed,
                                     needs_metadata=self.is_human_sl) for game, pla in zip(games, players)]
        outputs = self.evaluator.evaluate(requests)
        return [evaluation_from_output(output, pla) for output, pla in zip(outputs, players)]

    def adjust(self, request: "NNRequest", output: "NNOutput") -> "NNOutput":
        """Hook: change one evaluation before anything uses it (searches included). Returns the output.

        ``output`` is White's view with flat arrays (``policy`` row-major, -1 where illegal) and read-only
        arrays: build a new one with ``dataclasses.replace``. ``request.white_to_move`` tells whose turn
        it is. The default returns ``output`` unchanged.
        """
        return output

    def __repr__(self) -> str:
        return f"Network({self.name!r}, version {self.version})"


class _AdjustingEvaluator:
    """An evaluator that applies a Network's :meth:`~Network.adjust` to every result."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self.cache = network.nn.cache  # cached results are the network's own, adjusted on the way out

    def evaluate(self, requests: Sequence["NNRequest"]) -> list:
        outputs = self.network.nn.evaluate(requests)
        return [self.network.adjust(request, output) for request, output in zip(requests, outputs)]


def load_network(path: Union[str, os.PathLike], *, device: str | None = None, symmetry: int | None = None,
                 precision: str = "float32", cache: bool = True, max_batch_size: int | None = None,
                 compile: bool | None = None, seed: int | None = None, trace: bool = True) -> Network:
    """Load a KataGo model file (``.bin.gz``, ``.bin``, ``.txt.gz``; versions 8-17).

    ``device``: "cpu", "cuda", "cuda:1"; default CUDA when there is a GPU. ``symmetry``: None evaluates
    each position under a random one of KataGo's 8 board symmetries (KataGo's default), 0-7 always that
    one (reproducible); ``seed`` makes the random draws repeat from run to run (with ``analyze(seed=...)``, a
    search's result). ``precision``: "float32" (exact), "float16" or "bfloat16". ``cache``: remember
    evaluated positions. ``compile``: run the net through torch.compile; None does for big half-precision
    nets on CUDA (b18c384nbt float16: 1.4x; the first evaluation waits ~20 s for the compile). ``trace``:
    run a net on the CPU as a TorchScript trace per board shape (faster beside busy Python threads); each
    trace keeps a few MB (g170: ~5) in TorchScript for the rest of the process, so a script that loads many
    networks in turn (a checkpoint sweep) passes ``trace=False`` or loads each in its own process. Raises
    FileNotFoundError, IsADirectoryError (a folder given) or katacli.ModelFileError (a file that is no whole
    KataGo model).

    >>> net = load_network("g170-b6c96-s175395328-d26788732.bin.gz", symmetry=0)  # doctest: +SKIP
    >>> load_network("no-such-net.bin.gz")
    Traceback (most recent call last):
    ...
    FileNotFoundError: model file not found: no-such-net.bin.gz
    >>> load_network(".")
    Traceback (most recent call last):
    ...
    IsADirectoryError: model path is a directory, not a model file: .
    """
    from katacli.nn.evaluator import DEFAULT_MAX_BATCH_SIZE, NNEvaluator

    path = Path(path)
    if device is not None and not (device == "cpu" or device == "cuda" or device.startswith("cuda:")):
        raise ValueError(f"device must be \"cpu\", \"cuda\" or \"cuda:N\", got {device!r}")
    if path.is_dir():
        raise IsADirectoryError(f"model path is a directory, not a model file: {path}")
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    options: dict[str, Any] = {"device": device, "precision": precision, "default_symmetry": symmetry,
                               "max_batch_size": max_batch_size or DEFAULT_MAX_BATCH_SIZE, "compile_net": compile,
                               "seed": seed, "trace": None if trace else False}   # None: traced on the CPU only
    if not cache:
        options["cache_size_power_of_two"] = None
    return Network(NNEvaluator.from_file(path, **options), name=path.name)


def load_default_network(**options: Any) -> Network:
    """katacli's default network, the one ``kata gtp`` plays with when given no -model (see
    :mod:`katacli.nets`); ``options`` as :func:`load_network` takes them. Raises FileNotFoundError
    when this installation lacks it (pass None to :func:`analyze` or :class:`Engine` for rollouts).

    >>> from katacli.api.game import Game
    >>> net = load_default_network(symmetry=0)
    >>> net.name
    'default.bin.gz'
    >>> 0.0 <= net.evaluate(Game(9).play("E5")).winrate <= 1.0
    True
    """
    from katacli.nets import default_net_path, packaged_default_net

    path = packaged_default_net()
    if path is None:
        raise FileNotFoundError(f"katacli's default network is not installed: {default_net_path()}")
    return load_network(path, **options)


def as_evaluator(net: Optional[Network]):
    """The evaluator a Searcher takes for ``net`` (None: random playouts).

    >>> as_evaluator(None) is None
    True
    """
    if net is None:
        return None
    if isinstance(net, Network):
        return net.evaluator
    raise TypeError(f"expected a katacli Network (from load_network) or None, got {type(net).__name__}")


__all__ = ["Evaluation", "Network", "as_evaluator", "evaluation_from_output", "load_network"]
