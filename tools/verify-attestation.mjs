#!/usr/bin/env node
// verify-attestation.mjs: check a signed mcp-sonde result offline, with Node.js 20+ and nothing else.
//
//   node tools/verify-attestation.mjs ENVELOPE --keys KEYS.json [--json]
//
// ENVELOPE is a file ("-": standard input) holding exactly one of: a DSSE envelope (an object of exactly
// payloadType, payload and signatures); a GET /v1/attestations/{id} answer (exactly "id" and "envelope",
// a DSSE envelope); a check answer holding a DSSE envelope under "attestation" beside its
// "attestation_id". KEYS.json is the service's key document (/.well-known/mcp-sonde-keys.json) saved to a
// file. Neither is read whole: at most 8 MiB + 1 byte of ENVELOPE and 64 kB + 1 byte of KEYS.json, in
// chunks (more than 8 MiB, or 64 kB, is too large), so that /dev/zero fails at once, in little memory.
// Only node:crypto and node:fs are used; no connection is opened, and no code is shared with mcp-sonde.
//
// The checks run in this order; the first that fails decides the reason and the exit code, which are
// those of `mcp-sonde verify` (app/attest/verify/reasons.py and verifier.py):
//   30 envelope_unreadable       UTF-8 JSON of at most 8 MiB in which no object holds a member twice, of
//                                one of the three shapes above exactly (a record or an envelope with any
//                                other member is none); a base64 payload and non-empty signatures
//   31 payload_type_unexpected   payloadType is application/vnd.in-toto+json
//   32 keys_unavailable          the key document is UTF-8 JSON of at most 64 kB in which no object holds
//                                a member twice, and every entry is valid: keyid = the first 16 hex of
//                                the SHA-256 of the key's SPKI DER, an Ed25519 "PUBLIC KEY" PEM (its
//                                first PEM block), RFC 3339 times (upper-case T and Z), a boolean revoked
//   33 key_unknown               a signature names a listed key (one without a keyid tries every key)
//   34 signature_invalid         ... and verifies with it: Ed25519 over DSSE's PAE
//   35 key_revoked               a verifying key is not revoked (a revoked key verifies nothing)
//   42 id_mismatch               a stored record's id, an answer's attestation_id, is the lower-case hex
//                                SHA-256 of the payload bytes
//   36 payload_duplicate_key     no object of the payload holds a name twice
//   37 payload_not_canonical     the payload is its own canonical form: strings in NFC, then RFC 8785
//                                (a string or name with over 30 combining marks in a row has none)
//   38 statement_invalid         the statement's schema in full: in-toto Statement v1, one subject (name,
//                                sha256 hex digest), mcp-sonde's predicateType, an object predicate
//   39 predicate_invalid         the predicate's shape (below), and observed_at is a real time
//   40 key_not_valid_at_observed_at  valid_from <= observed_at <= valid_until, for a verifying key
//   41 result_mismatch           for a check answer: the statement names a result_sha256, and the answer
//                                without attestation and attestation_id, in NFC and canonical (no string
//                                or name with over 30 combining marks in a row), has that SHA-256;
// and 0 when verified, 2 on a usage error, 1 on an internal fault.
//
// Less than `mcp-sonde verify`, which validates the predicate against its full JSON Schema
// (app/attest/schemas/check-result-v1.schema.json, draft 2020-12): here the predicate has the schema's
// shape (every required key and no other, at every level; each value's JSON type, null where allowed;
// 64-hex digests; the time patterns), not its enums, other patterns, lengths and bounds. NFC and the
// Mark category (\p{M}) are Node's (ICU): for characters newer than the Unicode version of the
// verifier's Python, the two may disagree. Input is read as Python's json reads it, but that no object
// may hold a name twice (see readJson). Text from it is printed as the summary of mcp-sonde verify
// prints it: unprintable characters escaped, backslashes doubled.

import { createHash, createPublicKey, verify as cryptoVerify } from "node:crypto";
import { closeSync, openSync, readSync } from "node:fs";

