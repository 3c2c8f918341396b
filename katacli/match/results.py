"""Match results: per-pair tallies, win rates with 95% intervals, Elo by pair and per bot.

Win rates use the Wilson score interval (sound for small matches and for 0 or 100%);
a pair's Elo difference is the logistic transform of the score and its interval (none for
a score of 0 or 1: null in JSON, -inf/+inf in the table). Per-bot
Elo is a Bradley-Terry fit over all games (draws count half a win to each side), with one
virtual draw between every two bots that met so that a 10-0 sweep gives a finite number;
the first bot is pinned at 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

ELO_PER_NAT = 400.0 / math.log(10.0)
Z_95 = 1.959963984540054
# Virtual draws added between bots that played, so perfect scores give finite ratings.
PRIOR_DRAWS = 1.0
FIT_ITERATIONS = 2000
FIT_TOLERANCE = 1e-10
# Elo given for a score of exactly 0 or 1 (the logistic transform is infinite there; tables show inf).
ELO_DISPLAY_LIMIT = 9999.0


def wilson_interval(points: float, games: int) -> tuple[float, float]:
    if games <= 0:
        return 0.0, 1.0
    p = points / games
    z2 = Z_95 * Z_95
    centre = (p + z2 / (2 * games)) / (1 + z2 / games)
    half = Z_95 * math.sqrt(p * (1 - p) / games + z2 / (4 * games * games)) / (1 + z2 / games)
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_of_score(score: float) -> float:
    if score <= 0.0:
        return -ELO_DISPLAY_LIMIT
    if score >= 1.0:
        return ELO_DISPLAY_LIMIT
    return max(-ELO_DISPLAY_LIMIT, min(ELO_DISPLAY_LIMIT, ELO_PER_NAT * math.log(score / (1.0 - score))))


def _finite_or_none(elo: float) -> Optional[float]:
    """JSON has no infinity: a perfect or zero score's Elo difference is null."""
    return None if abs(elo) >= ELO_DISPLAY_LIMIT else elo


@dataclass
class PairTally:
    """Games between bots ``a`` and ``b`` (a listed first)."""

    a: str
    b: str
    a_wins: int = 0
    b_wins: int = 0
    draws: int = 0          # draws and no-results
    a_black_games: int = 0

    @property
    def games(self) -> int:
        return self.a_wins + self.b_wins + self.draws

    @property
    def a_points(self) -> float:
        return self.a_wins + 0.5 * self.draws

    def as_dict(self) -> dict:
        low, high = wilson_interval(self.a_points, self.games)
        score = self.a_points / self.games if self.games else 0.5
        return {"bot": self.a, "opponent": self.b, "games": self.games, "wins": self.a_wins,
                "losses": self.b_wins, "draws": self.draws, "win_rate": score,
                "win_rate_95": [low, high], "elo_diff": _finite_or_none(elo_of_score(score)),
                "elo_diff_95": [_finite_or_none(elo_of_score(low)), _finite_or_none(elo_of_score(high))]}


@dataclass
class MoveTimes:
    """Each bot's search seconds and searched moves over the match, for KataGo's "Avg move time used by"
    log lines (bots by name, as its std::map)."""

    seconds: dict = field(default_factory=dict)
    moves: dict = field(default_factory=dict)

    def add(self, black: str, white: str, time_used: tuple[float, float], moves_made: tuple[int, int]) -> None:
        for name, seconds, moves in ((black, time_used[0], moves_made[0]), (white, time_used[1], moves_made[1])):
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds
            self.moves[name] = self.moves.get(name, 0) + moves

    def lines_after(self, games: int) -> list[str]:
        """:meth:`lines` where KataGo's match logs them after this many games (move_times_due), else none."""
        return self.lines() if move_times_due(games) else []

    def lines(self) -> list[str]:
        return [f"Avg move time used by {name} {self.seconds[name] / max(self.moves[name], 1):.6g} "
                f"{float(self.moves[name]):.6g} moves" for name in sorted(self.seconds)]


def move_times_due(games: int) -> bool:
    """Whether KataGo's match logs the move times after this many games: 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, ...
    (the count is 1, 3 or 5 times a power of two)."""
    while games % 2 == 0 and games > 1:
        games //= 2
    return games in (1, 3, 5)


