"""Self-play: KataGo's training-data generation (``kata selfplay``).

Modules, in the order a game meets them:

* :mod:`~katacli.selfplay.settings`   the config keys, read and cross-checked
* :mod:`~katacli.selfplay.game_init`  rules, board size, komi, handicap, asymmetry, forks to start from
* :mod:`~katacli.selfplay.opening`    handicap stones, policy-sampled openings, replays
* :mod:`~katacli.selfplay.searching`  what a search backend must provide; per-move visit limits
* :mod:`~katacli.selfplay.mcts`       the backend on :class:`katacli.search.Searcher`
* :mod:`~katacli.selfplay.komi`       fair komi and lead estimation by short searches
* :mod:`~katacli.selfplay.game`       one game, start to :class:`~katacli.selfplay.records.FinishedGame`
* :mod:`~katacli.selfplay.finish`     outcome targets, surprise weighting, whole-row weights
* :mod:`~katacli.selfplay.forks`      new games forked from finished ones
* :mod:`~katacli.selfplay.rows`       a finished game as KataGo training rows
* :mod:`~katacli.selfplay.output`     rows to ``tdata/*.h5``, games to ``sgfs/*.sgfs``
* :mod:`~katacli.selfplay.model_pool`     the models directory, loading and switching networks
* :mod:`~katacli.selfplay.runner`     threads, queue, stopping; :mod:`~katacli.selfplay.progress` shows it

Programmatic use::

    settings = SelfplaySettings.from_config(cfg)
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay")); manager.poll("models")
    SelfplayRun(settings, manager, "out", models_dir="models", max_games_total=100).run()
"""