const FAILURES = { // in the order the checks run
  envelope_unreadable: 30, payload_type_unexpected: 31, keys_unavailable: 32, key_unknown: 33,
  signature_invalid: 34, key_revoked: 35, id_mismatch: 42, payload_duplicate_key: 36, payload_not_canonical: 37,
  statement_invalid: 38, predicate_invalid: 39, key_not_valid_at_observed_at: 40, result_mismatch: 41,
};
const IN_TOTO = "application/vnd.in-toto+json";
const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
const PREDICATE_TYPE =
  "https://github.com/mcp-sonde/mcp-sonde/blob/main/app/attest/schemas/check-result-v1.schema.json";
const MAX_INPUT_BYTES = 8 * 1024 * 1024;
const MAX_KEYS_BYTES = 64 * 1024;
const MAX_DEPTH = 64; // containers nested deeper have no canonical form
const MAX_NESTING = 512; // JSON nested deeper is not read
const MAX_MARKS = 30; // a string with more combining marks in a row has no canonical form
// More than MAX_MARKS characters of General Category Mark in a row: /\p{M}{31,}/u, in the form that
// runs in linear time (that one backtracks over a whole run, and one of millions of marks overflows
// its stack): a run of 31 marks begins the text or follows a character that is not a mark.
const LONG_MARK_RUN = /(?:^|\P{M})\p{M}{31}/u;
const ENVELOPE = ["payloadType", "payload", "signatures"]; // the members of a DSSE envelope, exactly
const EXACT = 2n ** 53n; // integers up to this magnitude are exact doubles
const USAGE = "usage: node verify-attestation.mjs ENVELOPE --keys KEYS.json [--json]";

class Failure extends Error {
  constructor(reason, message) { super(message); this.reason = reason; }
}
class NotCanonical extends Error {}
class DuplicateKey extends Error {}
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }); // a BOM stays, and is not JSON
function decode(bytes) {
  try { return UTF8.decode(bytes); } catch { throw new SyntaxError("not UTF-8"); }
}

// ---- JSON, read as Python's json.loads reads it ---------------------------------------------
// In every document (the input, the key document, the payload) an object holding a name twice is
// refused when it ends (DuplicateKey, as jcs.parse's hook does); the caller names the reason.
// `strict` (the payload): NaN/Infinity have no canonical form; otherwise they are numbers. Integers
// beyond 2**53 stay exact (BigInt). Text nested over 512 levels (counted as app/jsonsafe.py counts,
// before reading) and integers of over 4,300 digits (Python's limit) are not read. Objects have no
// prototype: "__proto__" is a name like any other.
const TOKEN = new RegExp(String.raw`[ \t\n\r]*(?:([{}[\],:])|(")|` + // a string: its opening quote (see next)
  String.raw`(-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)|(null|true|false|NaN|-?Infinity))`, "y");
const WORDS = { null: null, true: true, false: false, NaN, Infinity, "-Infinity": -Infinity };

function tooDeep(text) { // brackets outside strings, as app/jsonsafe.py counts them
  let depth = 0;
  for (let i = 0, inString = false; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if ((c === "[" || c === "{") && ++depth > MAX_NESTING) return true;
    else if (c === "]" || c === "}") depth--;
  }
  return false;
}

