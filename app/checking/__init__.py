"""The check core: one check as the service serves it, whoever asked (the HTTP API, the MCP tool,
a scheduled job).

:mod:`app.checking.services` is the composition root (every collaborator, built once per
process); :mod:`app.checking.flow` runs a check in order (guard, limits, payment, probe, judge,
sign, record); :mod:`app.checking.runner` gives each URL one probe at a time and each host its
slots, paced by :mod:`app.checking.turns`; :mod:`app.checking.freepool`,
:mod:`app.checking.ratelimit` and :mod:`app.checking.clients` share out what is free;
:mod:`app.checking.comparison` finds a check's baseline; :mod:`app.checking.recorder` keeps
served checks in the history; :mod:`app.checking.metrics` and :mod:`app.checking.tracing` observe.
Nothing here speaks HTTP: the HTTP layer (:mod:`app.http`) and the jobs (:mod:`app.jobs`) call in.
"""
