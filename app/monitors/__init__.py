"""Monitors: scheduled full checks of one MCP endpoint, bought as a block of runs, and the alerts
their outcomes raise (see :mod:`app.monitors.source`, :mod:`app.monitors.alerts`, and
:func:`app.monitors.jobs.register` for how they join the job engine)."""
