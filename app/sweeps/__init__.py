"""Sweeps: every remote endpoint of the registry mirror probed politely, on a schedule.

- :mod:`app.sweeps.policy`: when an endpoint is next due (a pure function, and its settings).
- :mod:`app.sweeps.source`: the ``sweep`` :class:`app.queue.model.Source` handing out probe jobs.
"""
