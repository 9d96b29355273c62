// Canonical form by the `canonicalize` npm package (RFC 8785, Samuel Erdtman's reference
// implementation, pinned in tests/npm), one document a line, for tests/attest/test_node.py.
//
// Each line read is a JSON string literal holding the text of one JSON document (so any document,
// whitespace and all, fits on one ASCII line); each line written is "ok " + canonicalize(JSON.parse(text))
// or "error " + why. canonicalize writes no raw line break (JSON escapes them), so one line answers one.
import { createInterface } from "node:readline";
import canonicalize from "../../npm/node_modules/canonicalize/lib/canonicalize.js";

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  let answer;
  try {
    answer = `ok ${canonicalize(JSON.parse(JSON.parse(line)))}`;
  } catch (error) {
    answer = `error ${String(error.message).replace(/\s+/g, " ")}`;
  }
  process.stdout.write(`${answer}\n`);
}
