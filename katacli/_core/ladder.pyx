# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Ladder solver: KataGo's ladder reading and the per-position ladder scan (NN features 14-17).

See ladder.pxd for the exact contract. The search is an iterative depth-first
minimax over explicit frames; every move is undone by copying back the board
snapshot taken before it (lazily: only when the frame that made it goes on, or
the search ends; never for a frame's last candidate, which nothing follows on that
board), so the board's internal representation is restored bit for bit.
"""
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.stdint cimport int16_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from katacli._core.board cimport (
    Board, Loc, Color, GoBoard,
    C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE, MAX_PLAY_SIZE, NULL_LOC,
    loc_of, loc_x, loc_y, opp_of,
    board_num_liberties, board_num_immediate_liberties, board_is_legal,
    board_would_be_ko_capture, board_num_liberties_after_play,
    board_bound_liberties_after_play, board_heuristic_connection_liberties_x2,
    board_find_liberties, board_play_assume_legal,
)
from katacli._core.pthreads cimport pthread_t, pthread_create, pthread_join
from katacli._core.atomics cimport seq_load, seq_store, seq_cas, fence_acquire, fence_release

cdef enum:
    # KataGo's stack size for a 19x19 board: x*y*3/2+1 frames ("recaptures can make it longer").
    MAX_FRAMES = MAX_PLAY_SIZE * 3 // 2 + 1
    SNAPSHOT_CHUNK = 32            # snapshots grow in chunks; most ladders are short
    # One defender move list: a capture per distinct adjacent chain in atari plus the
    # last liberty. Bounded by the board size; reserved before each list is built.
    MAX_MOVES_PER_FRAME = MAX_PLAY_SIZE + 1
    ESCAPE_LIBERTIES = 3           # a defender reaching this many liberties escapes
    # A ladder search keeps a board snapshot at most every this many frames down a line; boards
    # in between are rebuilt by playing the line's moves again (a play costs far less than a copy).
    CHECKPOINT_INTERVAL = 4

# Outcome of opening a frame or of a whole search.
cdef enum:
    OUTCOME_ESCAPES = 0
    OUTCOME_CAPTURED = 1
    OUTCOME_OPEN = 2               # frame has moves to try
    OUTCOME_OUT_OF_BUDGET = 3
    OUTCOME_OUT_OF_MEMORY = 4


# ---- workspace ----------------------------------------------------------------
cdef LadderWorkspace* ladder_workspace_new() noexcept nogil:
    cdef LadderWorkspace* ws = <LadderWorkspace*>malloc(sizeof(LadderWorkspace))
    if ws == NULL:
        return NULL
    memset(ws, 0, sizeof(LadderWorkspace))
    ws.frames = <LadderFrame*>malloc(MAX_FRAMES * sizeof(LadderFrame))
    ws.frame_capacity = MAX_FRAMES
    ws.before_attack = <Board*>malloc(sizeof(Board))
    ws.scan_board = <Board*>malloc(sizeof(Board))
    if ws.frames == NULL or ws.before_attack == NULL or ws.scan_board == NULL:
        ladder_workspace_free(ws)
        return NULL
    return ws

cdef void ladder_workspace_free(LadderWorkspace* ws) noexcept nogil:
    if ws == NULL:
        return
    free(ws.snapshots)
    free(ws.moves)
    free(ws.frames)
    free(ws.before_attack)
    free(ws.scan_board)
    free(ws)

cdef bint _reserve_snapshots(LadderWorkspace* ws, int needed) noexcept nogil:
    cdef int capacity
    cdef Board* grown
    if needed <= ws.snapshot_capacity:
        return True
    capacity = ws.snapshot_capacity + SNAPSHOT_CHUNK
    if capacity < needed:
        capacity = needed
    grown = <Board*>realloc(ws.snapshots, capacity * sizeof(Board))
    if grown == NULL:
        return False
    ws.snapshots = grown
    ws.snapshot_capacity = capacity
    return True

cdef bint _reserve_moves(LadderWorkspace* ws, int needed) noexcept nogil:
    cdef int capacity
    cdef Loc* grown
    if needed <= ws.moves_capacity:
        return True
    capacity = 2 * ws.moves_capacity
    if capacity < needed:
        capacity = needed
    grown = <Loc*>realloc(ws.moves, capacity * sizeof(Loc))
    if grown == NULL:
        return False
    ws.moves = grown
    ws.moves_capacity = capacity
    return True


# ---- move generation ------------------------------------------------------------
cdef inline bint _listed(const Loc* moves, int n, Loc loc) noexcept nogil:
    cdef int i
    for i in range(n):
        if moves[i] == loc:
            return True
    return False

cdef int _append_liberties(const Board* b, Loc chain_loc, Loc* moves, int n) noexcept nogil:
    """Append the chain's liberties not already listed, in chain-walk order; returns the new length."""
    cdef Loc cur = chain_loc, lib
    cdef int i
    while True:
        for i in range(4):
            lib = cur + b.adj_offsets[i]
            if b.colors[lib] == C_EMPTY and not _listed(moves, n, lib):
                moves[n] = lib
                n += 1
        cur = b.next_in_chain[cur]
        if cur == chain_loc:
            return n

