# cython: language_level=3
"""Contract of the ladder solver (KataGo's searchIsLadderCaptured family and iterLadders).

A "ladder" here is KataGo's narrow tactical reading: the attacker may only play on
the defender chain's liberties (keeping it in atari or reducing 2 -> 1 liberty),
the defender may only extend on its last liberty or capture an adjacent attacker
chain that is in atari. Nets (geta) and other non-atari captures are therefore
NOT ladders in this sense.

Semantics reproduced from KataGo v1.17 (they feed NN input features 14-17):
  * Suicide is never legal inside the search; illegal moves are skipped.
  * With defender_first, the simple-ko ban is lifted at the root only: the
    defender may retake a ko there ("assume kos work at the root").
  * Deeper down, a defender facing a simple-ko point left by the attacker is
    deemed to escape (ladders that depend on kos do not count).
  * Double-ko rule: if both attacker options are ko mouths that capture, neither
    defender connection reaches 3 liberties and the defender has no capture
    that gains liberties, the chain is captured.
  * Node budget LADDER_NODE_BUDGET (moves played); when exhausted the answer is
    "not captured". Depth limit x_size*y_size*3/2+1 frames; reaching it counts
    as captured.
  * The result is order-independent except when the node budget runs out;
    move order follows KataGo's (captures in chain-walk order then the
    liberty; attacker liberties in chain-walk order, reordered by KataGo's
    connection heuristic), but the chain-walk order comes from board.pyx,
    whose linked-list order can differ from KataGo's.

Board state: each search plays moves on the given board and restores it by
copying snapshots back, so the board is bit-for-bit identical afterwards, with
ONE deliberate exception copied from KataGo: when a defender-first search runs
out of node budget, b.ko_loc is left cleared (NULL_LOC). ladder_features
relies on this, since KataGo reuses one scratch board for a whole scan.

Workspace: searches need heap scratch (board snapshots and move lists). Pass a
LadderWorkspace from ladder_workspace_new() (one per thread; not shareable
between concurrent searches), or NULL to allocate a temporary one per call.
If memory cannot be allocated the search answers "not captured".
"""
from katacli._core.board cimport Board, Loc, Color

cdef enum:
    LADDER_NODE_BUDGET = 25000      # KataGo's MAX_LADDER_SEARCH_NODE_BUDGET
    LADDER_MAX_WORKING_MOVES = 2    # an attacker-first 2-liberty search tries both liberties

cdef struct LadderFrame:
    int moves_start       # index of this depth's move list in LadderWorkspace.moves
    int num_moves
    int next_move         # index into the list of the move being (or about to be) tried

cdef struct LadderWorkspace:
    Board* snapshots      # snapshots[d]: the board before the move tried at depth d
    int snapshot_capacity
    Loc* moves            # all depths' move lists, concatenated
    int moves_capacity
    LadderFrame* frames
    int frame_capacity
    Board* before_attack  # the 2-liberty search's board before the attacker's first move
    Board* scan_board     # ladder_features' scratch copy of the position

cdef LadderWorkspace* ladder_workspace_new() noexcept nogil
cdef void ladder_workspace_free(LadderWorkspace* ws) noexcept nogil

# Can the chain at loc (a stone with 1 liberty if defender_first, else 1 or 2
# liberties) be captured in a ladder? Any other loc answers False.
# Restores the board (see the ko_loc exception above).
cdef bint ladder_is_captured(Board* b, Loc loc, bint defender_first, LadderWorkspace* ws) noexcept nogil

# For a chain with exactly 2 liberties: the attacker fills either liberty, then
# the defender-first search runs. Returns True when at least one works; then
# working_moves[0 .. num_working[0]-1] (capacity LADDER_MAX_WORKING_MOVES) holds
# the liberties that work. num_working[0] is 0 when the answer is False.
# The board is restored exactly.
cdef bint ladder_is_captured_attacker_first_2libs(
    Board* b, Loc loc, LadderWorkspace* ws, Loc* working_moves, int* num_working) noexcept nogil

