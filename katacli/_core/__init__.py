"""The Cython core of katacli: board, history, rules, features, ladders, search tree.

Each module has a ``.pxd`` file that documents its C-level contract; input
validation happens in the Python layers above (``katacli.game``), never here.
"""