cdef int _append_liberty_gaining_captures(const Board* b, Loc chain_loc, Loc* moves, int n) noexcept nogil:
    """Append the capturing points of opposing chains in atari next to the chain (each chain once)."""
    cdef Color opp = opp_of(b.colors[chain_loc])
    cdef Loc heads_seen[MAX_PLAY_SIZE]
    cdef int num_seen = 0, i
    cdef Loc cur = chain_loc, adj, head
    while True:
        for i in range(4):
            adj = cur + b.adj_offsets[i]
            if b.colors[adj] != opp:
                continue
            head = b.chain_head[adj]
            if b.chain_data[head].num_liberties == 1 and not _listed(heads_seen, num_seen, head):
                heads_seen[num_seen] = head
                num_seen += 1
                n = _append_liberties(b, adj, moves, n)
        cur = b.next_in_chain[cur]
        if cur == chain_loc:
            return n

cdef bint _has_liberty_gaining_capture(const Board* b, Loc chain_loc) noexcept nogil:
    cdef Color opp = opp_of(b.colors[chain_loc])
    cdef Loc cur = chain_loc, adj
    cdef int i
    while True:
        for i in range(4):
            adj = cur + b.adj_offsets[i]
            if b.colors[adj] == opp and b.chain_data[b.chain_head[adj]].num_liberties == 1:
                return True
        cur = b.next_in_chain[cur]
        if cur == chain_loc:
            return False

cdef inline bint _are_adjacent(Loc a, Loc c, int x_size) noexcept nogil:
    return a == c - 1 or a == c + 1 or a == c - (x_size + 1) or a == c + (x_size + 1)

cdef int _open_defender_frame(const Board* b, Loc loc, Loc* moves, int* num_moves) noexcept nogil:
    """Defender in atari: try liberty-gaining captures, then the last liberty."""
    cdef Color defender = b.colors[loc]
    cdef int n, lower = 0, upper = 0
    if b.chain_data[b.chain_head[loc]].num_liberties >= 2:
        return OUTCOME_ESCAPES
    # A ko point left by the attacker: count as an escape, so no ladder relies on a ko
    # (this also rules out endless ko loops).
    if b.ko_loc != NULL_LOC:
        return OUTCOME_ESCAPES
    n = _append_liberty_gaining_captures(b, loc, moves, 0)
    n = _append_liberties(b, loc, moves, n)
    # Quick verdicts judged on the last listed move (normally the lone liberty).
    board_bound_liberties_after_play(b, moves[n - 1], defender, &lower, &upper)
    if lower >= ESCAPE_LIBERTIES:
        return OUTCOME_ESCAPES
    if n == 1 and upper <= 1:
        return OUTCOME_CAPTURED
    num_moves[0] = n
    return OUTCOME_OPEN

cdef int _open_attacker_frame(const Board* b, Loc loc, Loc* moves, int* num_moves) noexcept nogil:
    """Defender has 2 liberties: the attacker tries to fill one of them."""
    cdef Color defender = b.colors[loc]
    cdef Color attacker = opp_of(defender)
    cdef int libs = b.chain_data[b.chain_head[loc]].num_liberties
    cdef int n, libs0, libs1, score0, score1
    cdef Loc first, second
    if libs <= 1:
        return OUTCOME_CAPTURED
    if libs >= 3:
        return OUTCOME_ESCAPES
    n = _append_liberties(b, loc, moves, 0)
    first = moves[0]
    second = moves[1]
    libs0 = board_num_immediate_liberties(b, first)
    libs1 = board_num_immediate_liberties(b, second)

    # Double ko: both liberties are ko mouths the attacker can take, connecting at
    # either leaves the defender short of 3 liberties, and no attacker stone next to
    # the defender is in atari. KataGo calls that captured.
    if (libs0 == 0 and libs1 == 0
            and board_would_be_ko_capture(b, first, attacker)
            and board_would_be_ko_capture(b, second, attacker)
            and board_num_liberties_after_play(b, first, defender, ESCAPE_LIBERTIES) < ESCAPE_LIBERTIES
            and board_num_liberties_after_play(b, second, defender, ESCAPE_LIBERTIES) < ESCAPE_LIBERTIES
            and not _has_liberty_gaining_capture(b, loc)):
        return OUTCOME_CAPTURED

    # Non-adjacent liberties: filling one cannot take an immediate liberty of the
    # other, so an open liberty (3+ empty neighbours) must be filled by the attacker.
    if not _are_adjacent(first, second, b.x_size):
        if libs0 >= ESCAPE_LIBERTIES and libs1 >= ESCAPE_LIBERTIES:
            return OUTCOME_ESCAPES
        elif libs0 >= ESCAPE_LIBERTIES:
            n = 1
        elif libs1 >= ESCAPE_LIBERTIES:
            moves[0] = second
            n = 1
    # Try first the liberty where the defender would gain more (KataGo's heuristic).
    if n > 1:
        score0 = 2 * libs0 + board_heuristic_connection_liberties_x2(b, first, defender)
        score1 = 2 * libs1 + board_heuristic_connection_liberties_x2(b, second, defender)
        if score1 > score0:
            moves[0] = second
            moves[1] = first
    num_moves[0] = n
    return OUTCOME_OPEN


