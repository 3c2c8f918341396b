"""KataGo networks: model files, the PyTorch network, exact output postprocessing, evaluation.

Main entry points (imported lazily, so ``import katacli.nn`` does not load torch):

- :func:`read_model_file` -> :class:`ModelDesc` (``.bin.gz``/``.bin``/``.txt.gz``/``.txt``, versions 8-17);
  :class:`ModelFileError` for broken or unsupported files; :func:`check_model_file` checks a file
  (exists, gzip whole, header and version readable) without parsing the weights.
- :class:`KataGoModel` (``load_model(path)``, ``KataGoModel.from_config("b18c384nbt")``):
  the network as a ``torch.nn.Module``.
- :class:`NNEvaluator` / :class:`NNRequest` / :class:`NNOutput`: evaluate positions (V7 features,
  legal mask, symmetry) into White-perspective results; :class:`BatchingEvaluator` batches
  single requests submitted from many threads; :func:`set_cpu_threads`.
- :func:`export_model` / :func:`write_model_file`: write KataGo model files.
- :mod:`katacli.nn.symmetry`: KataGo's 8 symmetries.
"""

from katacli.lazy import lazy_attributes

_EXPORTS = {
    "ModelDesc": "katacli.nn.description",
    "ModelFileError": "katacli.nn.model_file_reader",
    "read_model_file": "katacli.nn.model_file_reader",
    "check_model_file": "katacli.nn.model_file_reader",
    "ModelFileHeader": "katacli.nn.model_file_reader",
    "KataGoModel": "katacli.nn.torch_model",
    "ModelOutput": "katacli.nn.torch_model",
    "load_model": "katacli.nn.torch_model",
    "NNEvaluator": "katacli.nn.evaluator",
    "NNRequest": "katacli.nn.evaluator",
    "BatchingEvaluator": "katacli.nn.batching",
    "BatchClients": "katacli.nn.batching",
    "set_cpu_threads": "katacli.nn.evaluator",
    "NNOutput": "katacli.nn.postprocess",
    "NNCache": "katacli.nn.cache",
    "export_model": "katacli.nn.export",
    "write_model_file": "katacli.nn.export",
    "ModelExportError": "katacli.nn.export",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_attributes(__name__, _EXPORTS)
