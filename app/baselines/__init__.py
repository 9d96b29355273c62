"""Baselines: the tool list a check is compared with.

:mod:`app.baselines.request` is what a caller names (a run, a fingerprint or a list);
:mod:`app.baselines.compare` judges a check against it (the two ``*_vs_baseline`` verdicts and
the diff); :mod:`app.baselines.store` keeps the baseline a maintainer approved for a server;
:mod:`app.baselines.proof` checks a host's proof of control for approving one.
"""
