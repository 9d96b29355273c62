"""The cluster drill: compose.yaml's production topology as processes on one machine (nginx in front
of two ``mcp-sonde serve`` instances, two workers, an active and a standby scheduler, Redis with an
append-only file, a PostgreSQL cluster of its own), under a bounded load of free, paid, badge and
attestation reads through nginx, with monitors bought on the offline chain whose webhooks a
receiver verifies. Faults are made one at a time (an API instance, a worker and the active
scheduler killed, Redis restarted, PostgreSQL stopped), and what was answered is then counted
against what the database, the MCP fixture and the receiver hold.

Run it with ``scripts/drill [--quick]``; ``tests/drills/test_cluster.py`` runs the quick one.
"""
