"""katacli.game.sgf: reading like KataGo's sgf.cpp / loadsgf, writing readable SGF."""
import pytest
from sgfmill import sgf as sgfmill_sgf

from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import PRESETS, Rules
from katacli.game.sgf import EMPTY, SgfError, SgfGame, load_sgf, read_sgf, write_sgf

# (sgf text, expected attributes)
READ_CASES = [
    ("(;GM[1]FF[4])", dict(x_size=19, y_size=19, komi=None, rules=None, handicap=0, moves=[], first_player=BLACK)),
    ("(;SZ[9]KM[7];B[ee];W[dc])",
     dict(x_size=9, y_size=9, komi=7.0, moves=[(BLACK, (4, 4)), (WHITE, (3, 2))])),
    ("(;SZ[9:13]KM[-3.5];B[ia];W[am])",
     dict(x_size=9, y_size=13, komi=-3.5, moves=[(BLACK, (8, 0)), (WHITE, (0, 12))])),
    ("(;SZ[ 13 : 9 ])", dict(x_size=13, y_size=9)),
    ("(;SZ[2];B[];W[tt];B[bb])", dict(x_size=2, moves=[(BLACK, None), (WHITE, None), (BLACK, (1, 1))])),
    ("(;SZ[19];B[tt])", dict(moves=[(BLACK, None)])),
    ("(;HA[2]AB[dp][pd]PL[W];W[qp])", dict(handicap=2, setup=[(BLACK, (3, 15)), (BLACK, (15, 3))],
                                          first_player=WHITE, moves=[(WHITE, (16, 15))])),
    # Black-only setup stones and no moves: White moves first.
    ("(;SZ[9]AB[cc][gg])", dict(first_player=WHITE)),
    # PL wins over the setup stones, the first move wins over PL.
    ("(;SZ[9]AB[cc]PL[black])", dict(first_player=BLACK)),
    ("(;SZ[9]PL[W];B[cc])", dict(first_player=BLACK)),
    ("(;SZ[9]AB[cc]AW[dd])", dict(first_player=BLACK)),
    # Rectangles expand column by column; AE entries are kept with colour EMPTY.
    ("(;SZ[5]AB[aa:bb]AW[ee]AE[cc])",
     dict(setup=[(BLACK, (0, 0)), (BLACK, (0, 1)), (BLACK, (1, 0)), (BLACK, (1, 1)), (WHITE, (4, 4)),
                 (EMPTY, (2, 2))])),
    # The main line is the longest variation; the first one on ties.
    ("(;SZ[9];B[aa](;W[bb])(;W[cc];B[dd])(;W[ee];B[ff]))",
     dict(moves=[(BLACK, (0, 0)), (WHITE, (2, 2)), (BLACK, (3, 3))])),
    ("(;SZ[9];B[aa](;W[bb])(;W[cc]))", dict(moves=[(BLACK, (0, 0)), (WHITE, (1, 1))])),
    # A node's B comes before its W, as in KataGo.
    ("(;SZ[9];W[aa]B[bb])", dict(moves=[(BLACK, (1, 1)), (WHITE, (0, 0))], first_player=BLACK)),
    ("(;SZ[9]RE[W+R]PB[Alice]PW[Bob \\] Jr])", dict(result="W+R", black_name="Alice", white_name="Bob ] Jr")),
    # Leading junk and a byte-order mark are skipped.
    ("\ufeff  some header (;SZ[7])", dict(x_size=7)),
    # Quarter-point komi of GoGoD Chinese games is doubled; Fox's scaled komi is mapped back.
    ("(;US[GoGoD95]RU[Chinese]KM[3.75])", dict(komi=7.5)),
    ("(;AP[foxwq]KM[375])", dict(komi=7.5)),
    ("(;AP[foxwq]KM[650])", dict(komi=6.5)),
    ("(;AP[SGFC:2.0]KM[0])", dict(komi=0.0)),
    # Fox writes handicap games as HA with White moving first: KataGo (and kata) put the stones back,
    # the side stones of 6 and 7 north and south before 2018; not on other boards or with stones given.
    ("(;AP[foxwq]SZ[19]HA[2]KM[0];W[qc];B[dc])", dict(setup=[(BLACK, (15, 3)), (BLACK, (3, 15))])),
    ("(;AP[foxwq]SZ[19]HA[3]KM[0];W[qc])", dict(setup=[(BLACK, (3, 3)), (BLACK, (15, 3)), (BLACK, (3, 15))])),
    ("(;AP[GNU Go:3.8]GN[]SZ[19]HA[2];W[qc])", dict(setup=[(BLACK, (15, 3)), (BLACK, (3, 15))])),
    ("(;AP[foxwq]DT[2017-05-01]SZ[19]HA[7]KM[0];W[cc])",
     dict(setup=[(BLACK, (3, 3)), (BLACK, (9, 3)), (BLACK, (15, 3)), (BLACK, (9, 9)), (BLACK, (3, 15)),
                 (BLACK, (9, 15)), (BLACK, (15, 15))])),
    ("(;AP[foxwq]DT[2019-05-01]SZ[19]HA[7]KM[0];W[cc])",
     dict(setup=[(BLACK, (3, 3)), (BLACK, (15, 3)), (BLACK, (3, 9)), (BLACK, (9, 9)), (BLACK, (15, 9)),
                 (BLACK, (3, 15)), (BLACK, (15, 15))])),
    ("(;AP[foxwq]SZ[13]HA[2]KM[0];W[jc])", dict(setup=[])),
    ("(;AP[foxwq]SZ[19]HA[2]AB[dd][pp];W[qc])", dict(setup=[(BLACK, (3, 3)), (BLACK, (15, 15))])),
    ("(;AP[GNU Go:3.8]SZ[19]HA[2];W[qc])", dict(setup=[])),        # (a GNU Go file without Fox's empty GN)
    # Stone placements in the first node of a variation are left unread, as KataGo leaves them.
    ("(;SZ[9];B[ee](;AB[gg]W[cc];B[dd])(;W[dd]))", dict(setup=[], moves=[(BLACK, (4, 4)), (WHITE, (2, 2)),
                                                                      (BLACK, (3, 3))])),
]