# ---- search ---------------------------------------------------------------------
cdef inline Color _mover_at(int depth, bint defender_first, Color defender) noexcept nogil:
    return defender if (depth % 2 == 0) == defender_first else opp_of(defender)

cdef struct RootSource:
    # How a search's root board can be rebuilt without a snapshot (see _search): a copy of board,
    # then the move fill by fill_color (NULL_LOC: none), then the ko point cleared, as _run_ladder
    # does for a defender-first search.
    const Board* board
    Loc fill
    Color fill_color

cdef enum:
    SNAP_NONE = 0
    SNAP_COPY = 1                  # the frame's board is in ws.snapshots
    SNAP_ROOT_SOURCE = 2           # the root's board is rebuilt from the RootSource

cdef void _board_before(Board* b, LadderWorkspace* ws, int depth, const unsigned char* has_snap,
                        const int16_t* checkpoint_of, bint defender_first, Color defender,
                        const RootSource* root) noexcept nogil:
    """Put b back to the position before the move of frame `depth`: its own snapshot, or the nearest
    checkpoint above it with the line's moves played again (plays are deterministic: same bits)."""
    cdef int c, k
    cdef LadderFrame* f
    c = depth if has_snap[depth] != SNAP_NONE else checkpoint_of[depth]
    if has_snap[c] == SNAP_COPY:
        memcpy(b, &ws.snapshots[c], sizeof(Board))
    else:
        memcpy(b, root.board, sizeof(Board))
        if root.fill != NULL_LOC:
            board_play_assume_legal(b, root.fill, root.fill_color)
        b.ko_loc = NULL_LOC
    for k in range(c, depth):
        f = &ws.frames[k]
        board_play_assume_legal(b, ws.moves[f.moves_start + f.next_move], _mover_at(k, defender_first, defender))


