"""GTP transcripts: files of commands and the exact output expected, for golden tests.

Format (one item per line)::

    #! override: maxVisits=20,searchRandSeed=1     directives for the test harness
    # a comment                                   ignored
    > play b D4                                   a line sent to the engine as it is
    >e play b D4\\r                                a line sent after Python escape decoding
    =                                             expected output lines ...
    <blank>                                       ... including the blank line ending a response
    ~=\\d+ .*                                      a regular expression for one output line
    ...                                           any number of output lines (streamed analysis)

Expected lines are compared with trailing whitespace removed (editors strip it;
the exact ``= `` bytes are checked by the protocol tests). The whole output
stream is matched against the concatenation of all expected lines, so output
that arrives late (analysis lines) still matches.

``python tests/test_gtp_transcripts.py record FILE`` replays FILE's commands with
FILE's directives and prints the transcript with the actual output, for review
before it becomes a golden file.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

SEND_PREFIX = "> "
SEND_ESCAPED_PREFIX = ">e "
DIRECTIVE_PREFIX = "#!"
COMMENT_PREFIX = "#"
REGEX_PREFIX = "~"
ANY_LINES = "..."


@dataclass
class Exchange:
    send: str
    expected: list[str] = field(default_factory=list)
    line_number: int = 0


@dataclass
class Transcript:
    directives: dict[str, str] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def expected_lines(self) -> list[str]:
        return [line for exchange in self.exchanges for line in exchange.expected]

    @property
    def input_text(self) -> str:
        return "".join(exchange.send + "\n" for exchange in self.exchanges)


def parse_transcript(text: str) -> Transcript:
    transcript = Transcript()
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith(DIRECTIVE_PREFIX):
            key, _, value = line[len(DIRECTIVE_PREFIX):].partition(":")
            transcript.directives[key.strip()] = value.strip()
        elif line.startswith(SEND_ESCAPED_PREFIX):
            sent = codecs.decode(line[len(SEND_ESCAPED_PREFIX):], "unicode_escape")
            transcript.exchanges.append(Exchange(sent, [], number))
        elif line.startswith(SEND_PREFIX) or line == SEND_PREFIX.strip():
            transcript.exchanges.append(Exchange(line[len(SEND_PREFIX):], [], number))
        elif line.startswith(COMMENT_PREFIX):
            continue
        elif transcript.exchanges:
            transcript.exchanges[-1].expected.append(line)
        elif line.strip():
            raise ValueError(f"line {number}: output before the first command")
    # The file's final newline is not an output line.
    if transcript.exchanges and transcript.exchanges[-1].expected[-1:] == [""]:
        transcript.exchanges[-1].expected.pop()
    return transcript


# Relative difference allowed between two printed decimals (KataGo prints 6 significant digits).
DECIMAL_TOLERANCE = 2e-6
_DECIMAL = re.compile(r"-?\d+\.\d+(e-?\d+)?|-?\d+e-?\d+")


def _line_matches(pattern: str, actual: str) -> bool:
    if pattern.startswith(REGEX_PREFIX):
        return re.fullmatch(pattern[len(REGEX_PREFIX):], actual) is not None
    pattern, actual = pattern.rstrip(), actual.rstrip()
    if pattern == actual:
        return True
    # Network arithmetic differs in the last printed digit between memory layouts and devices:
    # decimals (not integers: visits, lz-analyze's scaled winrates) may differ by that much.
    want, got = pattern.split(" "), actual.split(" ")
    return len(want) == len(got) and all(w == g or _close_decimals(w, g) for w, g in zip(want, got))


def _close_decimals(want: str, got: str) -> bool:
    if not (_DECIMAL.fullmatch(want) and _DECIMAL.fullmatch(got)):
        return False
    a, b = float(want), float(got)
    return abs(a - b) <= DECIMAL_TOLERANCE * max(1.0, abs(a), abs(b))


def _matches_all(expected: list[str], actual: list[str]) -> bool:
    """Dynamic programming from the end: row[j] says whether expected[i:] matches actual[j:]."""
    row = [j == len(actual) for j in range(len(actual) + 1)]
    for pattern in reversed(expected):
        if pattern == ANY_LINES:
            new_row = row[:]
            for j in range(len(actual) - 1, -1, -1):
                new_row[j] = row[j] or new_row[j + 1]
        else:
            new_row = [j < len(actual) and row[j + 1] and _line_matches(pattern, actual[j])
                       for j in range(len(actual) + 1)]
        row = new_row
    return row[0]


def _first_difference(expected: list[str], actual: list[str]) -> tuple[int, int]:
    """Where a greedy walk first disagrees (wildcards skip to the next line that fits)."""
    i = j = 0
    while i < len(expected) and j < len(actual):
        if expected[i] == ANY_LINES:
            if i + 1 < len(expected) and not _line_matches(expected[i + 1], actual[j]):
                j += 1
            else:
                i += 1
        elif _line_matches(expected[i], actual[j]):
            i, j = i + 1, j + 1
        else:
            break
    return i, j


def match_output(expected: list[str], actual_text: str) -> str | None:
    """None if the output matches, else a description of the first mismatch."""
    actual = actual_text.split("\n")
    if actual and actual[-1] == "":
        actual.pop()  # the newline ending the stream
    if _matches_all(expected, actual):
        return None
    i, j = _first_difference(expected, actual)
    want = expected[i] if i < len(expected) else "<end of output>"
    got = actual[j] if j < len(actual) else "<end of output>"
    context = "\n".join(actual[max(0, j - 3): j + 3])
    return f"expected line {i + 1} {want!r}, got output line {j + 1} {got!r}; output near there:\n{context}"


def format_transcript(transcript: Transcript, output_text: str) -> str:
    """The transcript's directives and commands with ``output_text`` as the expected output (all after the
    last command; good enough to review and split by hand)."""
    lines = [f"{DIRECTIVE_PREFIX} {k}: {v}" for k, v in transcript.directives.items()]
    for exchange in transcript.exchanges:
        lines.append(SEND_PREFIX + exchange.send)
    lines.append(output_text)
    return "\n".join(lines)
