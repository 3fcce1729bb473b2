// Every TypeScript example in README.md and docs/*.md runs as written: each device script (a block
// opening with `// src/index.ts`, with the `// sdk.ts` block after it) is built with @sdk/build
// (type-checked), deployed to a real server and run for a simulated board; pressing the inputs the
// script watches must give each declared entity a value. A block that is not a whole script says so
// with `<!-- example: fragment (why) -->` on the line before its fence.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "@sdk/build";
import { docsDirUrl } from "@sdk/docs";
import { SimulatedDevice } from "@sdk/simulator";
import { startTestServer, tempDir, waitUntil } from "@sdk/test-helpers";

const root = fileURLToPath(new URL("../", import.meta.url));
const fragmentMark = /^<!-- example: fragment \(.+\) -->$/;

interface Block {
  file: string;
  line: number;
  code: string;
  fragment: boolean;
}

/** The `ts` fenced blocks of a Markdown file, with whether the line before marks a fragment. */
function tsBlocks(file: string): Block[] {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === "```");
    if (open[2] === "ts" || open[2] === "typescript") {
      let before = i - 1;
      while (before >= 0 && lines[before]!.trim() === "") before--;
      blocks.push({
        file: path.relative(root, file),
        line: i + 1,
        code: lines.slice(i + 1, end).join("\n"),
        fragment: fragmentMark.test(lines[before]?.trim() ?? ""),
      });
    }
    i = end;
  }
  return blocks;
}

interface Example {
  where: string;
  script: string;
  config: string;
}

function examples(): { runnable: Example[]; fragments: Block[]; unmarked: Block[] } {
  const docsDir = fileURLToPath(docsDirUrl);
  const files = [
    path.join(root, "README.md"),
    ...fs
      .readdirSync(docsDir)
      .filter((f) => f.endsWith(".md"))
      .sort()
      .map((f) => path.join(docsDir, f)),
  ];
  const runnable: Example[] = [];
  const fragments: Block[] = [];
  const unmarked: Block[] = [];
  for (const file of files) {
    const blocks = tsBlocks(file);
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i]!;
      if (block.fragment) fragments.push(block);
      else if (block.code.startsWith("// src/index.ts")) {
        const config = blocks[i + 1];
        if (!config?.code.startsWith("// sdk.ts") || config.fragment) unmarked.push(block);
        else {
          runnable.push({ where: `${block.file}:${block.line}`, script: block.code, config: config.code });
          i++;
        }
      } else unmarked.push(block);
    }
  }
  return { runnable, fragments, unmarked };
}

const found = examples();

test("every TypeScript block in README.md and docs/ is a runnable script or marked as a fragment", () => {
  assert.deepEqual(
    found.unmarked.map((b) => `${b.file}:${b.line}`),
    [],
    "make these whole scripts (// src/index.ts then // sdk.ts) or mark them <!-- example: fragment (why) -->",
  );
  assert.ok(found.runnable.length >= 2, "the README's and the scripts guide's first scripts are found");
  assert.ok(found.fragments.length <= 3, "fragments stay the exception");
});

for (const example of found.runnable) {
  test(`${example.where}: builds, type-checks and behaves on a simulated board`, async (t) => {
    const s = await startTestServer(t);
    const { client } = await s.user();
    const project = await client.api.createProject({ body: { name: "examples" } });

    const dir = tempDir(t, "sdk-example-");
    fs.mkdirSync(path.join(dir, "src"));
    fs.writeFileSync(path.join(dir, "src", "index.ts"), example.script);
    // The one placeholder a reader fills in: their project id.
    fs.writeFileSync(path.join(dir, "sdk.ts"), example.config.replaceAll("prj_…", project.id));
    const built = await build({ projectDir: dir });
    assert.ok(
      built.ok,
      `build failed:\n${built.ok ? "" : built.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`).join("\n")}`,
    );
    const entities = built.manifest.entities.map((e) => e.id);

    // Env vars the script's type names (DeviceScript<{ NAME: string }>) are set, as the guide says to.
    for (const name of example.script
      .match(/DeviceScript<\{([^}]*)\}>/)?.[1]
      ?.match(/\b[A-Z][A-Z0-9_]*\b/g) ?? [])
      await client.api.setEnvVar({ params: { projectId: project.id, name }, body: { value: "test" } });

    const deployment = await client.api.createDeployment({
      params: { projectId: project.id },
      body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
    });
    assert.equal(deployment.status, "active", `deployment: ${deployment.error}`);

    const { device, credentials } = await client.api.createDevice({
      params: { projectId: project.id },
      body: { name: "board", board: built.manifest.board },
    });
    const sim = new SimulatedDevice({
      server: new URL(s.url).host,
      deviceId: device.id,
      secret: credentials.secret,
      board: built.manifest.board,
      reconnect: false,
    });
    t.after(() => sim.stop());
    sim.start();
    await sim.waitFor("connected", 10_000);

    const params = { projectId: project.id, deviceId: device.id };
    const problems = async () =>
      (await client.api.listDeviceLogs({ params, query: { limit: 200 } }))
        .filter((l) => l.source === "script" && (l.level === "error" || l.level === "warn"))
        .map((l) => l.message);

    // onDeviceConnect ran to its end: the inputs it watches are watched, the LED it blinks blinks.
    const blinks = /gpioToggle\(OnboardLED/.test(example.script);
    const watches = /watchPin\(/.test(example.script);
    await sim.waitFor(
      () => (!blinks || sim.ledHistory.length >= 2) && (!watches || sim.commandsOf("gpio_watch").length > 0),
      10_000,
    );
    assert.deepEqual(await problems(), [], "no script errors after onDeviceConnect");

    const handlesGpio = /gpio_change/.test(example.script);
    if (handlesGpio)
      assert.ok(watches, "a script that handles gpio_change must watch a pin, or the handler never runs");

    // Press each watched input: drive it against its pull, as a button to the other rail does.
    for (const record of sim.commandsOf("gpio_watch")) {
      const pin = Number(record.args.pin);
      const pull = sim.commandsOf("pin_mode").find((c) => Number(c.args.pin) === pin)?.args.pull;
      sim.setInput(pin, pull === "down" ? 1 : 0);
    }
    if (entities.length > 0 && handlesGpio) {
      await waitUntil(
        async () => {
          const state = await client.api.getDeviceState({ params });
          return entities.every((id) => state.some((v) => v.entityId === id));
        },
        10_000,
        `every declared entity (${entities.join(", ")}) has a value after pressing the watched inputs`,
      );
      const state = await client.api.getDeviceState({ params });
      for (const value of state) assert.equal(value.value, true, `${value.entityId} reads "pressed"`);

      // Let go: inputs watched on both edges report the release too.
      const watched = sim.commandsOf("gpio_watch");
      if (watched.every((c) => c.args.edge === "both")) {
        for (const record of watched) sim.setInput(Number(record.args.pin), null);
        await waitUntil(
          async () => (await client.api.getDeviceState({ params })).every((v) => v.value === false),
          10_000,
          "every entity reads false after the inputs are released",
        );
      }
    }
    assert.deepEqual(await problems(), [], "no script errors after the inputs changed");
  });
}
