"""`kata gtp`: KataGo's GTP engine, answering GUIs and match runners line by line.

* :mod:`.startup`     -- building an engine from a model and config files (kata gtp, the API, transcripts).
* :mod:`.engine`      -- the engine: game state, the background model loader, the command loop.
* :mod:`.protocol`    -- GTP lines in and responses out; :mod:`.arguments`, :mod:`.errors`.
* :mod:`.handlers`    -- the command table: :mod:`.handlers_game` (board, moves, SGF), :mod:`.handlers_params`
  (rules, komi, time settings, kata-*-param), :mod:`.handlers_search` (genmove, analyze, raw-nn, scoring).
* :mod:`.bot`         -- the search adapter (network search or rollouts); :mod:`.search_types`.
* :mod:`.analyze_args`, :mod:`.analyze_info_lines` -- lz-analyze / kata-analyze arguments and info lines.
* :mod:`.scoring`, :mod:`.resign`, :mod:`.play_policy`, :mod:`.clock`, :mod:`.runtime_params` -- final
  score and dead stones, when to resign, search factor and handicap PDA, time settings, settable parameters.
* :mod:`.client`      -- driving a GTP engine process (match runner, self-checks, tests).
* :mod:`.transcript`  -- recorded GTP sessions checked line by line.
"""