cdef int _search(Board* b, Loc loc, bint defender_first, LadderWorkspace* ws, bint restore,
                 int* nodes, const RootSource* root) noexcept nogil:
    """Minimax over ladder moves; returns an OUTCOME_* code and sets nodes[0] to the number of
    moves played. With restore, b is restored (on OUT_OF_BUDGET and OUT_OF_MEMORY reset to the
    root snapshot, if any move was played); without, b is left as the search leaves it, for a
    caller that restores it from a copy of its own. root (or NULL; only without restore, for a
    defender-first search) rebuilds the root's board instead of a snapshot."""
    cdef Color defender = b.colors[loc]
    cdef Color attacker = opp_of(defender)
    # KataGo's stack limit: a line this deep counts as captured.
    cdef int depth_limit = (b.x_size * b.y_size * 3) // 2 + 1
    cdef int depth = 0, nodes_played = 0, outcome, next_start
    # Undoing lazily: b holds the moves of depths 0..played_depth-1. A frame needs the board from
    # before its move again only to try another candidate, so a frame settled on return from its
    # child needs none (its parent puts back its own), and a frame trying its last candidate keeps
    # none. The others keep a snapshot (a board is ~6 KB), except within CHECKPOINT_INTERVAL frames
    # below the last one that did: that board is rebuilt from the checkpoint by playing the line's
    # moves again, cheaper than a copy at every level of a long ladder. The root keeps one when the
    # board must be restored at the end; given a RootSource it keeps none and is rebuilt from that.
    # has_snap[d]: how frame d's board can be had again (SNAP_*); checkpoint_of[d]: the deepest
    # frame above d on the line whose board can (-1: none).
    cdef int played_depth = 0
    cdef unsigned char has_snap[MAX_FRAMES]
    cdef int16_t checkpoint_of[MAX_FRAMES]
    cdef bint entering = True, captured = False, decided, defender_to_move
    cdef LadderFrame* frame
    cdef Loc move = NULL_LOC
    cdef Color mover = defender
    has_snap[0] = SNAP_ROOT_SOURCE if root != NULL else SNAP_NONE
    checkpoint_of[0] = -1
    while True:
        nodes[0] = nodes_played
        frame = &ws.frames[depth]
        defender_to_move = (depth % 2 == 0) == defender_first
        decided = False
        if entering:
            if depth >= depth_limit - 1:
                captured = True
                decided = True
            else:
                if not _reserve_moves(ws, frame.moves_start + MAX_MOVES_PER_FRAME):
                    if restore and played_depth > 0:
                        memcpy(b, &ws.snapshots[0], sizeof(Board))
                    return OUTCOME_OUT_OF_MEMORY
                if defender_to_move:
                    outcome = _open_defender_frame(b, loc, ws.moves + frame.moves_start, &frame.num_moves)
                else:
                    outcome = _open_attacker_frame(b, loc, ws.moves + frame.moves_start, &frame.num_moves)
                if outcome == OUTCOME_OPEN:
                    frame.next_move = 0
                else:
                    captured = outcome == OUTCOME_CAPTURED
                    decided = True
        else:
            # Back from the child (its move is undone below, only if this frame goes on).
            # Defender found an escape, or attacker found a capture: this frame is settled.
            if defender_to_move != captured:
                decided = True
            else:
                frame.next_move += 1
                # Out of candidates: settled, with no board needed (see above).
                if frame.next_move >= frame.num_moves:
                    captured = defender_to_move
                    decided = True

        if not decided:
            if played_depth > depth:   # undo the move tried here
                _board_before(b, ws, depth, has_snap, checkpoint_of, defender_first, defender, root)
                played_depth = depth
            # Skip illegal moves (suicide never legal, simple ko respected).
            mover = defender if defender_to_move else attacker
            while frame.next_move < frame.num_moves:
                move = ws.moves[frame.moves_start + frame.next_move]
                if board_is_legal(b, move, mover, False):
                    break
                frame.next_move += 1
            if frame.next_move >= frame.num_moves:
                # Out of options: the defender is captured, or the attacker failed.
                captured = defender_to_move
                decided = True

        if decided:
            depth -= 1
            if depth < 0:
                if restore and played_depth > 0:
                    memcpy(b, &ws.snapshots[0], sizeof(Board))
                return OUTCOME_CAPTURED if captured else OUTCOME_ESCAPES
            entering = False
            continue

        if ((frame.next_move < frame.num_moves - 1 or (depth == 0 and restore)) and has_snap[depth] == SNAP_NONE
                and (depth == 0 or checkpoint_of[depth] < 0
                     or depth - checkpoint_of[depth] >= CHECKPOINT_INTERVAL)):
            if not _reserve_snapshots(ws, depth + 1):
                if restore and played_depth > 0:
                    memcpy(b, &ws.snapshots[0], sizeof(Board))
                return OUTCOME_OUT_OF_MEMORY
            memcpy(&ws.snapshots[depth], b, sizeof(Board))
            has_snap[depth] = SNAP_COPY
        board_play_assume_legal(b, move, mover)
        played_depth = depth + 1
        nodes_played += 1
        nodes[0] = nodes_played
        if nodes_played >= LADDER_NODE_BUDGET:
            if restore:
                memcpy(b, &ws.snapshots[0], sizeof(Board))
            return OUTCOME_OUT_OF_BUDGET
        next_start = frame.moves_start + frame.num_moves
        depth += 1
        ws.frames[depth].moves_start = next_start
        ws.frames[depth].num_moves = 0
        has_snap[depth] = SNAP_NONE
        checkpoint_of[depth] = depth - 1 if has_snap[depth - 1] != SNAP_NONE else checkpoint_of[depth - 1]
        entering = True


cdef int _run_ladder(Board* b, Loc loc, bint defender_first, LadderWorkspace* ws, bint restore,
                     int* nodes, const RootSource* root) noexcept nogil:
    """The search from a chain with 1 (defender_first) or 2 liberties, ws not NULL. The ko point is
    cleared for defender_first and left so: the caller puts it back (see ladder_is_captured)."""
    # At the root the defender may take any ko: assume kos work for the defender.
    if defender_first:
        b.ko_loc = NULL_LOC
    ws.frames[0].moves_start = 0
    ws.frames[0].num_moves = 0
    return _search(b, loc, defender_first, ws, restore, nodes, root)

