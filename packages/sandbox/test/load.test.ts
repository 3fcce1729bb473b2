import assert from "node:assert/strict";
import { test } from "node:test";
import { ProjectSandbox, ScriptLoadError, scriptTimeoutMessage } from "../src/index.ts";
import { bundle, handWritten, load, RecordingHost } from "./helpers.ts";

const loading = (bundleText: string, loadTimeoutMs = 1000) =>
  ProjectSandbox.load({
    projectId: "p1",
    bundle: bundleText,
    env: {},
    host: new RecordingHost(),
    limits: { loadTimeoutMs },
  });

test("a bundle that does not load is refused with ScriptLoadError", async () => {
  await assert.rejects(loading("export default {"), (e: Error) => {
    assert.ok(e instanceof ScriptLoadError);
    assert.match(e.message, /^SyntaxError: /);
    return true;
  });
  await assert.rejects(
    loading(
      await bundle(`import { DeviceScript } from "@sdk/device";
throw new Error("broken at the top");
export default class S extends DeviceScript {}`),
    ),
    (e: Error) => e instanceof ScriptLoadError && /^Error: broken at the top/.test(e.message),
  );
  await assert.rejects(
    loading(await bundle(`export default class NotAScript {}`)),
    (e: Error) =>
      e instanceof ScriptLoadError &&
      /default export must be a class that extends DeviceScript/.test(e.message),
  );
  await assert.rejects(
    loading("export default {};"),
    new ScriptLoadError("the bundle was not built by `sdk build` (its entry points are missing)"),
  );
  await assert.rejects(
    loading(handWritten("", "for (;;) {}"), 200),
    new ScriptLoadError(scriptTimeoutMessage),
  );
});

const envScript = `import { DeviceScript } from "@sdk/device";
export default class Env extends DeviceScript {
  onMessage() { console.log(JSON.stringify(this.env), typeof this.env.DEVICE); }
}`;

test("env updates reach every running instance; DEVICE stays", async (t) => {
  const { sandbox, host } = await load(t, await bundle(envScript), { env: { A: "1", B: "2" } });
  sandbox.attach("d1", "pico_w");
  sandbox.attach("d2", "pico_w");
  sandbox.deliver("d1", {});
  sandbox.setEnv({ A: "3" });
  sandbox.deliver("d1", {});
  sandbox.deliver("d2", {});
  sandbox.attach("d3", "pico_w");
  sandbox.deliver("d3", {});
  assert.deepEqual(host.messages, [
    `{"A":"1","B":"2"} object`,
    `{"A":"3"} object`,
    `{"A":"3"} object`,
    `{"A":"3"} object`,
  ]);
});

const docsScript = `import { DeviceScript, SdkError } from "@sdk/device";
export default class Docs extends DeviceScript {
  onMessage() {
    try { this.env.DEVICE.gpioWrite(23 as never, 1); }
    catch (e) { console.log((e as SdkError).code, (e as SdkError).docs); }
  }
}`;

test("SdkError.docs is absolute under the server's base URL, and only the path without one", async (t) => {
  const withBase = await load(t, await bundle(docsScript), { docsBaseUrl: "https://sdk.example.com/" });
  const without = await load(t, await bundle(docsScript));
  for (const { sandbox } of [withBase, without]) {
    sandbox.attach("d1", "pico_w");
    sandbox.deliver("d1", {});
  }
  assert.deepEqual(withBase.host.messages, [
    "invalid_argument https://sdk.example.com/docs/errors#invalid_argument",
  ]);
  assert.deepEqual(without.host.messages, ["invalid_argument /docs/errors#invalid_argument"]);
});
