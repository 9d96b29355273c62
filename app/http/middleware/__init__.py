"""The ASGI layers around every route: the client's address, request ids, CORS and the access log."""