cdef inline void _put_back_ko(Board* b, Loc saved_ko, int outcome) noexcept nogil:
    # KataGo leaves the cleared ko point behind when the budget runs out.
    if outcome != OUTCOME_OUT_OF_BUDGET:
        b.ko_loc = saved_ko


cdef bint ladder_is_captured(Board* b, Loc loc, bint defender_first, LadderWorkspace* ws) noexcept nogil:
    cdef int libs, outcome, nodes = 0
    cdef Loc saved_ko
    cdef LadderWorkspace* own_ws = NULL
    if loc < 0 or loc >= MAX_ARR_SIZE:
        return False
    if b.colors[loc] != C_BLACK and b.colors[loc] != C_WHITE:
        return False
    libs = board_num_liberties(b, loc)
    if libs > 2 or (defender_first and libs > 1):
        return False
    if ws == NULL:
        own_ws = ladder_workspace_new()
        if own_ws == NULL:
            return False
        ws = own_ws
    saved_ko = b.ko_loc
    outcome = _run_ladder(b, loc, defender_first, ws, True, &nodes, NULL)
    ladder_workspace_free(own_ws)
    _put_back_ko(b, saved_ko, outcome)
    return outcome == OUTCOME_CAPTURED


cdef bint _captured_restoring_from(Board* b, Loc loc, LadderWorkspace* ws, const Board* pristine) noexcept nogil:
    """ladder_is_captured(defender_first) for a chain in atari, with the same board afterwards, where
    pristine holds b as it is but for its ko point: a search that played moves is undone by one copy
    of pristine instead of a snapshot taken and copied back."""
    cdef Loc saved_ko = b.ko_loc
    cdef int nodes = 0
    cdef RootSource root
    cdef int outcome
    root.board = pristine
    root.fill = NULL_LOC
    root.fill_color = C_EMPTY
    outcome = _run_ladder(b, loc, True, ws, False, &nodes, &root)
    if nodes > 0:
        memcpy(b, pristine, sizeof(Board))
    _put_back_ko(b, saved_ko, outcome)
    return outcome == OUTCOME_CAPTURED


cdef inline bint _touches_chain(const Board* b, Loc point, Loc head) noexcept nogil:
    cdef int k
    cdef Loc adj
    for k in range(4):
        adj = point + b.adj_offsets[k]
        if (b.colors[adj] == C_BLACK or b.colors[adj] == C_WHITE) and b.chain_head[adj] == head:
            return True
    return False

cdef bint _surely_escapes_after_fill(const Board* b, Loc loc, Loc extend, Loc filled) noexcept nogil:
    """For a 2-liberty chain at loc: after the attacker fills `filled`, would the defender's stone at
    `extend` (the other liberty) surely have ESCAPE_LIBERTIES liberties? A lower bound that ignores
    captures (the attacker's can only free points, the defender's only add liberties): the empty
    neighbours of `extend` other than `filled`, or an adjacent friendly chain's liberties other than
    `extend` and, where it touches it, `filled`."""
    cdef Color defender = b.colors[loc]
    cdef int k, empties = 0, libs, best = 0
    cdef Loc adj, head
    for k in range(4):
        adj = extend + b.adj_offsets[k]
        if b.colors[adj] == C_EMPTY:
            if adj != filled:
                empties += 1
        elif b.colors[adj] == defender:
            head = b.chain_head[adj]
            libs = b.chain_data[head].num_liberties - 1
            if _touches_chain(b, filled, head):
                libs -= 1
            if libs > best:
                best = libs
    return empties >= ESCAPE_LIBERTIES or best >= ESCAPE_LIBERTIES


cdef bint ladder_is_captured_attacker_first_2libs(
        Board* b, Loc loc, LadderWorkspace* ws, Loc* working_moves, int* num_working) noexcept nogil:
    cdef bint result
    cdef LadderWorkspace* own_ws = NULL
    num_working[0] = 0
    if loc < 0 or loc >= MAX_ARR_SIZE:
        return False
    if b.colors[loc] != C_BLACK and b.colors[loc] != C_WHITE:
        return False
    if board_num_liberties(b, loc) != 2:
        return False
    if ws == NULL:
        own_ws = ladder_workspace_new()
        if own_ws == NULL:
            return False
        ws = own_ws
    result = _captured_2libs(b, loc, ws, working_moves, num_working, NULL)
    ladder_workspace_free(own_ws)
    return result

