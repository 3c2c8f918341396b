"""Training KataGo networks: ``kata train``.

The pieces, in the order data flows through them:

* :mod:`~katacli.train.rows` - reading training files (HDF5 or KataGo npz, KataGo's layouts);
* :mod:`~katacli.train.window` - the shuffled window over the newest rows, epoch by epoch;
* :mod:`~katacli.train.batch` - expanding rows to tensors, symmetries and history dropout;
* :mod:`~katacli.train.training_net` - the model plus KataGo's training-only heads;
* :mod:`~katacli.train.losses` - KataGo's loss terms and weights;
* :mod:`~katacli.train.optim` - SGD/AdamW, LR schedule, clipping, lookahead, SWA;
* :mod:`~katacli.train.checkpoint`, :mod:`~katacli.train.exporting` - exact resume and
  atomic exports into the models directory self-play watches;
* :mod:`~katacli.train.metrics` - ``metrics.jsonl`` and ``loss_curves.png``;
* :mod:`~katacli.train.distributed` - DDP under ``torchrun``;
* :mod:`~katacli.train.trainer` - the loop; :mod:`~katacli.train.settings` - its settings (keys in
  :mod:`katacli.config_keys.train_keys`);
* :mod:`~katacli.train.synthetic` - random valid rows for tests and smoke runs.

Single process::

    kata train -data-dir selfplay/ -output-dir runs/b6 -export-dir models/ -model-kind b6c96

Several GPUs on one machine (each process trains ``batchSize`` rows of every step)::

    torchrun --standalone --nproc_per_node=4 -m katacli.cli train -data-dir selfplay/ -output-dir runs/b6 -export-dir models/

Several machines: see :mod:`katacli.train.distributed`.
"""