@pytest.mark.parametrize("text,expected", READ_CASES)
def test_read(text, expected):
    game = read_sgf(text)
    for name, value in expected.items():
        assert getattr(game, name) == value, name
    assert game.warnings == []


# RU tag -> preset it should mean (KM given or absent)
RU_CASES = [
    ("Japanese", "japanese"), ("japanese", "japanese"), ("Korean", "korean"), ("Chinese", "chinese"),
    ("AGA", "aga"), ("NZ", "new-zealand"), ("New Zealand", "new-zealand"), ("Tromp-Taylor", "tromp-taylor"),
    ("TrompTaylor", "tromp-taylor"), ("Chinese-OGS", "chinese-ogs"), ("BGA", "bga"), ("French", "french"),
    ("stone-scoring", "stone-scoring"), ("aga-button", "aga-button"), ("goe", "goe"), ("ING", "ing"),
    ("koSIMPLEscoreTERRITORYtaxSEKIsui0", "japanese"),
    ("koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1", "aga"),
    ('{"ko":"SIMPLE","scoring":"AREA","suicide":false,"whiteHandicapBonus":"N","friendlyPassOk":true}', "chinese"),
]


@pytest.mark.parametrize("ru,preset", RU_CASES)
def test_rules_from_ru(ru, preset):
    escaped = ru.replace("]", "\\]")
    with_komi = read_sgf(f"(;RU[{escaped}]KM[5])")
    assert with_komi.rules == PRESETS[preset].with_komi(5.0)
    assert with_komi.komi == 5.0
    # Without KM the komi is the one the rules imply (KataGo keeps the parsed default).
    without_komi = read_sgf(f"(;RU[{escaped}])")
    assert without_komi.rules.equals_ignoring_komi(PRESETS[preset])
    assert without_komi.komi is None


def test_ru_without_km_keeps_preset_komi():
    assert read_sgf("(;RU[Japanese])").rules.komi == 6.5
    assert read_sgf("(;RU[aga-button])").rules.komi == 7.0