function readJson(text, strict = false) {
  if (tooDeep(text)) throw new SyntaxError(`JSON nested deeper than ${MAX_NESTING} levels`);
  TOKEN.lastIndex = 0;
  const next = () => {
    const token = TOKEN.exec(text);
    if (!token) throw new SyntaxError("not JSON");
    if (token[2]) { // a string: scanned here, in one pass (a regular expression could backtrack for ever)
      let end = TOKEN.lastIndex;
      for (let code = text.charCodeAt(end); code !== 0x22; code = text.charCodeAt(end)) {
        if (!(code >= 0x20)) throw new SyntaxError("a control character in a string, or no end to it"); // NaN: the end
        end += code === 0x5c ? 2 : 1; // a backslash and the character it escapes
      }
      token[2] = text.slice(TOKEN.lastIndex - 1, end + 1);
      TOKEN.lastIndex = end + 1;
    }
    return token;
  };
  const take = (punctuation) => { // consume the next token if it is `punctuation`
    const at = TOKEN.lastIndex;
    if (TOKEN.exec(text)?.[1] === punctuation) return true;
    TOKEN.lastIndex = at;
    return false;
  };
  const expect = (punctuation) => { if (!take(punctuation)) throw new SyntaxError(`'${punctuation}' expected`); };
  function value() { // recursive, but never deeper than MAX_NESTING
    const [, punctuation, string, number, fraction, exponent, word] = next();
    if (string) return JSON.parse(string); // JSON's escapes, which are Python's; throws on any other
    if (number && (fraction || exponent)) return Number(number);
    if (number) {
      if (number.replace("-", "").length > 4300) throw new SyntaxError("an integer of more than 4,300 digits");
      const exact = BigInt(number);
      return exact >= -EXACT && exact <= EXACT ? Number(exact) : exact;
    }
    if (word && strict && typeof WORDS[word] === "number") throw new NotCanonical(`${word} is not JSON`);
    if (word) return WORDS[word];
    if (punctuation === "[") {
      const items = [];
      if (take("]")) return items;
      do items.push(value()); while (take(","));
      expect("]");
      return items;
    }
    if (punctuation !== "{") throw new SyntaxError(`unexpected '${punctuation}'`);
    const members = [];
    if (!take("}")) {
      do {
        const name = next()[2];
        if (name === undefined) throw new SyntaxError("a name expected");
        expect(":");
        members.push([JSON.parse(name), value()]);
      } while (take(","));
      expect("}");
    }
    const object = Object.create(null);
    for (const [name, item] of members) {
      if (Object.hasOwn(object, name)) throw new DuplicateKey(name);
      object[name] = item;
    }
    return object;
  }
  const result = value();
  if (!/^[ \t\n\r]*$/.test(text.slice(TOKEN.lastIndex))) throw new SyntaxError("extra data after the JSON value");
  return result;
}

// ---- The canonical form: every string in NFC, then RFC 8785 (JCS) ---------------------------
// `normalise` puts strings in NFC first (a check answer); without it a string not in NFC has no
// canonical form (a payload). JSON.stringify writes strings and numbers as JCS does (section 3.2.2).
function canonical(value, normalise = false, depth = 0) {
  if (value === null || value === true || value === false) return String(value);
  if (typeof value === "string") return canonicalString(value, normalise);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new NotCanonical("NaN or an infinity");
    return JSON.stringify(value); // Number::toString, and -0 is "0"
  }
  if (typeof value === "bigint") { // beyond 2**53, only the integer its double's JCS form spells
    if (JSON.stringify(Number(value)) === value.toString()) return value.toString();
    throw new NotCanonical("an integer beyond 2**53 that is not the JCS form of its double");
  }
  if (depth >= MAX_DEPTH) throw new NotCanonical(`nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, normalise, depth + 1)).join(",")}]`;
  const names = new Map(Object.keys(value).map((name) => [nfc(name), name]));
  if (names.size !== Object.keys(value).length) throw new NotCanonical("two names equal after Unicode NFC");
  const members = [...names.keys()].sort().map((normal) => { // sort(): by UTF-16 code units (section 3.2.3)
    const name = names.get(normal);
    return `${canonicalString(name, normalise)}:${canonical(value[name], normalise, depth + 1)}`;
  });
  return `{${members.join(",")}}`;
}

function canonicalString(text, normalise) {
  if (!text.isWellFormed()) throw new NotCanonical("a lone surrogate");
  const normal = nfc(text);
  if (!normalise && normal !== text) throw new NotCanonical("a string not in Unicode NFC");
  return JSON.stringify(normal);
}

// NFC, of text with no more than 30 combining marks in a row (UAX #15's Stream-Safe bound): a longer
// run has no canonical form, and is refused before normalize(), whose cost grows with its square.
function nfc(text) {
  if (LONG_MARK_RUN.test(text)) throw new NotCanonical(`more than ${MAX_MARKS} combining marks in a row`);
  return text.normalize("NFC");
}

// ---- DSSE: base64 and the Pre-Authentication Encoding ---------------------------------------
function unbase64(value, what) { // standard or URL-safe base64, padding optional (DSSE protocol.md)
  if (typeof value !== "string") throw new Failure("envelope_unreadable", `${what} is not a base64 string`);
  let text = value.replaceAll("-", "+").replaceAll("_", "/");
  text += "=".repeat((4 - (text.length % 4)) % 4);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Failure("envelope_unreadable", `${what} is not base64`);
  return Buffer.from(text, "base64");
}

