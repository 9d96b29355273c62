"""The guarded HTTP client: connections only to addresses the target guard checked, dialled pinned.

:mod:`app.net.transport` is the transport that dials only pinned addresses (and tells a
:class:`~app.net.pace.Pace` before each first contact with a host), speaking HTTP/1.1 through
our own exchange (:mod:`app.net.h1`) on sockets :mod:`app.net.dial` opens; :mod:`app.net.warm` dials
connections ahead of need; :mod:`app.net.fetch` fetches one small document (a key document, a
proof of control, a registry page) through the guard within a byte cap and a time budget;
:mod:`app.net.agent` names us in the User-Agent. The probe, the verifier's key fetch, the
registry reader and webhook delivery all connect through this package and nothing else.
"""
