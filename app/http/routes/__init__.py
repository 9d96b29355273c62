"""The API's routes, one module per endpoint group (the check and operations in :mod:`.ops`)."""
