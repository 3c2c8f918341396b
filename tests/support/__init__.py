"""Helpers shared by the test modules (no tests of their own).

``paths``: where the repository, the shared models and KataGo reference outputs are, and skipping
when they are absent; ``gtp``, ``analysis``, ``selfplay``: in-process engines and small settings;
``fakes``: a network stand-in for search tests; ``gtp_transcript``: the golden-transcript format;
``fuzz``: hostile input lines; ``processes``: children that Ctrl-C reaches, worker processes and
waiting until they are gone.
"""