function pae(type, body) { // "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes
  const kind = Buffer.from(type, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${kind.length} `), kind, Buffer.from(` ${body.length} `), body]);
}

// ---- Times and the key document -------------------------------------------------------------
const RFC3339 = new RegExp("^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\\.([0-9]+))?" +
  "(Z|([+-])([01][0-9]|2[0-3]):([0-5][0-9]))$");

// An RFC 3339 time as microseconds since 1970 and as the summary prints it (Python's isoformat(), with
// "Z" for UTC); null if it is not one, or not a real date and time (no leap second, as in Python).
function readTime(text) {
  const m = typeof text === "string" ? RFC3339.exec(text) : null;
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // a day past the month's end moves the month on
  const real = year >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (!real || hour > 23 || minute > 59 || second > 59) return null;
  const micro = (m[7] ?? "").slice(0, 6).padEnd(6, "0"); // digits beyond microseconds are cut, as in Python
  const offset = m[8] === "Z" ? 0 : (m[9] === "-" ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  const utc = date.getTime() + ((hour * 60 + minute - offset) * 60 + second) * 1000;
  const iso = `${text.slice(0, 19)}${Number(micro) ? `.${micro}` : ""}${offset ? m[8] : "Z"}`;
  return { micros: BigInt(utc) * 1000n + BigInt(micro), iso };
}

function readKeys(raw) {
  const bad = (message) => new Failure("keys_unavailable", `the key document is invalid: ${message}`);
  if (raw.length > MAX_KEYS_BYTES) throw bad(`larger than ${MAX_KEYS_BYTES} bytes`);
  let document;
  try { document = readJson(decode(raw)); } catch (error) {
    if (error instanceof DuplicateKey) throw bad("an object holds a member twice");
    throw error instanceof SyntaxError ? bad("not UTF-8 JSON") : error;
  }
  const entries = isObject(document) ? document.keys : undefined;
  if (!Array.isArray(entries)) throw bad("no keys array");
  const keys = new Map();
  for (const entry of entries) { // one invalid entry spoils all: skipping it could skip a revocation
    if (!isObject(entry)) throw bad("a key is not an object");
    if (entry.algorithm !== "ed25519" || typeof entry.public_key !== "string") {
      throw bad("a key is not an ed25519 key with a public_key");
    }
    // The first PEM block, labelled PUBLIC KEY (a SubjectPublicKeyInfo), in padded standard base64.
    const block = /-----BEGIN ([^-\r\n]*)-----([A-Za-z0-9+/=\s]*)-----END \1-----/.exec(entry.public_key);
    const body = block?.[1] === "PUBLIC KEY" ? block[2].replace(/\s+/g, "") : "";
    let key;
    try {
      if (!body || body.length % 4 || !/^[A-Za-z0-9+/]*={0,2}$/.test(body)) throw new Error("no PUBLIC KEY");
      key = createPublicKey({ key: Buffer.from(body, "base64"), format: "der", type: "spki" });
    } catch {
      throw bad("a public_key is not readable PEM");
    }
    if (key.asymmetricKeyType !== "ed25519") throw bad("a public_key is not Ed25519");
    const der = key.export({ type: "spki", format: "der" });
    const keyid = createHash("sha256").update(der).digest("hex").slice(0, 16);
    if (entry.keyid !== keyid) throw bad(`a keyid is not the SHA-256 prefix of its public key (expected ${keyid})`);
    if (typeof entry.revoked !== "boolean") throw bad(`revoked of ${keyid} is not a boolean`);
    const time = (name, required) => {
      if ((entry[name] ?? null) === null && !required) return null;
      const moment = readTime(entry[name]);
      if (!moment) throw bad(`${name} is not an RFC 3339 time`);
      return moment;
    };
    const listed = { keyid, key, revoked: entry.revoked, from: time("valid_from", true), until: time("valid_until") };
    time("revoked_at"); // must be valid, and says nothing more: a revoked key verifies nothing, whenever it signed
    if (keys.has(keyid)) throw bad(`${keyid} is listed twice`);
    keys.set(keyid, listed);
  }
  return keys;
}

// ---- The statement and the predicate's shape ------------------------------------------------
// A shape is a type name, [the shape of every item], {a closed object: each name's shape}, or orNull(shape).
class OrNull { constructor(shape) { this.shape = shape; } }
const orNull = (shape) => new OrNull(shape);
const TYPES = {
  string: (v) => typeof v === "string", name: (v) => typeof v === "string" && v.length > 0,
  number: (v) => typeof v === "number" || typeof v === "bigint", boolean: (v) => typeof v === "boolean",
  integer: (v) => Number.isInteger(v) || typeof v === "bigint", object: isObject,
  hex: (v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v),
  time: (v) => typeof v === "string" && /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/.test(v),
};
const STATEMENT = {
  _type: "string", subject: [{ name: "name", digest: { sha256: "hex" } }], predicateType: "string", predicate: "object",
};
const PREDICATE = {
  observed_at: "time", run: { started_at: "time", finished_at: "time", duration_ms: "number" },
  probe: { name: "string", version: "string" }, suite: { id: "string", catalogue_sha256: "hex" },
  url: "string", url_query_sha256: orNull("hex"), addresses: ["string"],
  coverage: { level: "string", reason: orNull("string") }, credentialed: "boolean", credential_headers: ["string"],
  status: "string", reason: "string", failed_step: orNull("string"), http_status: orNull("integer"),
  era: orNull("string"), protocol_version: orNull("string"), transport: orNull("string"),
  server: orNull({ name: orNull("string"), version: orNull("string"), title: orNull("string") }),
  tools: orNull({ count: "integer", complete: "boolean" }),
  checks: [{ id: "string", state: "string", reason: orNull("string") }],
  fingerprints: { toolset: orNull("hex"), schema: orNull("hex") },
  subject_digest: "string", result_sha256: orNull("hex"),
};

// Where `value` first departs from `shape`, or null when it has it.
function misfit(value, shape, where) {
  if (shape instanceof OrNull) return value === null ? null : misfit(value, shape.shape, where);
  if (typeof shape === "string") return TYPES[shape](value) ? null : `${where} is not of type ${shape}`;
  const parts = Array.isArray(shape) ? (Array.isArray(value) ? value.map((item, i) => [i, shape[0]]) : null)
    : isObject(value) ? Object.entries(shape) : null;
  if (parts === null) return `${where} is not ${Array.isArray(shape) ? "an array" : "an object"}`;
  if (!Array.isArray(shape)) {
    const extra = Object.keys(value).find((name) => !Object.hasOwn(shape, name));
    if (extra !== undefined) return `${where} holds ${JSON.stringify(extra.slice(0, 80))}, which it may not`;
    const missing = Object.keys(shape).find((name) => !Object.hasOwn(value, name));
    if (missing !== undefined) return `${where} lacks ${missing}`;
  }
  for (const [name, part] of parts) {
    const problem = misfit(value[name], part, `${where}/${name}`);
    if (problem) return problem;
  }
  return null;
}

// ---- Verification, in the order of app/attest/verify/verifier.py ----------------------------
const unreadable = (message) => new Failure("envelope_unreadable", message);
const hasExactly = (value, names) => isObject(value) && Object.keys(value).length === names.length &&
  names.every((name) => Object.hasOwn(value, name));

function bareEnvelope(value, where) {
  if (hasExactly(value, ENVELOPE)) return value;
  throw unreadable(`${where} is not a DSSE envelope (exactly ${ENVELOPE.join(", ")})`);
}

// The envelope, the check answer it came in (or null) and the id given beside it ({ id } or null).
function readInput(raw) {
  if (raw.length > MAX_INPUT_BYTES) throw unreadable(`the input is larger than ${MAX_INPUT_BYTES} bytes`);
  let document;
  try { document = readJson(decode(raw)); } catch (error) {
    if (error instanceof DuplicateKey) throw unreadable("the input holds an object with a member twice");
    throw error instanceof SyntaxError ? unreadable("the input is not UTF-8 JSON") : error;
  }
  if (!isObject(document)) throw unreadable("the input is not a JSON object");
  if (hasExactly(document, ENVELOPE)) return [document, null, null];
  if (hasExactly(document, ["id", "envelope"])) { // GET /v1/attestations/{id}
    return [bareEnvelope(document.envelope, "the record's envelope"), null, { id: document.id }];
  }
  if (Object.hasOwn(document, "attestation")) {
    const envelope = bareEnvelope(document.attestation, "the answer's attestation");
    if (!Object.hasOwn(document, "attestation_id")) throw unreadable("the answer has no attestation_id");
    return [envelope, document, { id: document.attestation_id }];
  }
  throw unreadable("the input is neither a DSSE envelope, a stored record nor a check answer holding one");
}

// A keyid Python counts as false (absent, null, "", false, 0, [], {}) is no keyid, as in mcp-sonde verify.
const noKeyid = (v) => v === undefined || v === null || v === false || v === 0 || v === "" ||
  (typeof v === "object" && Object.keys(v).length === 0);

function signedBy(envelope, loadKeys) {
  const { payloadType: type, signatures } = envelope;
  if (typeof type !== "string" || !Array.isArray(signatures) || signatures.length === 0) {
    throw new Failure("envelope_unreadable", "the envelope needs payloadType, payload and non-empty signatures");
  }
  const payload = unbase64(envelope.payload, "payload");
  if (type !== IN_TOTO) {
    throw new Failure("payload_type_unexpected", `payloadType is ${JSON.stringify(type.slice(0, 80))}, not ${IN_TOTO}`);
  }
  const keys = loadKeys(); // only now: an input that is not an envelope of ours fails as such first
  const message = pae(type, payload);
  let naming = 0; // signatures that name a listed key
  const signers = new Set(); // the keys whose signatures verify, in order
  for (const signature of signatures.slice(0, 16)) {
    if (!isObject(signature)) throw new Failure("envelope_unreadable", "a signature is not an object");
    const sig = unbase64(signature.sig, "a signature");
    const { keyid } = signature;
    const named = typeof keyid === "string" && keys.has(keyid) ? [keys.get(keyid)] : [];
    const candidates = noKeyid(keyid) ? [...keys.values()] : named;
    naming += candidates.length > 0;
    for (const key of candidates) {
      try {
        if (cryptoVerify(null, message, key.key, sig)) signers.add(key);
      } catch { /* a malformed signature verifies nothing */ }
    }
  }
  if (!naming) throw new Failure("key_unknown", "no signature names a key of the key document");
  if (!signers.size) throw new Failure("signature_invalid", "no signature verifies with the key it names");
  return [payload, [...signers]];
}

function verify(raw, loadKeys) {
  const [envelope, answer, claimed] = readInput(raw);
  const [payload, signers] = signedBy(envelope, loadKeys);
  const unrevoked = signers.filter((key) => !key.revoked);
  if (!unrevoked.length) throw new Failure("key_revoked", `the signing key ${signers[0].keyid} is revoked`);
  if (claimed !== null && claimed.id !== createHash("sha256").update(payload).digest("hex")) {
    throw new Failure("id_mismatch", "the attestation id beside the envelope is not the SHA-256 of its payload");
  }
  let statement;
  try {
    statement = readJson(decode(payload), true);
    if (!Buffer.from(canonical(statement), "utf8").equals(payload)) throw new NotCanonical("bytes not their own form");
  } catch (error) {
    if (error instanceof DuplicateKey) {
      const name = JSON.stringify(error.message.slice(0, 80));
      throw new Failure("payload_duplicate_key", `an object of the payload holds the key ${name} twice`);
    }
    if (!(error instanceof NotCanonical || error instanceof SyntaxError)) throw error;
    throw new Failure("payload_not_canonical", `the payload has no canonical form: ${error.message}`);
  }
  const problem = misfit(statement, STATEMENT, "statement") ??
    (statement.subject.length !== 1 ? "statement/subject is not one subject" : null) ??
    (statement._type !== STATEMENT_TYPE ? `_type is not ${STATEMENT_TYPE}` : null) ??
    (statement.predicateType !== PREDICATE_TYPE ? "predicateType is not mcp-sonde's check-result-v1" : null);
  if (problem) throw new Failure("statement_invalid", `the statement does not match its schema: ${problem}`);
  const { predicate } = statement;
  const misfits = misfit(predicate, PREDICATE, "predicate");
  if (misfits) throw new Failure("predicate_invalid", `the predicate does not match its schema: ${misfits}`);
  const observed = readTime(predicate.observed_at);
  if (!observed) throw new Failure("predicate_invalid", "the predicate's observed_at is not a real time");
  const valid = unrevoked.filter((key) => key.from.micros <= observed.micros &&
    (key.until === null || observed.micros <= key.until.micros));
  if (!valid.length) {
    throw new Failure("key_not_valid_at_observed_at", `key ${unrevoked[0].keyid} was not valid at ${observed.iso}`);
  }
  const checked = answer !== null;
  if (checked) {
    if (predicate.result_sha256 === null) {
      const why = "the statement signs no digest of a result, so the answer cannot be matched";
      throw new Failure("result_mismatch", why);
    }
    const entries = Object.entries(answer).filter(([name]) => name !== "attestation" && name !== "attestation_id");
    const result = Object.fromEntries(entries);
    let digest = null; // a result with no canonical form matches no digest
    try { digest = createHash("sha256").update(canonical(result, true), "utf8").digest("hex"); } catch (error) {
      if (!(error instanceof NotCanonical)) throw error;
    }
    if (digest !== predicate.result_sha256) {
      throw new Failure("result_mismatch", "the check answer beside the envelope is not the result it signs");
    }
  }
  return { keys: valid, statement, checked };
}

// ---- The report, as app/attest/verify/summary.py writes it ----------------------------------
function facts({ keys, statement, checked }) {
  const p = statement.predicate;
  return {
    verified: true,
    keys: keys.map((key) => ({ keyid: key.keyid, valid_from: key.from.iso, valid_until: key.until?.iso ?? null })),
    subject: statement.subject[0], url: p.url, url_query_sha256: p.url_query_sha256, observed_at: p.observed_at,
    status: p.status, reason: p.reason, server: p.server, protocol_version: p.protocol_version,
    transport: p.transport, coverage: p.coverage, credentialed: p.credentialed,
    credential_headers: p.credential_headers, checks: p.checks, result_checked: checked, probe: p.probe,
  };
}

// Untrusted text is printed as data. Unprintable is what Python's str.isprintable() refuses:
// Unicode "Other" (controls, format characters, ...) and "Separator" but the space.
const unprintable = (ch) => ch !== " " && /[\p{C}\p{Z}]/u.test(ch);
const hex = (code, digits) => code.toString(16).padStart(digits, "0");

// For the summary: unprintable characters as \uXXXX (\UXXXXXXXX beyond the BMP) and a backslash
// as \\, so that no escape in the text can pass for an escaped character; null is "None".
function safe(value) {
  let out = "";
  for (const ch of value === null ? "None" : String(value)) {
    const code = ch.codePointAt(0);
    out += ch === "\\" ? "\\\\" : !unprintable(ch) ? ch : code <= 0xffff ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
  }
  return out;
}

// For --json: what JSON lets through raw (C1 controls, format characters, ...) as JSON escapes.
function toJson(report) {
  let out = "";
  for (const ch of JSON.stringify(report, null, 2)) { // by code point; a JSON escape per UTF-16 unit
    const escaped = (i) => `\\u${hex(ch.charCodeAt(i), 4)}`;
    out += ch === "\n" || !unprintable(ch) ? ch : ch.length === 1 ? escaped(0) : escaped(0) + escaped(1);
  }
  return out;
}

function describe(report) {
  const { coverage, probe, server } = report;
  const states = new Map();
  for (const check of report.checks) states.set(check.state, (states.get(check.state) ?? 0) + 1);
  const counts = [...states].sort(([a], [b]) => (a < b ? -1 : 1)).map(([state, count]) => `${count} ${safe(state)}`);
  const quoted = (text) => `"${safe(text).replaceAll('"', '\\"')}"`;
  const given = ["name", "version", "title"].filter((label) => (server?.[label] ?? null) !== null);
  const info = given.map((label) => `${label} ${quoted(server[label])}`).join(", ") || "(none given)";
  const lines = [
    `VERIFIED: signed by key ${report.keys.map((key) => key.keyid).join(", ")} (valid at observed_at, not revoked)`,
    `server:       ${safe(report.url)}${report.url_query_sha256 ? "  (query string bound by its SHA-256)" : ""}`,
    ...(server === null ? [] : [`server info:  ${info}  (the server's own words)`]),
    `observed at:  ${report.observed_at} by ${safe(probe.name)} ${safe(probe.version)}`,
    `status:       ${safe(report.status)} (${safe(report.reason)})` +
      (report.protocol_version ? `, ${safe(report.protocol_version)} over ${safe(report.transport)}` : ""),
    `coverage:     ${safe(coverage.level)}${coverage.reason ? ` (${safe(coverage.reason)})` : ""}`,
    report.credentialed
      ? `credentialed: YES, the check ran with the caller's own credentials (${report.credential_headers.map(safe)
        .join(", ")}): what it saw may be visible to that caller only`
      : "credentialed: no",
    `checks:       ${counts.join(", ")}`,
  ];
  for (const { id, state, reason } of report.checks) {
    if (state !== "verified") lines.push(`  ${safe(id)}: ${safe(state)}${reason ? ` (${safe(reason)})` : ""}`);
  }
  if (report.result_checked) lines.push("result:       the check answer beside the envelope is the one signed");
  return lines.join("\n");
}

// ---- The command line -----------------------------------------------------------------------
const CHUNK = 64 * 1024;
const pause = new Int32Array(new SharedArrayBuffer(4)); // to wait on a non-blocking standard input

// At most `limit` + 1 bytes of the file `path` ("-": standard input), read in chunks: one byte more
// than the limit says "too large" (checked by readInput and readKeys), and /dev/zero ends there.
function read(path, limit, reason, what) {
  const chunks = [];
  let fd = null;
  try {
    fd = path === "-" ? 0 : openSync(path, "r");
    for (let total = 0; total <= limit;) {
      const chunk = Buffer.alloc(Math.min(CHUNK, limit + 1 - total));
      let length;
      try { length = readSync(fd, chunk, 0, chunk.length, null); } catch (error) {
        if (error.code !== "EAGAIN") throw error;
        Atomics.wait(pause, 0, 0, 10);
        continue;
      }
      if (length === 0) break;
      chunks.push(chunk.subarray(0, length));
      total += length;
    }
  } catch (error) {
    throw new Failure(reason, `cannot read ${what}${path}: ${error.code ?? error.message}`);
  } finally {
    if (fd !== null && fd !== 0) closeSync(fd);
  }
  return Buffer.concat(chunks);
}

function main(argv) {
  let [envelope, keys, json] = [null, null, false];
  const usage = (message) => { process.stderr.write(`${USAGE}\nverify-attestation: ${message}\n`); return 2; };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") {
      const codes = Object.entries(FAILURES).map(([reason, code]) => `${code} ${reason}`).join(", ");
      process.stdout.write(`${USAGE}\nexit codes: 0 verified; 2 usage; 1 internal fault; ${codes}\n`);
      return 0;
    }
    if (arg === "--json") json = true;
    else if (arg === "--keys" && i + 1 < argv.length) keys = argv[++i];
    else if (arg.startsWith("--keys=")) keys = arg.slice("--keys=".length);
    else if (arg.startsWith("-") && arg !== "-") return usage(`unknown or incomplete option ${safe(arg)}`);
    else if (envelope === null) envelope = arg;
    else return usage("one ENVELOPE only");
  }
  if (envelope === null || !keys) return usage("ENVELOPE and --keys KEYS.json are required");
  try {
    const raw = read(envelope, MAX_INPUT_BYTES, "envelope_unreadable", "");
    const loadKeys = () => readKeys(read(keys, MAX_KEYS_BYTES, "keys_unavailable", "the key document "));
    const report = facts(verify(raw, loadKeys));
    process.stdout.write(`${json ? toJson(report) : describe(report)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    const detail = safe(error.message);
    if (json) process.stdout.write(`${JSON.stringify({ verified: false, reason: error.reason, detail })}\n`);
    process.stderr.write(`NOT VERIFIED (${error.reason}): ${detail}\n`);
    return FAILURES[error.reason];
  }
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`verify-attestation: internal fault: ${safe(error?.stack ?? error)}\n`);
  process.exitCode = 1;
}