DEFAULT = PRESETS["tromp-taylor"].with_komi(7.5)

# (root properties, expected rules, expected warning start or None): KataGo's getRulesOrWarn
RULES_OR_DEFAULT_CASES = [
    ("RU[Japanese]KM[6.5]", PRESETS["japanese"], None),
    ("RU[Japanese]", PRESETS["japanese"], None),
    ("RU[Japanese]KM[abc]", PRESETS["japanese"], "There was an error parsing komi, using default komi with rules: "),
    ("", DEFAULT, "Sgf has no rules or komi, using default rules: koPOSITIONALscoreAREAtaxNONEsui1komi7.5"),
    ("KM[0.5]", DEFAULT.with_komi(0.5),
     "Sgf has no rules, using default rules with SGF-specified komi: koPOSITIONALscoreAREAtaxNONEsui1komi0.5"),
    ("KM[7.3]", DEFAULT, "Sgf has no rules, also there was an error parsing komi, using default rules: "),
    ("RU[Ancient Rome]KM[3]", DEFAULT.with_komi(3.0),
     "WARNING: using default rules koPOSITIONALscoreAREAtaxNONEsui1komi3 because could not parse sgf rules: "
     "Could not parse rules in sgf: Ancient Rome"),
]


@pytest.mark.parametrize("props,rules,warning", RULES_OR_DEFAULT_CASES)
def test_rules_or_default(props, rules, warning):
    game = read_sgf(f"(;{props})")
    got_rules, got_warning = game.rules_or_default(DEFAULT)
    assert got_rules == rules
    if warning is None:
        assert got_warning is None
    else:
        assert got_warning.startswith(warning)


@pytest.mark.parametrize("props,warning_part", [
    ("KM[abc]", "Could not parse komi"),
    ("KM[\uff16.\uff15]", "Could not parse komi"),   # full-width digits are no number to KataGo's strtod
    ("KM[7.25]", "not integer or half-integer"),
    ("KM[1000]", "Komi value"),
    ("AP[foxwq]KM[123]", "no case implemented for foxwq"),
    ("RU[whatever]", "Could not parse rules in sgf"),
    ("HA[two]", "Could not parse handicap"),
])
def test_non_fatal_problems_become_warnings(props, warning_part):
    game = read_sgf(f"(;{props};B[aa])")
    assert any(warning_part in w for w in game.warnings), game.warnings
    assert game.moves == [(BLACK, (0, 0))]


# ---- loadsgf move numbers ------------------------------------------------------------

GAME_TEXT = "(;SZ[9]KM[7]AB[cc];W[dd];B[ee];W[ff];B[])"


@pytest.mark.parametrize("move_number,played,next_player", [
    (None, 4, WHITE), (1, 0, WHITE), (2, 1, BLACK), (3, 2, WHITE), (5, 4, WHITE), (6, 4, WHITE), (1000, 4, WHITE),
])
def test_position_at(move_number, played, next_player):
    game = read_sgf(GAME_TEXT)
    position = game.position_at(move_number)
    assert position.moves == tuple(game.moves[:played])
    assert position.next_player == next_player
    assert position.initial_player == WHITE
    assert position.setup == ((BLACK, (2, 2)),)
    assert (position.x_size, position.y_size) == (9, 9)


@pytest.mark.parametrize("move_number", [0, -1, 10_000_002])
def test_position_at_bad_move_number(move_number):
    with pytest.raises(SgfError, match="Invalid value for moveNumber"):
        read_sgf(GAME_TEXT).position_at(move_number)


# ---- writing and round trips -----------------------------------------------------------