cdef bint _captured_2libs(Board* b, Loc loc, LadderWorkspace* ws, Loc* working_moves, int* num_working,
                          const Board* pristine) noexcept nogil:
    """ladder_is_captured_attacker_first_2libs for a stone of a 2-liberty chain, ws not NULL. pristine
    holds b as it is but for its ko point, or is NULL: then a snapshot is taken when first needed.
    b is put back from it after each try."""
    cdef Loc liberties[2]
    cdef bint works[2]
    cdef Color attacker = opp_of(b.colors[loc])
    cdef Loc saved_ko = b.ko_loc
    cdef int i, nodes = 0
    cdef RootSource root
    num_working[0] = 0
    board_find_liberties(b, loc, liberties, 2)
    for i in range(2):
        works[i] = False
        # Settled without playing: the defender's extension at the other liberty surely reaches
        # 3 liberties, which the search would find (an escape; running out of budget first also
        # answers "not captured"), so the board copy and the two moves are saved.
        if _surely_escapes_after_fill(b, loc, liberties[1 - i], liberties[i]):
            continue
        if board_is_legal(b, liberties[i], attacker, False):
            if pristine == NULL:   # one snapshot serves both liberties
                memcpy(ws.before_attack, b, sizeof(Board))
                pristine = ws.before_attack
            board_play_assume_legal(b, liberties[i], attacker)
            if board_num_liberties(b, loc) == 1:
                # The inner search leaves the board as it ends: the copy below undoes everything.
                root.board = pristine
                root.fill = liberties[i]
                root.fill_color = attacker
                works[i] = _run_ladder(b, loc, True, ws, False, &nodes, &root) == OUTCOME_CAPTURED
            memcpy(b, pristine, sizeof(Board))
            b.ko_loc = saved_ko
    for i in range(2):
        if works[i]:
            working_moves[num_working[0]] = liberties[i]
            num_working[0] += 1
    return num_working[0] > 0


cdef enum:
    CHAIN_UNSOLVED = 0
    CHAIN_ESCAPES = 1
    CHAIN_LADDERED = 2

cdef int ladder_features(
        const Board* b, Color working_for, unsigned char* laddered, unsigned char* working,
        LadderWorkspace* ws) noexcept nogil:
    cdef unsigned char chain_verdict[MAX_ARR_SIZE]   # by chain head
    cdef Loc working_moves[LADDER_MAX_WORKING_MOVES]
    cdef int num_working = 0, num_laddered = 0, x, y, libs, i
    cdef Loc loc, head
    cdef Color stone
    cdef bint is_laddered, have_scratch = False
    cdef LadderWorkspace* own_ws = NULL
    memset(laddered, 0, MAX_ARR_SIZE)
    if working != NULL:
        memset(working, 0, MAX_ARR_SIZE)
    if ws == NULL:
        own_ws = ladder_workspace_new()
        if own_ws == NULL:
            return 0
        ws = own_ws
    memset(chain_verdict, CHAIN_UNSOLVED, MAX_ARR_SIZE)
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            stone = b.colors[loc]
            if stone != C_BLACK and stone != C_WHITE:
                continue
            libs = board_num_liberties(b, loc)
            if libs != 1 and libs != 2:
                continue
            head = b.chain_head[loc]
            if chain_verdict[head] == CHAIN_UNSOLVED:
                # One scratch copy for the whole scan, as KataGo does (its ko point may be
                # cleared by a search that ran out of budget, and later searches see that),
                # made when first needed. It differs from b at most in its ko point, so b
                # undoes the searches.
                if not have_scratch:
                    memcpy(ws.scan_board, b, sizeof(Board))
                    have_scratch = True
                if libs == 1:
                    is_laddered = _captured_restoring_from(ws.scan_board, loc, ws, b)
                else:
                    is_laddered = _captured_2libs(ws.scan_board, loc, ws, working_moves, &num_working, b)
                    if is_laddered and working != NULL and stone == working_for:
                        for i in range(num_working):
                            working[working_moves[i]] = 1
                chain_verdict[head] = CHAIN_LADDERED if is_laddered else CHAIN_ESCAPES
            if chain_verdict[head] == CHAIN_LADDERED:
                laddered[loc] = 1
                num_laddered += 1
    ladder_workspace_free(own_ws)
    return num_laddered


# ---- Python helpers (tests and tools) ---------------------------------------------
cdef LadderWorkspace* _python_ws = ladder_workspace_new()   # used only while holding the GIL

cdef inline object _xy(Loc loc, int x_size):
    return (loc_x(loc, x_size), loc_y(loc, x_size))

def is_ladder_captured(GoBoard g, xy, bint defender_first=True):
    """ladder_is_captured for the chain at (x, y). The board is restored (see ladder.pxd)."""
    cdef Loc loc = g._loc(xy)
    return bool(ladder_is_captured(&g.b, loc, defender_first, _python_ws))

