import assert from "node:assert/strict";
import { test } from "node:test";
import { ProjectSandbox, ScriptLoadError } from "../src/index.ts";
import { bundle, load, RecordingHost } from "./helpers.ts";

const deep = `import { DeviceScript } from "@sdk/device";
function dive(n: number): number {
  return dive(n + 1) + 1;
}
export default class Deep extends DeviceScript {
  onMessage() { dive(0); }
}`;

/** Calls `fn` with `depth` host frames below it, leaving the guest less of the host's stack. */
function nested<T>(depth: number, fn: () => T): T {
  return depth === 0 ? fn() : nested(depth - 1, fn);
}

test("endless recursion stops the sandbox with 'stack overflow' at the script's line", async (t) => {
  let reason = "";
  const { sandbox, host } = await load(t, await bundle(deep), {
    onFault: (r) => {
      reason = r;
    },
  });
  sandbox.attach("d1", "pico_w");
  assert.equal(sandbox.deliver("d1", { type: "go" }), true);
  assert.equal(sandbox.disposed, true);
  assert.match(reason, /^InternalError: stack overflow\n {4}at dive \(script\.js:\d+/);
  assert.match(reason, /… the line above \d+ more times/, "the repeated frames are one line");
  assert.equal(sandbox.fault, reason);
  assert.match(host.logs.at(-1)!.message, /stack overflow[\s\S]*The project's scripts were stopped\.$/);
});

test("when the host's own stack runs out first, the sandbox stops with a stack overflow, not a host error", async (t) => {
  let reason = "";
  const { sandbox } = await load(t, await bundle(deep), {
    onFault: (r) => {
      reason = r;
    },
  });
  sandbox.attach("d1", "pico_w");
  // Deep enough in the host that V8's stack ends before QuickJS's own limit is reached.
  nested(8000, () => sandbox.deliver("d1", { type: "go" }));
  assert.equal(sandbox.disposed, true);
  assert.match(reason, /stack overflow/);
});

test("recursion at the top level is a load error", async () => {
  const script = await bundle(`import { DeviceScript } from "@sdk/device";
function dive(n: number): number {
  return dive(n + 1) + 1;
}
dive(0);
export default class Deep extends DeviceScript {}`);
  await assert.rejects(
    ProjectSandbox.load({ projectId: "p1", bundle: script, env: {}, host: new RecordingHost() }),
    (e: unknown) => e instanceof ScriptLoadError && /stack overflow/.test(e.message),
  );
});
