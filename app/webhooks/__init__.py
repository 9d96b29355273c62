"""Webhook deliveries of monitor alerts: Standard Webhooks signatures, a guarded pinned POST,
retries for 24 h, and the delivery log (see :mod:`app.webhooks.deliver`)."""