def is_ladder_captured_2libs(GoBoard g, xy):
    """ladder_is_captured_attacker_first_2libs: (captured, set of working moves as (x, y))."""
    cdef Loc loc = g._loc(xy)
    cdef Loc moves[LADDER_MAX_WORKING_MOVES]
    cdef int n = 0, i
    result = ladder_is_captured_attacker_first_2libs(&g.b, loc, _python_ws, moves, &n)
    return bool(result), {_xy(moves[i], g.b.x_size) for i in range(n)}

def ladder_map(GoBoard g, int working_for=C_EMPTY):
    """ladder_features: (set of laddered stones, set of working moves), points as (x, y).

    working_for is the colour whose laddered 2-liberty chains report working moves
    (the opponent of the side to move); C_EMPTY reports none.
    """
    cdef unsigned char laddered[MAX_ARR_SIZE]
    cdef unsigned char working[MAX_ARR_SIZE]
    cdef int loc
    ladder_features(&g.b, <Color>working_for, laddered, working, _python_ws)
    stones = {_xy(loc, g.b.x_size) for loc in range(MAX_ARR_SIZE) if laddered[loc]}
    moves = {_xy(loc, g.b.x_size) for loc in range(MAX_ARR_SIZE) if working[loc]}
    return stones, moves

def run_ladder_features(GoBoard g, int working_for, int repeats):
    """Call ladder_features repeats times without the GIL (benchmarks); returns the laddered count."""
    cdef unsigned char laddered[MAX_ARR_SIZE]
    cdef unsigned char working[MAX_ARR_SIZE]
    cdef int i, n = 0
    cdef LadderWorkspace* ws = ladder_workspace_new()
    with nogil:
        for i in range(repeats):
            n = ladder_features(&g.b, <Color>working_for, laddered, working, ws)
    ladder_workspace_free(ws)
    return n


# ---- Cache of laddered stones by position (see the .pxd) ------------------------------------
cdef inline void _ladder_cache_key(const Board* b, uint64_t* key0, uint64_t* key1) noexcept nogil:
    # The ko point changes a scan (a defender may retake at the root), so it is part of the key.
    key0[0] = b.pos_hash.h0 ^ (<uint64_t>(b.ko_loc + 1) * 0x9E3779B97F4A7C15ULL)
    key1[0] = b.pos_hash.h1

cdef bint _entry_read(LadderCacheEntry* e, uint64_t key0, uint64_t key1, LadderCacheEntry* copy) noexcept nogil:
    """A stable copy of e if it holds this key (the seqlock's read side)."""
    cdef uint32_t seq = seq_load(&e.seq)
    if seq & 1:
        return False   # being written
    memcpy(copy, e, sizeof(LadderCacheEntry))
    fence_acquire()    # the copy is read before the number is read again
    if seq_load(&e.seq) != seq:
        return False   # written meanwhile: the copy may be torn
    return copy.count_plus_one != 0 and copy.key0 == key0 and copy.key1 == key1


cdef void _entry_write(LadderCacheEntry* e, uint64_t key0, uint64_t key1, const Board* b,
                       const unsigned char* laddered, int count) noexcept nogil:
    """Store a scan's laddered stones in e (the seqlock's write side); skipped while another thread writes e."""
    cdef uint32_t seq = seq_load(&e.seq)
    cdef int y, n = 0
    cdef Loc loc
    if seq & 1 or not seq_cas(&e.seq, seq, seq + 1):
        return
    fence_release()    # the odd number is seen before any of the new contents
    e.key0, e.key1 = key0, key1
    e.count_plus_one = count + 1
    for y in range(b.y_size):
        if n == count:
            break      # every stone found (often none: most positions have no ladder)
        for loc in range(loc_of(0, y, b.x_size), loc_of(b.x_size, y, b.x_size)):
            if laddered[loc]:
                e.stones[n] = <uint16_t>loc
                n += 1
    seq_store(&e.seq, seq + 2)


cdef int ladder_features_cached(
        const Board* b, Color working_for, unsigned char* laddered, unsigned char* working,
        LadderWorkspace* ws, LadderCache* cache) noexcept nogil:
    cdef uint64_t key0, key1
    cdef LadderCacheEntry* e
    cdef LadderCacheEntry copy
    cdef int i, count
    if cache == NULL:
        return ladder_features(b, working_for, laddered, working, ws)
    if cache.entries == NULL:
        ladder_cache_prepare(cache)   # (a borrowed view's table is its owner's to make)
        if cache.entries == NULL:
            return ladder_features(b, working_for, laddered, working, ws)
    _ladder_cache_key(b, &key0, &key1)
    e = &cache.entries[key0 & ((1 << LADDER_CACHE_SIZE_BITS) - 1)]
    if working == NULL and _entry_read(e, key0, key1, &copy):
        memset(laddered, 0, MAX_ARR_SIZE)
        count = copy.count_plus_one - 1
        for i in range(count):
            laddered[copy.stones[i]] = 1
        return count
    count = ladder_features(b, working_for, laddered, working, ws)
    if count <= LADDER_CACHE_MAX_STONES:
        _entry_write(e, key0, key1, b, laddered, count)
    return count

