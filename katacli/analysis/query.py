"""Turning one query object into the analysis requests it asks for, validated as KataGo validates it.

Fields are checked in KataGo's order and the first problem wins: it is raised
as a :class:`QueryError` (the engine writes ``{"error", "field", "id"}`` and the
query produces nothing). Warnings -- unknown override keys, unexpected fields --
are handed to ``warn`` as they are found and the query still runs.

The game is replayed exactly as KataGo's analysis engine replays it: initial
stones, then ``moves`` played tolerantly (suicide allowed, ko ignored); a move by
the player not to move hands the turn over and clears the history, keeping the
stones. ``initialPlayer`` defaults to the first mover, else White when the
initial stones look like handicap, else Black.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
from dataclasses import dataclass
from typing import Callable, Optional

from katacli._core.board import GoBoard
from katacli._core.constants import EMPTY
from katacli._core.game_state import GameState, IllegalMoveError

from katacli.analysis.fields import (
    read_bool, read_int, read_int_list, read_locations, read_moves, read_number, read_player,
)
from katacli.analysis.protocol import QueryError, field_warning
from katacli.analysis.request import NEVER_SECONDS, AnalysisRequest, ReportOptions
from katacli import config_keys
from katacli.config import Config, ConfigError
from katacli.engine_common import network_supported_rules
from katacli.game.coords import BLACK, WHITE, format_vertex
from katacli.game.rules import Rules, RulesError, WhiteHandicapBonus, komi_is_int_or_half_int, to_float32
from katacli.game.session import MAX_BOARD_LEN, MIN_BOARD_LEN
from katacli.search.params import SearchParams, config_key_of
from katacli.search.restrictions import MoveRestrictions, RestrictionError

MODE = "analysis"
# Every field KataGo reads from a query or an action; anything else draws a warning.
EXPECTED_KEYS = frozenset({
    "id", "action", "terminateId", "turnNumbers", "boardXSize", "boardYSize", "initialStones", "moves",
    "initialPlayer", "analyzeTurns", "priorities", "rules", "komi", "whiteHandicapBonus", "overrideSettings",
    "maxVisits", "analysisPVLen", "rootFpuReductionMax", "rootPolicyTemperature", "includeMovesOwnership",
    "includeMovesOwnershipStdev", "includeOwnership", "includeOwnershipStdev", "includePolicy",
    "includePVVisits", "includeNoResultValue", "reportDuringSearchEvery", "firstReportDuringSearchAfter",
    "priority", "allowMoves", "avoidMoves",
})
# Limits and messages, KataGo's.
BOARD_SIZE_MESSAGE = f"Must provide an integer from {MIN_BOARD_LEN} to {MAX_BOARD_LEN}"
MAX_PRIORITY = 0x3FFF_FFFF_FFFF_FFFF
MAX_VISITS_LIMIT = 1 << 50
MAX_PV_LEN = 1000
MIN_USER_KOMI, MAX_USER_KOMI = -400.0, 400.0
KOMI_MESSAGE = "Must be a integer or half-integer from -400.0 to 400.0"
RULES_MESSAGE = ('Must specify rules string, such as "chinese" or "tromp-taylor", '
                 "or a JSON object with detailed rules parameters.")
MIN_REPORT_SECONDS, MAX_REPORT_SECONDS = 0.001, 1_000_000.0
REPORT_MESSAGE = "Must be number of seconds from 0.001 to 1000000.0"
MIN_ROOT_POLICY_TEMPERATURE, MAX_ROOT_POLICY_TEMPERATURE = 0.01, 100.0
MAX_ROOT_FPU_REDUCTION = 2.0
MAX_UNTIL_DEPTH = 1_000_000_000
AVOID_SHAPE_MESSAGE = "Must be a list of dicts with subfields 'player', 'moves', 'untilDepth'"
UNUSED_FIELD_MESSAGE = ("Unexpected or unused field, do you have a typo? "
                        "(set warnUnusedFields=false in the config to disable this warning)")
# Search settings the engine shares between queries (KataGo refuses per-query changes).
UNCHANGEABLE_PARAMS = ("node_table_shards_power_of_two", "use_eval_cache", "eval_cache_min_visits")
_PERSPECTIVES = {"BLACK": "B", "B": "B", "WHITE": "W", "W": "W"}

Warn = Callable[[dict], None]


@dataclass(frozen=True)
class QueryDefaults:
    """What a query gets for the fields it leaves out: the engine's config and settings."""

    config: Config
    params: SearchParams
    perspective: Optional[str]
    pv_len: int
    prevent_encore: bool = True
    assume_multiple_starting_black_moves_are_handicap: bool = True
    warn_unused_fields: bool = True
    # For humanSLProfile: does a loaded model take SGF metadata (a human SL model), and the models' names.
    model_uses_human_profile: bool = False
    model_names: str = ""
    has_human_model: bool = False   # -human-model was given (humanSL* search keys allowed)
    # A network evaluates the positions: rules it cannot represent are replaced, with a warning.
    has_network: bool = False


