"""The verifier: checks a DSSE envelope of an mcp-sonde statement, offline.

Its Pre-Authentication Encoding (:mod:`.pae`) and canonical form (:mod:`.jcs`) are written apart
from the signer's (:mod:`app.attest.dsse`, :mod:`app.canonical` on the ``rfc8785``
package), so one bug cannot hide in both; tests hold them against each other and against
independent implementations (securesystemslib, Node's crypto with the ``canonicalize``
package). Failure reasons and exit codes: :mod:`.reasons`.
"""
