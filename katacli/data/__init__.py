"""Training data: KataGo's row layout in ``.h5`` files (and ``.npz`` both ways).

For a trainer::

    from katacli.data import list_training_files, load_training_arrays, unpack_planes, GT

    for path in list_training_files("selfplay/tdata"):          # .h5 and .npz, complete files only
        rows = load_training_arrays(path)                        # dict of KataGo's arrays, as np.load(npz)
        inputs = unpack_planes(rows["binaryInputNCHWPacked"], pos_len)   # float32 [N, 22, L, L]
        weight = rows["globalTargetsNC"][:, GT.ROW_WEIGHT]

:class:`TrainingFile` reads slices or whole games of one ``.h5``;
:class:`TrainingDataWriter` writes games' rows into files; :func:`npz_to_h5` and
:func:`h5_to_npz` convert without loss. :mod:`katacli.data.schema` documents every
dataset and channel.
"""
from katacli.data.convert import convert_file, convert_tree, h5_to_npz, npz_to_h5
from katacli.data.files import (
    TrainingDataError,
    TrainingFile,
    atomic_output,
    is_partial_file,
    list_training_files,
    load_training_arrays,
    read_npz,
    remove_stale_partials,
    write_h5,
    write_npz,
)
from katacli.data.schema import (
    FIELDS,
    GAME_MODES,
    GLOBAL_TARGET_CHANNELS,
    GT,
    REQUIRED_FIELDS,
    SELFPLAY_FIELDS,
    VALUE_SPATIAL_CHANNELS,
    SchemaError,
    empty_arrays,
    game_row_ranges,
    join_game_hash,
    pack_planes,
    pad_global_targets,
    policy_size,
    pos_len_of,
    score_distr_len,
    split_game_hash,
    unpack_planes,
    validate_arrays,
)
from katacli.data.writer import TrainingDataWriter

__all__ = [
    "FIELDS", "GAME_MODES", "GLOBAL_TARGET_CHANNELS", "GT", "REQUIRED_FIELDS", "SELFPLAY_FIELDS",
    "VALUE_SPATIAL_CHANNELS", "SchemaError", "TrainingDataError", "TrainingDataWriter", "TrainingFile",
    "atomic_output", "convert_file", "convert_tree", "empty_arrays", "game_row_ranges", "h5_to_npz",
    "is_partial_file", "join_game_hash", "list_training_files", "load_training_arrays", "npz_to_h5",
    "pack_planes", "pad_global_targets", "policy_size", "pos_len_of", "read_npz", "remove_stale_partials", "score_distr_len",
    "split_game_hash", "unpack_planes", "validate_arrays", "write_h5", "write_npz",
]