def perspective_from_config(cfg: Config) -> Optional[str]:
    """reportAnalysisWinratesAs as "B", "W" or None (side to move)."""
    return _PERSPECTIVES.get(str(cfg.get("reportAnalysisWinratesAs", MODE)).upper())


def handicap_stones_on_board(board: GoBoard) -> int:
    """KataGo's count (numHandicapStonesOnBoard): the Black stones if there are two or more and no White
    one, else 0."""
    colors = [color for row in board.colors() for color in row]
    if WHITE in colors:
        return 0
    blacks = colors.count(BLACK)
    return blacks if blacks >= 2 else 0


def place_setup_stone(board: GoBoard, point, color: int) -> None:
    """Put a stone on the board as KataGo's analysis engine puts initialStones (Board::setStone): it captures
    what it leaves without liberties; a stone on an empty point that would be a lone suicide is skipped
    (a larger group without liberties is taken off, as multi-stone suicide does); a stone replacing one of
    the other colour is skipped if it would have no liberties. No ko is left behind."""
    current = board.color_at(point)
    if current == color:
        return
    if current != EMPTY:
        board.set_stone(point, EMPTY)
        if not board.is_legal(point, color, False):
            return
        board.play(point, color, False)
    elif board.is_legal(point, color, True):
        board.play(point, color, True)
    else:
        return
    if board.color_at(point) == color:
        board.set_stone(point, color)   # (the same colour again: only clears the ko point the capture made)


