"""Keys of ``kata match`` and ``kata gatekeeper`` (KataGo's match.cpp, gatekeeper.cpp).

Bot keys may carry the bot's index (``botName0``, ``nnModelFile1``, ``maxVisits1``): the
indexed value applies to that bot and wins over the plain key. Game setup (rules, board
sizes, komi) and the runner keys (numGameThreads, maxMovesPerGame, logGamesEvery) are the
self-play keys, read the same way.
"""
from __future__ import annotations

from katacli.config_keys.builders import bool_key, int_key, list_key, section, str_key
from katacli.config_keys.spec import ValueKind

# KataGo's Setup::MAX_BOT_PARAMS_FROM_CFG.
MAX_BOTS = 4096
MAX_GAMES_TOTAL = 1 << 62
MAX_GAMES_PER_GATING = 1 << 24

MATCH_KEYS = section("Match and gatekeeper", [
    int_key("numBots", 1, 1, MAX_BOTS, "How many bots the match defines (bots 0 .. numBots-1)."),
    str_key("botName", None, "The bot's name in SGFs and results; botName0, botName1, ... with several bots."),
    str_key("nnModelFile", None,
            "The bot's network (.bin.gz), or 'rollouts' for the random-playout engine; nnModelFile0, ... per bot."),
    int_key("numGamesTotal", None, 1, MAX_GAMES_TOTAL, "Games to play in the whole match."),
    list_key("includeBots", ValueKind.LIST_INT, None, "Only these bots play (default: all).", 0, MAX_BOTS - 1),
    list_key("secondaryBots", ValueKind.LIST_INT, None,
             "These bots do not play each other, only the other bots.", 0, MAX_BOTS - 1),
    list_key("extraPairs", ValueKind.LIST_STR, None, "Extra pairings as black-white index pairs, e.g. 0-4,1-4."),
    bool_key("extraPairsAreOneSidedBW", False, "extraPairs give one game with those colours instead of both."),
    int_key("numMatchProcesses", None, 1, 1024,
            "katacli only: worker processes sharing numGameThreads, each with its own network copies "
            "(default: one per CPU core on the CPU, one with a GPU)."),
    int_key("numGamesPerGating", 100, 0, MAX_GAMES_PER_GATING,
            "Gatekeeper: games each candidate plays against the accepted network."),
])
