"""katacli's Python API: Go AI you can script. See docs/python-api.md for a guided tour.

Everything here is also available from the top-level package (``katacli.Game`` ...)::

    import katacli

    net = katacli.load_network("net.bin.gz")             # or None: random playouts, no file needed
    net = katacli.load_default_network()                 # katacli's own small net (`kata gtp` without -model)
    game = katacli.Game(9, rules="japanese", komi=6.5)
    game.play("B", "E5")
    result = katacli.analyze(game, net, visits=200)      # one `kata analysis` query
    result.best_move, result.winrate, result.score_lead  # side to move's view; white_winrate for White's
    net.evaluate(game).policy                            # the raw network, [row, column] arrays

    engine = katacli.Engine(net, visits=200)             # `kata gtp` without the protocol
    engine.play("B", "E5"); engine.genmove(); engine.analyze()

Conventions: colours "B"/"W" (or "black"/"white"), points GTP vertices ("E5", "pass"), settings
KataGo's config key names or their snake_case forms. Plain value names (``winrate``,
``score_lead``, ``ownership``) are the side to move's view, ``white_*`` names White's. Board
arrays are [row, column] with row 0 the top row. Nothing here imports torch until a network is
loaded.

Modules: :mod:`.game` (Game, SGF), :mod:`.network` (load_network, Network, Evaluation),
:mod:`.analysis` (analyze, AnalysisResult, MoveStats, search_params), :mod:`.engine` (Engine,
MoveChoice), :mod:`.args` (how names and values are read).
"""
from katacli.lazy import lazy_attributes

EXPORTS = {
    "Game": "katacli.api.game",
    "load_network": "katacli.api.network",
    "load_default_network": "katacli.api.network",
    "Network": "katacli.api.network",
    "Evaluation": "katacli.api.network",
    "analyze": "katacli.api.analysis",
    "search_params": "katacli.api.analysis",
    "AnalysisResult": "katacli.api.analysis",
    "MoveStats": "katacli.api.analysis",
    "Engine": "katacli.api.engine",
    "EngineError": "katacli.api.engine",
    "MoveChoice": "katacli.api.engine",
    "SettingError": "katacli.api.args",
    # The errors a user mistake raises, to catch by name (all but ModelFileError are ValueErrors).
    "IllegalMoveError": "katacli._core.game_state",
    "CoordError": "katacli.game.coords",
    "RulesError": "katacli.game.rules",
    "SgfError": "katacli.game.sgf",
    "SessionError": "katacli.game.session",
    "ConfigError": "katacli.config",
    "ModelFileError": "katacli.nn.model_file_reader",
}

__all__ = sorted(EXPORTS)

__getattr__ = lazy_attributes(__name__, EXPORTS)


def __dir__() -> list[str]:
    """The lazy names too, for tab completion and help()."""
    return sorted(set(globals()) | set(EXPORTS))
