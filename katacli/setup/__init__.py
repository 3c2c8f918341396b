"""Where a config becomes settings (KataGo's ``program/`` layer: setup, gtpconfig).

* :mod:`~katacli.setup.engine_settings`: what `kata gtp` and `kata analysis` read at start-up besides
  search parameters: logging, rules, the network's evaluation settings, the engines' own keys.
* :mod:`~katacli.setup.config_writer`: the commented GTP config `kata genconfig` writes from the key
  registry, and the check that `kata gtp` loads it cleanly.

Every settings class in katacli, here and in the packages that own one (``search.params``,
``selfplay.settings``, ``train.settings``, ``match.settings``, ``gtp.runtime_params``), declares its
keys with :func:`katacli.config_keys.fields.config_field` and is built by
:func:`katacli.config_keys.fields.build_settings`: a key's type, range, default and error message are
written once, in :mod:`katacli.config_keys`. This package sits above ``search`` and ``nn`` and below
the engines (``gtp``, ``analysis``, ``api``) and the commands that use it.
"""