WRITE_CASES = [
    SgfGame(),
    SgfGame(x_size=9, y_size=9, komi=7.0, rules=PRESETS["chinese"].with_komi(7.0),
            moves=[(BLACK, (4, 4)), (WHITE, None), (BLACK, (0, 8)), (WHITE, None)], result="B+12.5"),
    SgfGame(x_size=9, y_size=13, komi=-2.5, rules=PRESETS["japanese"].with_komi(-2.5),
            moves=[(BLACK, (8, 12)), (WHITE, (0, 0)), (BLACK, None)]),
    SgfGame(x_size=19, y_size=19, komi=0.5, rules=PRESETS["aga"].with_komi(0.5), handicap=2,
            setup=[(BLACK, (3, 15)), (BLACK, (15, 3))], first_player=WHITE, moves=[(WHITE, (16, 15))],
            black_name="Black ]\\ name", white_name="Wei Qi 围棋"),
    # White to move first with only black stones set up, and no moves: needs no PL.
    SgfGame(x_size=5, y_size=5, komi=3.0, setup=[(BLACK, (2, 2))], first_player=WHITE),
    # White to move first after mixed setup stones: needs PL[W].
    SgfGame(x_size=5, y_size=5, komi=3.0, setup=[(BLACK, (2, 2)), (WHITE, (1, 1))], first_player=WHITE),
    # Black to move first after black-only setup stones: needs PL[B].
    SgfGame(x_size=5, y_size=5, komi=3.0, setup=[(BLACK, (2, 2))], first_player=BLACK),
    SgfGame(x_size=2, y_size=2, rules=Rules(), moves=[(BLACK, (0, 0)), (WHITE, (1, 1))], result="Void"),
    SgfGame(x_size=19, y_size=7, rules=PRESETS["aga-button"], first_player=WHITE, moves=[(WHITE, (18, 6))]),
]

_ROUND_TRIP_FIELDS = ("x_size", "y_size", "komi", "rules", "handicap", "setup", "first_player", "moves",
                      "result", "black_name", "white_name")


@pytest.mark.parametrize("game", WRITE_CASES)
def test_write_read_round_trip(game):
    text = write_sgf(game)
    back = read_sgf(text)
    expected_komi = game.komi if game.komi is not None else (game.rules.komi if game.rules else None)
    for name in _ROUND_TRIP_FIELDS:
        expected = expected_komi if name == "komi" else getattr(game, name)
        assert getattr(back, name) == expected, name
    assert back.warnings == []
    assert write_sgf(back) == text


@pytest.mark.parametrize("game", [g for g in WRITE_CASES if g.x_size == g.y_size])
def test_sgfmill_reads_square_boards(game):
    parsed = sgfmill_sgf.Sgf_game.from_string(write_sgf(game))
    assert parsed.get_size() == game.x_size
    moves = [node.get_move() for node in parsed.get_main_sequence()[1:]]
    # sgfmill: colour 'b'/'w', (row from the bottom, col) or None.
    expected = [("b" if c == BLACK else "w", None if xy is None else (game.y_size - 1 - xy[1], xy[0]))
                for c, xy in game.moves]
    assert moves == expected
    black, white, _ = parsed.get_root().get_setup_stones()
    assert len(black) == sum(1 for c, _ in game.setup if c == BLACK)
    assert len(white) == sum(1 for c, _ in game.setup if c == WHITE)


def test_write_layout_matches_katago():
    game = SgfGame(x_size=9, y_size=9, komi=7.0, rules=PRESETS["japanese"].with_komi(7.0),
                   setup=[(BLACK, (2, 2))], first_player=WHITE, moves=[(WHITE, (4, 4)), (BLACK, None)])
    assert write_sgf(game) == (
        "(;FF[4]GM[1]SZ[9]PB[]PW[]HA[0]KM[7]RU[koSIMPLEscoreTERRITORYtaxSEKIsui0]AB[cc];W[ee];B[])"
    )
    assert "RU[Japanese]" in write_sgf(game, nice_rules_name=True)
    assert "SZ[9:13]" in write_sgf(SgfGame(x_size=9, y_size=13))


@pytest.mark.parametrize("game,message", [
    (SgfGame(x_size=9, y_size=9, moves=[(BLACK, (9, 0))]), "off the 9x9 board"),
    (SgfGame(x_size=9, y_size=9, moves=[(3, (1, 1))]), "Not a player colour"),
    (SgfGame(x_size=53, y_size=53), "larger than 52"),
])
def test_write_errors(game, message):
    with pytest.raises(SgfError, match=message):
        write_sgf(game)


