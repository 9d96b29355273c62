"""Scheduled jobs on the check core: the probe job, the context every handler is given, and the
parts that bring work (the registry mirror and its sweeps, monitors and their webhooks).

The engine that carries them (sources, the queue, workers, the scheduler) is :mod:`app.queue`;
a probe job is checked, paced, signed and kept exactly as a served check is
(:mod:`app.checking`), in a worker process or inside ``mcp-sonde serve`` (:mod:`app.jobs.embedded`).
"""
