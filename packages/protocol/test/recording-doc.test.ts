// The recording example in docs/scripts.md ("Recording a session") is a valid recording.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { docsDirUrl } from "@sdk/docs";
import { RecordingEntry, RecordingHeader } from "../src/index.ts";

test("the recording example in docs/scripts.md parses with RecordingHeader and RecordingEntry", () => {
  const doc = fs.readFileSync(new URL("scripts.md", docsDirUrl), "utf8");
  const block = /<!-- recording example -->\n```jsonl\n([\s\S]*?)\n```/.exec(doc);
  assert.ok(block, "docs/scripts.md has a ```jsonl block after <!-- recording example -->");
  const [header, ...entries] = block[1]!.split("\n").map((line) => JSON.parse(line));
  assert.ok(RecordingHeader.safeParse(header).success, JSON.stringify(header));
  const kinds = new Set<string>();
  let last = 0;
  for (const entry of entries) {
    const parsed = RecordingEntry.safeParse(entry);
    assert.ok(parsed.success, `${JSON.stringify(entry)}: ${parsed.error?.message}`);
    assert.ok(parsed.data.t >= last, "t never goes back");
    last = parsed.data.t;
    kinds.add(parsed.data.kind);
  }
  for (const kind of ["connect", "message", "command", "state", "disconnect"])
    assert.ok(kinds.has(kind), `the example shows a ${kind} entry`);
});