# ---- malformed input --------------------------------------------------------------------

MALFORMED_CASES = [
    ("", "no SGF data"),
    ("hello world", "no SGF data"),
    ("(;SZ[19]", "unexpected end"),
    ("(;SZ[19];B[aa]", "unexpected end"),
    ("(;SZ[19]B)", "property with no values"),
    ("(;SZ[abc])", "Could not parse board size in sgf: abc"),
    ("(;SZ[9:x])", "Could not parse board size"),
    ("(;SZ[9:9:9])", "Could not parse board size"),
    ("(;SZ[1])", "Board size in sgf is <= 1"),
    ("(;SZ[20])", "Board size in sgf is > 19"),
    ("(;SZ[9][13])", "not a singleton: SZ"),
    ("(;SZ[9];B[jj])", "Move out of bounds: 9,9"),
    ("(;SZ[9];B[a])", "Invalid location: a"),
    ("(;SZ[9];B[a1])", "Invalid location: a1"),
    ("(;SZ[9]AB[jj])", "Invalid location: jj"),
    ("(;SZ[9]AB[cc:aa])", "Invalid location or location rect: cc:aa"),
    ("(;SZ[9]AB[aa:b])", "Invalid location rect: aa:b"),
    ("(;SZ[9];B[aa];AB[bb])", "Found stone placements after the root"),
]


@pytest.mark.parametrize("text,message", MALFORMED_CASES)
def test_malformed(text, message):
    with pytest.raises(SgfError) as err:
        read_sgf(text, file_name="games/bad.sgf")
    assert str(err.value).startswith("games/bad.sgf: ")
    assert message in str(err.value)


def test_tt_is_pass_only_up_to_19():
    # KataGo reads "tt" as a pass whenever either side is <= 19, and as the point (19,19) otherwise.
    assert read_sgf("(;SZ[9];B[tt])").moves == [(BLACK, None)]
    wide = read_sgf("(;SZ[25:20];B[tt])", max_board_len=25)
    assert wide.moves == [(BLACK, (19, 19))]


def test_load_sgf(tmp_path):
    path = tmp_path / "game.sgf"
    path.write_text("(;SZ[9]KM[6.5]RU[Japanese];B[ee])", encoding="utf-8")
    game = load_sgf(str(path))
    assert game.file_name == str(path)
    assert game.moves == [(BLACK, (4, 4))]
    with pytest.raises(SgfError, match="Could not open file .* - does not exist or invalid permissions"):
        load_sgf(str(tmp_path / "missing.sgf"))
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;SZ[9];B[zz])", encoding="utf-8")
    with pytest.raises(SgfError, match=str(bad)):
        load_sgf(str(bad))


def test_charset_and_raw_root_properties():
    text = "(;CA[ISO-8859-1]PB[Jos\xe9]C[line one\nline two]XX[a][b])".encode("latin-1")
    game = read_sgf(text)
    assert game.black_name == "José"
    assert game.root_properties["C"] == ["line one\nline two"]
    assert game.root_properties["XX"] == ["a", "b"]


@pytest.mark.parametrize("charset", ["base64", "rot13", "hex", "UTF-16", "cp037", "no-such-charset", "idna",
                                     "punycode", "undefined"])
def test_a_charset_that_is_no_ascii_text_encoding_reads_as_utf8(charset):
    # KataGo reads coordinates and numbers as bytes whatever CA says; a non-text codec once raised LookupError.
    game = read_sgf(f"(;GM[1]FF[4]CA[{charset}]SZ[9]KM[7]PB[Jos\u00e9];B[ee])".encode("utf-8"))
    assert (game.x_size, game.moves, game.black_name) == (9, [(BLACK, (4, 4))], "Jos\u00e9")


def test_a_directory_is_named_once(tmp_path):
    with pytest.raises(SgfError) as info:
        load_sgf(str(tmp_path))
    assert str(info.value) == f"{tmp_path}: not a regular file"
