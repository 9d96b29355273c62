"""Our HTTP/1.1 client exchange on asyncio (RFC 9112), responses parsed by llhttp through httptools.

It replaces httpx2's transport and httpcore2's pool on the probe's path and on every guarded
fetch: one request at a time per connection (:mod:`.connection`), heads built and tidied in
:mod:`.head`, bodies read as the caller asks (:mod:`.response`), at most a few connections in
all (:mod:`.pool`). It never resolves names or dials by itself (:mod:`app.net.dial` opens its
sockets at pinned addresses) and undoes no content coding (the probe decodes and caps).
"""
