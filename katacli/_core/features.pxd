# cython: language_level=3
"""Contract: KataGo's V7 neural-network input features (22 spatial planes, 19 globals).

All values are from the point of view of next_pla ("pla"; "opp" is the other side).
Spatial planes, indexed [channel][y][x] with row stride nn_x_len:
   0 on board                 1 pla stone            2 opp stone
   3/4/5 chain has 1/2/3 liberties
   6 ko-ban (simple ko, superko; in the encore: once-per-position ko captures)
   7 encore ko-recapture blocked          8 unused (zero)
   9..13 locations of the last 5 moves (most recent first), when they alternate properly
  14 stone in a chain that can be captured in a ladder; 15/16 same one/two moves ago
  17 moves that ladder-capture an opp chain with 2 liberties
  18/19 pla/opp area (pass-alive or territory, by the rules; see fill_features_v7)
  20/21 pla/opp stones at the start of the second encore phase
Globals: 0..4 last moves were passes, 5 self komi / 20, 6..7 ko rule, 8 multi-stone
suicide, 9 territory scoring, 10..11 tax, 12..13 encore phase, 14 a pass would end the
phase, 15..16 playout doubling advantage, 17 button available, 18 komi parity wave.
"""
from katacli._core.board cimport Color
from katacli._core.history cimport History
from katacli._core.ladder cimport LadderCache

cdef enum:
    NUM_SPATIAL_FEATURES_V7 = 22
    NUM_GLOBAL_FEATURES_V7 = 19

# The global features' indices (see above); the network's postprocessing reads the rules from them.
cdef enum:
    G_PREV_PASS_1 = 0
    G_SELF_KOMI = 5
    G_KO_NOT_SIMPLE = 6
    G_KO_KIND = 7
    G_MULTI_STONE_SUICIDE = 8
    G_TERRITORY = 9
    G_TAX_SEKI = 10
    G_TAX_ALL = 11
    G_ENCORE_1 = 12
    G_ENCORE_2 = 13
    G_PASS_ENDS_PHASE = 14
    G_PDA_ON = 15
    G_PDA = 16
    G_BUTTON = 17
    G_KOMI_WAVE = 18

cdef struct FeatureParams:
    double draw_equivalent_wins_for_white     # 0.5 by default
    bint conservative_pass_and_is_root
    bint enable_passing_hacks
    double playout_doubling_advantage
    int max_history                           # KataGo's default: 1000
    int pass_alive_suicide_override           # -1 follow the history, 0/1 force
    # Where each point's features go: spatial plane index of point y * nn_x_len + x (a board symmetry
    # applied while filling, so no separate gather is needed); NULL: the point itself.
    const int* pos_map

cdef void default_feature_params(FeatureParams* p) noexcept nogil

# spatial: NUM_SPATIAL_FEATURES_V7 * nn_y_len * nn_x_len floats (fully overwritten), global_: 19 floats.
# nn_x_len/nn_y_len >= the board size; points outside the board stay zero (channel 0 is the mask).
# ladder_cache: a search tree's cache of laddered stones by position (NULL: none), which answers the
# previous boards' ladder features (see ladder.pxd).
cdef void fill_features_v7(const History* h, Color next_pla, const FeatureParams* p,
                           int nn_x_len, int nn_y_len, float* spatial, float* global_,
                           LadderCache* ladder_cache) noexcept nogil

# Legal-move mask in policy order: nn_y_len * nn_x_len points (row-major) then pass. 1 legal, 0 not.
cdef void fill_legal_mask(const History* h, Color next_pla, int nn_x_len, int nn_y_len, unsigned char* out) noexcept nogil
