"""Go games without a search: rules, coordinates, SGF and the game a GTP engine keeps.

- :mod:`katacli.game.session`: :class:`~katacli.game.session.GameSession`, the game (size, rules,
  komi, initial position, moves) that the GTP and analysis engines replay; ``state`` is the Cython
  ``GameState``. ``GameSession(9, 9, rules="japanese").play("B", "E5")``.
- :mod:`katacli.game.rules`: :class:`~katacli.game.rules.Rules`, every KataGo ruleset; parses preset
  names, JSON and KataGo's compact form.
- :mod:`katacli.game.coords`: GTP vertices and colours ("E5" <-> (x, y) with y from the top).
- :mod:`katacli.game.sgf`: SGF in and out (through sgfmill), as KataGo's loadsgf reads it.

For scripts, :class:`katacli.Game` (:mod:`katacli.api.game`) wraps a GameSession with friendlier
names; see docs/python-api.md.
"""
