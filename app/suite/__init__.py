"""The check suite: one verdict per check of a catalogue kept as data.

The probe (:mod:`app.probe`) observes; this package judges what it observed. Nothing here
opens a socket: every verdict is a pure function of the probe's evidence.
"""