# KataGo's iterLadders plus the feature-14/17 rules, for one position.
# For every stone whose chain has 1 or 2 liberties (each chain solved once, on
# one scratch copy of b, scanning rows top to bottom, left to right):
#   1 liberty: laddered = ladder_is_captured(defender_first=True)
#   2 liberties: laddered = ladder_is_captured_attacker_first_2libs
# Outputs, indexed by Loc, each of MAX_ARR_SIZE entries and fully overwritten:
#   laddered[loc] = 1 on every stone of a laddered chain, else 0.
#   working[loc]  = 1 on each working move of a laddered 2-liberty chain of
#                   colour working_for (KataGo: the opponent of the side to move),
#                   else 0. Pass working = NULL to skip (features 15/16 need only
#                   laddered, for the previous boards).
# Returns the number of laddered stones.
cdef int ladder_features(
    const Board* b, Color working_for, unsigned char* laddered, unsigned char* working,
    LadderWorkspace* ws) noexcept nogil

# ---- Cache of laddered stones by position (a search's previous-board features) ----
# A leaf's features need the laddered stones of the two previous boards, which are its parent's
# and grandparent's positions: their scans ran when those nodes were leaves. The cache holds each
# scanned position's laddered stones, keyed by its stones (pos_hash) and ko point, the only inputs
# of a scan. Direct-mapped (a new entry replaces the slot's), lazily allocated; positions with more
# laddered stones than an entry holds are not stored. One table per search tree, shared by every thread
# that fills the tree's leaves (the search thread and the leaf helpers: with a table each, a leaf's parent
# had often been scanned by another thread, and a quarter to a half of the previous-board lookups missed).
# Each entry is read and written under its sequence number (a seqlock): a writer makes it odd, writes, and
# makes it even again; a reader copies the entry and keeps the copy only if the number was even and did not
# change, so a reader never takes a half-written entry, and a writer finding another one at work skips.
# The current board is always scanned. Tried and dropped (2026-11-27): an incremental scan that took each
# chain's verdict from the previous position's scan when the last move lay outside a box of every point the
# chain's search depended on (per-chain records in a second table). It was exact (30,500 positions of random
# games against full scans, none differing; 35-53% of chains reused), but the zero-cost search gained only
# 1.07-1.09x on a random game's positions and 0.96-1.00x on kata benchmark's: a real position's scan costs
# little in searches (2.5 us warm), most of it in walking the board, which the incremental scan still does.
from libc.stdint cimport uint16_t, uint32_t, uint64_t

cdef enum:
    LADDER_CACHE_SIZE_BITS = 14
    LADDER_CACHE_MAX_STONES = 13

cdef struct LadderCacheEntry:
    uint64_t key0
    uint64_t key1
    uint32_t seq                     # even: stable, odd: being written (see above)
    uint16_t count_plus_one          # 0: empty slot
    uint16_t stones[LADDER_CACHE_MAX_STONES]

cdef struct LadderCache:
    LadderCacheEntry* entries        # NULL until first used (or when memory ran out)
    LadderWorkspace* ws              # this thread's ladder workspace (ladder_cache_workspace), NULL until used
    bint borrowed                    # entries are another cache's (ladder_cache_borrow): never made or freed here

# ladder_features through the cache: with working == NULL a cached position is answered without
# a scan; every scan's result is stored. cache NULL: plain ladder_features. Same outputs.
cdef int ladder_features_cached(
    const Board* b, Color working_for, unsigned char* laddered, unsigned char* working,
    LadderWorkspace* ws, LadderCache* cache) noexcept nogil
# The cache's workspace, made on first use (NULL if memory ran out, or borrowed): one per thread, not per leaf.
cdef LadderWorkspace* ladder_cache_workspace(LadderCache* cache) noexcept nogil
# The table made now if it is not yet (before other threads borrow it; it stays NULL if memory ran out).
cdef void ladder_cache_prepare(LadderCache* cache) noexcept nogil
# view: owner's table (made already: ladder_cache_prepare) with the workspace of own (a thread's cache).
cdef void ladder_cache_borrow(LadderCache* view, const LadderCache* owner, LadderCache* own) noexcept nogil
cdef void ladder_cache_release(LadderCache* cache) noexcept nogil
