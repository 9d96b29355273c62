"""The public statistics of the directory: figures recomputed from the stored runs.

- :mod:`app.stats.figures`: the failure buckets, tool count buckets and every figure's
  definition, as data (``stats.yaml``).
- :mod:`app.stats.compute`: the figures, from the newest run of every server and the changes.
- :mod:`app.stats.snapshot`: the snapshot ``GET /v1/stats`` and ``/stats`` answer, recomputed at
  most every ``stats_max_age_s`` seconds.
"""
