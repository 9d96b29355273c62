"""Signed results: every served full check as an in-toto Statement in a DSSE envelope.

- :mod:`app.attest.statement` builds the statement (subject, predicate type, predicate);
- :mod:`app.attest.dsse` signs its canonical bytes (DSSE's PAE, Ed25519);
- :mod:`app.attest.keyring` holds the keys: the key document, private keys, rotation;
- :mod:`app.attest.signer` puts the three together for the service;
- :mod:`app.attest.verify` checks an envelope with code written apart from the signer's.

The format is documented in ``docs/attestations.md``.
"""
