// Cross-verification with Node's own crypto and the `canonicalize` npm package (RFC 8785), for
// tests/attest/test_node.py. Nothing here comes from mcp-sonde or tools/verify-attestation.mjs.
//
//   node cross.mjs verify INPUT KEYS   INPUT: an envelope, a check answer holding one under "attestation",
//                                      or {"id", "envelope"}; KEYS: a key document. Prints
//                                      {"canonical", "signatures": [{"keyid", "keyid_matches", "verified"}]}:
//                                      whether canonicalize(JSON.parse(payload)) is the payload's bytes, and for
//                                      each signature whether its key's SPKI gives its keyid and whether
//                                      crypto.verify(null, PAE, key, sig) holds.
//   node cross.mjs sign STATEMENT VALID_FROM
//                                      Signs canonicalize(statement) over PAE with a fresh Ed25519 key made
//                                      here; prints {"envelope", "key"}: the envelope and the key's entry
//                                      for a key document (keyid computed here), valid from VALID_FROM.
import { createHash, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";
import { readFileSync } from "node:fs";
import canonicalize from "../../npm/node_modules/canonicalize/lib/canonicalize.js";

const IN_TOTO = "application/vnd.in-toto+json";

function pae(type, body) {
  const kind = Buffer.from(type, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${kind.length} `), kind, Buffer.from(` ${body.length} `), body]);
}

const keyid = (publicKey) =>
  createHash("sha256").update(publicKey.export({ type: "spki", format: "der" })).digest("hex").slice(0, 16);

const [mode, first, second] = process.argv.slice(2);
if (mode === "verify") {
  const input = JSON.parse(readFileSync(first, "utf8"));
  const envelope = input.attestation ?? input.envelope ?? input;
  const keys = JSON.parse(readFileSync(second, "utf8")).keys;
  const payload = Buffer.from(envelope.payload, "base64");
  const canonical = Buffer.from(canonicalize(JSON.parse(payload.toString("utf8"))), "utf8").equals(payload);
  const message = pae(envelope.payloadType, payload);
  const signatures = envelope.signatures.map(({ keyid: named, sig }) => {
    const entry = keys.find((key) => key.keyid === named);
    if (!entry) return { keyid: named, keyid_matches: false, verified: false };
    const publicKey = createPublicKey(entry.public_key);
    return { keyid: named, keyid_matches: keyid(publicKey) === named, verified: verify(null, message, publicKey, Buffer.from(sig, "base64")) };
  });
  process.stdout.write(`${JSON.stringify({ canonical, signatures })}\n`);
} else if (mode === "sign") {
  const payload = Buffer.from(canonicalize(JSON.parse(readFileSync(first, "utf8"))), "utf8");
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const id = keyid(publicKey);
  const sig = sign(null, pae(IN_TOTO, payload), privateKey);
  const envelope = { payloadType: IN_TOTO, payload: payload.toString("base64"), signatures: [{ keyid: id, sig: sig.toString("base64") }] };
  const key = {
    keyid: id, algorithm: "ed25519", public_key: publicKey.export({ type: "spki", format: "pem" }),
    valid_from: second, valid_until: null, revoked: false, revoked_at: null,
  };
  process.stdout.write(`${JSON.stringify({ envelope, key })}\n`);
} else {
  process.stderr.write("usage: node cross.mjs verify INPUT KEYS | sign STATEMENT VALID_FROM\n");
  process.exitCode = 2;
}