class QueryParser:
    """Validates queries against the engine's defaults; thread-compatible (one reader thread)."""

    def __init__(self, defaults: QueryDefaults):
        self.defaults = defaults
        self._internal_ids = itertools.count()

    def parse(self, query: dict, warn: Warn) -> list[AnalysisRequest]:
        """The requests for one analysis query (not an action), in turn order; raises QueryError."""
        query_id = query["id"]
        x_size, y_size = self._board_size(query)
        stones = read_moves(query, "initialStones", x_size, y_size, False) if "initialStones" in query else []
        if "moves" not in query:
            raise QueryError("moves", "Must specify an array of [player,location] pairs")
        moves = read_moves(query, "moves", x_size, y_size, True)
        initial_player = read_player(query, "initialPlayer") if "initialPlayer" in query else None
        turns = self._turns_to_analyze(query, len(moves))
        priorities = self._priorities(query)
        rules = self._rules(query)

        params, perspective = self.defaults.params, self.defaults.perspective
        if "overrideSettings" in query:
            params, perspective = self._override_settings(query_id, query["overrideSettings"], warn)
        params, report, report_times, priority = self._search_fields(query, params, perspective)
        restrictions = self._restrictions(query, x_size, y_size)

        if self.defaults.has_network:
            supported = network_supported_rules(rules)
            if supported != rules:
                warn(field_warning(query_id, "rules", f"Rules {rules} not supported by neural net, using {supported} "
                                                      "instead"))
                rules = supported
        if self.defaults.warn_unused_fields:
            for key in sorted(query):
                if key not in EXPECTED_KEYS:
                    warn(field_warning(query_id, key, UNUSED_FIELD_MESSAGE))

        state = self._initial_state(stones, moves, initial_player, rules, x_size, y_size)
        return self._replay(query_id, state, moves, turns, priorities, priority, params, report, report_times,
                            restrictions)

    # ---- position --------------------------------------------------------------------------
    @staticmethod
    def _board_size(query: dict) -> tuple[int, int]:
        for field in ("boardXSize", "boardYSize"):
            if field not in query:
                raise QueryError(field, BOARD_SIZE_MESSAGE)
        return (read_int(query, "boardXSize", MIN_BOARD_LEN, MAX_BOARD_LEN, BOARD_SIZE_MESSAGE),
                read_int(query, "boardYSize", MIN_BOARD_LEN, MAX_BOARD_LEN, BOARD_SIZE_MESSAGE))

    @staticmethod
    def _turns_to_analyze(query: dict, num_moves: int) -> list[int]:
        if "analyzeTurns" not in query:
            return [num_moves]
        turns = read_int_list(query, "analyzeTurns", "Must specify an array of integers indicating turns to analyze")
        for turn in turns:
            if not 0 <= turn <= num_moves:
                raise QueryError("analyzeTurns", f"Invalid turn number: {turn}")
        return turns

    @staticmethod
    def _priorities(query: dict) -> dict:
        """turn -> priority from ``priorities`` (empty when not given)."""
        if "priorities" not in query:
            return {}
        values = read_int_list(query, "priorities", "Must specify an array of integers indicating priorities")
        if "analyzeTurns" not in query:
            raise QueryError("priorities", "Can only specify when also specifying analyzeTurns")
        turns = read_int_list(query, "analyzeTurns", "")
        if len(values) != len(turns):
            raise QueryError("priorities", "Must be of matching length to analyzeTurns")
        for value in values:
            if not -MAX_PRIORITY <= value <= MAX_PRIORITY:
                raise QueryError("priorities", f"Invalid priority: {value}")
        return dict(zip(turns, values))

    @staticmethod
    def _rules(query: dict) -> Rules:
        value = query.get("rules")
        if isinstance(value, dict):
            text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        elif isinstance(value, str):
            text = value
        else:
            raise QueryError("rules", RULES_MESSAGE)
        try:
            rules = Rules.parse(text)
        except RulesError:
            raise QueryError("rules", f"Could not parse rules: {text}") from None
        if "komi" in query:
            komi = read_number(query, "komi", MIN_USER_KOMI, MAX_USER_KOMI, KOMI_MESSAGE)
            komi = to_float32(komi)
            if not komi_is_int_or_half_int(komi):
                raise QueryError("komi", KOMI_MESSAGE)
            rules = rules.with_komi(komi)
        if "whiteHandicapBonus" in query:
            text = query["whiteHandicapBonus"]
            if not isinstance(text, str):
                raise QueryError("whiteHandicapBonus", "Must be a string")
            try:
                rules = dataclasses.replace(rules, white_handicap_bonus=WhiteHandicapBonus.from_text(text))
            except RulesError as exc:
                raise QueryError("whiteHandicapBonus", str(exc)) from None
        return rules

    def _initial_state(self, stones, moves, initial_player, rules: Rules, x_size: int, y_size: int) -> GameState:
        board = GoBoard(x_size, y_size)
        for player, point in stones:
            place_setup_stone(board, point, player)
        if initial_player is None:
            if moves:
                initial_player = moves[0][0]
            else:
                initial_player = WHITE if handicap_stones_on_board(board) > 0 else BLACK
        state = GameState(board=board, rules=rules.to_core_tuple(), next_player=initial_player)
        state.set_assume_multiple_starting_black_moves_are_handicap(
            self.defaults.assume_multiple_starting_black_moves_are_handicap)
        return state

    # ---- search settings -------------------------------------------------------------------
    def _override_settings(self, query_id: str, settings, warn: Warn):
        if not isinstance(settings, dict):
            raise QueryError("overrideSettings", "Must be an object")
        if not settings:
            return self.defaults.params, self.defaults.perspective
        overrides = {key: value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
                     for key, value in settings.items()}
        local = self.defaults.config.copy()
        local.mark_used_with_prefix("")  # the engine's own config was checked at startup
        try:
            local.apply_overrides(overrides, origin="overrideSettings")
            # KataGo reads no numSearchThreadsPerAnalysisThread per query (numSearchThreads only): an override of
            # the config's spelling is an unknown param, not a clash with the config's value.
            not_per_query = [alias for alias, _ in config_keys.MODE_ALIASES.get(MODE, ())
                             if str(overrides.get(alias, "")).strip()]   # an empty value sets nothing (KataGo)
            for alias in not_per_query:   # (an emptied one is gone already: the engine's config has none)
                local.remove(alias)
            params = SearchParams.from_config(local, MODE, has_human_model=self.defaults.has_human_model)
            # An override that removes the key (an empty value) leaves the engine's own perspective, as KataGo.
            perspective = (perspective_from_config(local) if "reportAnalysisWinratesAs" in local
                           else self.defaults.perspective)
            for name in UNCHANGEABLE_PARAMS:
                if getattr(params, name) != getattr(self.defaults.params, name):
                    raise ConfigError(f"Cannot change {config_key_of(name)} after initialization")
        except ConfigError as exc:
            raise QueryError("overrideSettings", f"Could not set settings: {exc}") from None
        unused = sorted(set(local.unused_keys()) | set(not_per_query))
        if unused:
            warn(field_warning(query_id, "overrideSettings", "Unknown config params: " + ",".join(unused)))
        if params.human_sl_profile and not self.defaults.model_uses_human_profile:
            raise QueryError("overrideSettings", "Could not set settings: WARNING: humanSLProfile is specified as "
                                                 f"config param but model(s) don't use it: {self.defaults.model_names}")
        return params, perspective

    def _search_fields(self, query: dict, params: SearchParams, perspective):
        """The per-query limits, include flags, report timing and priority."""
        if "maxVisits" in query:
            params = params.replace(max_visits=read_int(query, "maxVisits", 1, MAX_VISITS_LIMIT,
                                                        "Must be an integer from 1 to 2^50"))
        pv_len = self.defaults.pv_len
        if "analysisPVLen" in query:
            pv_len = read_int(query, "analysisPVLen", 1, MAX_PV_LEN, "Must be an integer from 1 to 1000")
        if "rootFpuReductionMax" in query:
            params = params.replace(root_fpu_reduction_max=read_number(
                query, "rootFpuReductionMax", 0.0, MAX_ROOT_FPU_REDUCTION, "Must be a number from 0.0 to 2.0"))
        if "rootPolicyTemperature" in query:
            temperature = read_number(query, "rootPolicyTemperature", MIN_ROOT_POLICY_TEMPERATURE,
                                      MAX_ROOT_POLICY_TEMPERATURE, "Must be a number from 0.01 to 100.0")
            params = params.replace(root_policy_temperature=temperature, root_policy_temperature_early=temperature)
        flags = {}
        for field, name in (("includeMovesOwnership", "include_moves_ownership"),
                            ("includeMovesOwnershipStdev", "include_moves_ownership_stdev"),
                            ("includeOwnership", "include_ownership"),
                            ("includeOwnershipStdev", "include_ownership_stdev"),
                            ("includePolicy", "include_policy"),
                            ("includePVVisits", "include_pv_visits"),
                            ("includeNoResultValue", "include_no_result_value")):
            if field in query:
                flags[name] = read_bool(query, field)
        report = ReportOptions(perspective=perspective, pv_len=pv_len, **flags)
        every = first = NEVER_SECONDS
        if "reportDuringSearchEvery" in query:
            every = first = read_number(query, "reportDuringSearchEvery", MIN_REPORT_SECONDS, MAX_REPORT_SECONDS,
                                        REPORT_MESSAGE)
        if "firstReportDuringSearchAfter" in query:
            first = read_number(query, "firstReportDuringSearchAfter", MIN_REPORT_SECONDS, MAX_REPORT_SECONDS,
                                REPORT_MESSAGE)
        priority = 0
        if "priority" in query:
            if "priorities" in query:
                raise QueryError("priority", "Cannot specify both priority and priorities")
            priority = read_int(query, "priority", -MAX_PRIORITY, MAX_PRIORITY,
                                "Must be a number between -2^62 and 2^62")
        return params, report, (every, first), priority

    @staticmethod
    def _restrictions(query: dict, x_size: int, y_size: int) -> Optional[MoveRestrictions]:
        has_allow, has_avoid = "allowMoves" in query, "avoidMoves" in query
        if not (has_allow or has_avoid):
            return None
        if has_allow and has_avoid:
            raise QueryError("allowMoves", "Cannot specify both allowMoves and avoidMoves")
        field = "allowMoves" if has_allow else "avoidMoves"
        entries = query[field]
        if not isinstance(entries, list):
            raise QueryError(field, AVOID_SHAPE_MESSAGE)
        if has_allow and len(entries) > 2:
            raise QueryError(field, "Currently allowMoves only allows at most one entry per player")
        restrictions = MoveRestrictions(x_size, y_size)
        allowed_players = set()
        for entry in entries:
            if not isinstance(entry, dict) or not {"moves", "untilDepth", "player"} <= entry.keys():
                raise QueryError(field, AVOID_SHAPE_MESSAGE)
            player = read_player(entry, "player")
            points = read_locations(entry, "moves", x_size, y_size, True)
            until_depth = read_int(entry, "untilDepth", 1, MAX_UNTIL_DEPTH, "Must be a positive integer")
            try:
                if has_allow:
                    if player in allowed_players:
                        raise QueryError(field, "Cannot specify allowMoves more than once for the same player")
                    allowed_players.add(player)
                    restrictions.allow(player, points, until_depth)
                else:
                    restrictions.avoid(player, points, until_depth)
            except RestrictionError as exc:
                raise QueryError(field, str(exc)) from None
        return restrictions

    # ---- requests --------------------------------------------------------------------------
    def _replay(self, query_id, state: GameState, moves, turns, priorities, priority, params, report, report_times,
                restrictions) -> list[AnalysisRequest]:
        wanted = set(turns)
        every, first = report_times
        prevent_encore = self.defaults.prevent_encore
        requests = []
        for turn in range(len(moves) + 1):
            if turn in wanted:
                requests.append(AnalysisRequest(
                    internal_id=next(self._internal_ids), query_id=query_id, turn_number=turn,
                    priority=priorities.get(turn, priority), state=state.copy(), params=params, report=report,
                    restrictions=restrictions, report_every=every, first_report_after=first,
                    prevent_encore=prevent_encore,
                ))
            if turn == len(moves):
                break
            player, point = moves[turn]
            if player != state.next_player:
                state.reset_history_keep_board(player)
            try:
                state.play_tolerant(point, player, prevent_encore)
            except (IllegalMoveError, ValueError):
                vertex = format_vertex(point, state.x_size, state.y_size)
                raise QueryError("moves", f"Illegal move {turn}: {vertex}") from None
        return requests