cdef LadderWorkspace* ladder_cache_workspace(LadderCache* cache) noexcept nogil:
    if cache.ws == NULL and not cache.borrowed:
        cache.ws = ladder_workspace_new()
    return cache.ws

cdef void ladder_cache_prepare(LadderCache* cache) noexcept nogil:
    if cache.entries == NULL and not cache.borrowed:
        cache.entries = <LadderCacheEntry*>calloc(1 << LADDER_CACHE_SIZE_BITS, sizeof(LadderCacheEntry))

cdef void ladder_cache_borrow(LadderCache* view, const LadderCache* owner, LadderCache* own) noexcept nogil:
    view.entries = owner.entries
    view.ws = ladder_cache_workspace(own)
    view.borrowed = True

cdef void ladder_cache_release(LadderCache* cache) noexcept nogil:
    if not cache.borrowed:
        free(cache.entries)
    cache.entries = NULL
    ladder_workspace_free(cache.ws)
    cache.ws = NULL


# ---- The table's seqlock under contention (tests) -------------------------------------------------
cdef struct _SeqlockRun:
    LadderCacheEntry* entry          # the one entry every thread writes and reads
    const Board* boards[2]
    const unsigned char* laddered[2]  # each board's laddered stones (MAX_ARR_SIZE flags)
    uint64_t keys[2][2]
    int counts[2]
    int rounds
    int thread_index
    long long torn                   # results: reads whose stones were not their key's
    long long hits

cdef void* _seqlock_thread(void* arg) noexcept nogil:
    cdef _SeqlockRun* run = <_SeqlockRun*>arg
    cdef LadderCacheEntry copy
    cdef int r, which, i, k
    cdef bint same
    for r in range(run.rounds):
        which = (r + run.thread_index) & 1
        _entry_write(run.entry, run.keys[which][0], run.keys[which][1], run.boards[which], run.laddered[which],
                     run.counts[which])
        for k in range(2):
            if not _entry_read(run.entry, run.keys[k][0], run.keys[k][1], &copy):
                continue
            run.hits += 1
            same = copy.count_plus_one - 1 == run.counts[k]
            for i in range(copy.count_plus_one - 1):
                if i >= LADDER_CACHE_MAX_STONES or not run.laddered[k][copy.stones[i]]:
                    same = False
                    break
            if not same:
                run.torn += 1
    return NULL

def seqlock_stress(GoBoard a, GoBoard b, int threads, int rounds):
    """Threads that write a's and b's laddered stones into one shared table entry in turn, each reading it back
    under both keys after every write: (torn reads -- a key read with stones not its own; 0 is right --, reads
    that found their key). a and b must each have 1..13 laddered stones, not the same ones."""
    cdef LadderCacheEntry entry
    cdef unsigned char laddered[2][MAX_ARR_SIZE]
    cdef _SeqlockRun* runs = <_SeqlockRun*>calloc(threads, sizeof(_SeqlockRun))
    cdef pthread_t* handles = <pthread_t*>calloc(threads, sizeof(pthread_t))
    cdef const Board* boards[2]
    cdef int counts[2]
    cdef int i, k, started = 0
    if runs == NULL or handles == NULL:
        free(runs)
        free(handles)
        raise MemoryError()
    memset(&entry, 0, sizeof(entry))
    boards[0], boards[1] = &a.b, &b.b
    for i in range(2):
        counts[i] = ladder_features(boards[i], C_EMPTY, laddered[i], NULL, _python_ws)
    for i in range(threads):
        runs[i].entry = &entry
        runs[i].rounds = rounds
        runs[i].thread_index = i
        for k in range(2):
            runs[i].boards[k] = boards[k]
            runs[i].laddered[k] = laddered[k]
            runs[i].counts[k] = counts[k]
            _ladder_cache_key(boards[k], &runs[i].keys[k][0], &runs[i].keys[k][1])
    with nogil:
        for i in range(threads):
            if pthread_create(&handles[i], NULL, _seqlock_thread, &runs[i]) != 0:
                break
            started += 1
        for i in range(started):
            pthread_join(handles[i], NULL)
    torn = sum(runs[i].torn for i in range(started))
    hits = sum(runs[i].hits for i in range(started))
    free(runs)
    free(handles)
    if started < threads:
        raise OSError(f"could start only {started} of {threads} threads")
    return torn, hits