@dataclass
class MatchResults:
    bot_names: list[str]
    pairs: dict = field(default_factory=dict)   # (name a, name b) with a first in bot order -> PairTally
    black_wins: int = 0
    white_wins: int = 0
    draws: int = 0

    def add(self, black: str, white: str, winner: int) -> None:
        """winner: 1 black, 2 white, 0 draw / no result (katacli's colour codes)."""
        order = {name: i for i, name in enumerate(self.bot_names)}
        a, b = (black, white) if order[black] <= order[white] else (white, black)
        tally = self.pairs.setdefault((a, b), PairTally(a, b))
        if black == a:
            tally.a_black_games += 1
        if winner == 0:
            tally.draws += 1
            self.draws += 1
            return
        winner_name = black if winner == 1 else white
        if winner == 1:
            self.black_wins += 1
        else:
            self.white_wins += 1
        # A bot against itself (extraPairs = 0-0): its row counts Black's wins as wins and White's as losses
        # (every win went to the one name, a 100% score for a bot playing itself).
        if winner_name == a and not (black == white and winner == 2):
            tally.a_wins += 1
        else:
            tally.b_wins += 1

    @property
    def games(self) -> int:
        return self.black_wins + self.white_wins + self.draws

    def bot_elos(self) -> dict[str, float]:
        """Bradley-Terry ratings of the bots that played (the first of them at 0)."""
        played = [n for n in self.bot_names if any(n in key for key in self.pairs)]
        if not played:
            return {}
        points = {n: 0.0 for n in played}
        meetings: dict[tuple[str, str], float] = {}
        for (a, b), t in self.pairs.items():
            if a == b:
                continue
            points[a] += t.a_points + PRIOR_DRAWS / 2
            points[b] += t.games - t.a_points + PRIOR_DRAWS / 2
            meetings[(a, b)] = meetings[(b, a)] = t.games + PRIOR_DRAWS
        strength = {n: 1.0 for n in played}
        for _ in range(FIT_ITERATIONS):  # the minorise-maximise update for Bradley-Terry
            updated = {}
            for n in played:
                denom = sum(games / (strength[n] + strength[m]) for (x, m), games in meetings.items() if x == n)
                updated[n] = points[n] / denom if denom > 0 else strength[n]
            change = max(abs(math.log(updated[n] / strength[n])) for n in played)
            strength = updated
            if change < FIT_TOLERANCE:
                break
        base = math.log(strength[played[0]])
        return {n: ELO_PER_NAT * (math.log(strength[n]) - base) for n in played}

    def as_dict(self) -> dict:
        return {"games": self.games, "black_wins": self.black_wins, "white_wins": self.white_wins,
                "draws": self.draws, "pairs": [t.as_dict() for t in self.pairs.values()],
                "elo": self.bot_elos()}


def format_elo(elo: Optional[float], score: float) -> str:
    """Signed Elo; a perfect or zero score (no finite Elo) shows as +inf / -inf."""
    if elo is None:
        return "+inf" if score > 0.5 else "-inf"
    return f"{elo:+.0f}"


# Characters a results table may take where the output is not a terminal (a file, a pipe: rich would cut
# it to 80 columns and shorten long bot names to "test-b3c…").
FILE_TABLE_WIDTH = 200


def results_console(stderr: bool = False):
    """A rich Console for results tables: the terminal's width, or FILE_TABLE_WIDTH when redirected."""
    import sys

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else FILE_TABLE_WIDTH)


def results_table(results: MatchResults):
    """A rich Table of every pair and, with several bots, the per-bot Elo."""
    from rich.table import Table

    table = Table(title=f"Match results: {results.games} games "
                        f"(Black won {results.black_wins}, White {results.white_wins}, draws {results.draws})")
    for column in ("bot", "opponent", "games", "wins", "losses", "draws", "win rate (95%)", "Elo diff (95%)"):
        table.add_column(column, justify="left" if column in ("bot", "opponent") else "right")
    for tally in results.pairs.values():
        d = tally.as_dict()
        low, high = d["win_rate_95"]
        elo_low, elo_high = d["elo_diff_95"]
        table.add_row(d["bot"], d["opponent"], str(d["games"]), str(d["wins"]), str(d["losses"]), str(d["draws"]),
                      f"{100 * d['win_rate']:.1f}% ({100 * low:.1f}-{100 * high:.1f})",
                      f"{format_elo(d['elo_diff'], d['win_rate'])} "
                      f"({format_elo(elo_low, low)}..{format_elo(elo_high, high)})")
    elos = results.bot_elos()
    if len(elos) > 2:
        table.caption = "Elo (Bradley-Terry, first bot 0): " + ", ".join(f"{n} {e:+.0f}" for n, e in elos.items())
    return table
