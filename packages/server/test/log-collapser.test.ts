import assert from "node:assert/strict";
import { test } from "node:test";
import { LogCollapser } from "../src/scripts/log-collapser.ts";

test("the tracked-lines cap is per project: one project's many distinct lines do not stop another's repeats collapsing", (t) => {
  const repeats = new LogCollapser({ windowMs: 60_000, keep: 1, maxKeys: 3 });
  t.after(() => repeats.clear());
  const summaries: string[] = [];
  // Project a fills its share with distinct lines; more of its lines are written untracked.
  for (let i = 0; i < 5; i++)
    assert.equal(
      repeats.admit(`a line ${i}`, () => {}, "a"),
      true,
    );
  assert.equal(
    repeats.admit("a line 4", () => {}, "a"),
    true,
    "past the cap, lines are written as they come",
  );
  // Project b's repeats still collapse.
  assert.equal(
    repeats.admit("b same", (s) => summaries.push(`b same${s}`), "b"),
    true,
  );
  assert.equal(
    repeats.admit("b same", (s) => summaries.push(`b same${s}`), "b"),
    false,
  );
  assert.equal(
    repeats.admit("b same", (s) => summaries.push(`b same${s}`), "b"),
    false,
  );
  repeats.flush();
  assert.deepEqual(summaries, ["b same (repeated 2 more times in the last 60 s)"]);
});
