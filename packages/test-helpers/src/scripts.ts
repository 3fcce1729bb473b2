import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { build } from "@sdk/build";
import type { SdkClient } from "@sdk/client";
import { tempDir } from "./temp.ts";

/** Writes a project (sdk.ts + src/index.ts) to a temp dir and builds it with the real build function. */
export async function buildScript(
  t: TestContext,
  script: string,
  options: {
    board?: "pico_w" | "pico2_w";
    entities?: unknown[];
    skipTypeCheck?: boolean;
    /** More files of the project, by path relative to it (`src/util.ts`). */
    files?: Record<string, string>;
  } = {},
) {
  const dir = tempDir(t, "sdk-project-");
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(
    path.join(dir, "sdk.ts"),
    `import { defineConfig } from "@sdk/device";\nexport default defineConfig(${JSON.stringify({
      board: options.board ?? "pico_w",
      ha: { entities: options.entities ?? [] },
    })});\n`,
  );
  fs.writeFileSync(path.join(dir, "src", "index.ts"), script);
  for (const [file, text] of Object.entries(options.files ?? {}))
    fs.writeFileSync(path.join(dir, file), text);
  const result = await build({ projectDir: dir, skipTypeCheck: options.skipTypeCheck });
  if (!result.ok)
    throw new Error(
      `build failed:\n${result.diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.message}`).join("\n")}`,
    );
  return result;
}

/** Builds a script and deploys it to a project through the REST API. */
export async function deployScript(
  t: TestContext,
  client: SdkClient,
  projectId: string,
  script: string,
  options: Parameters<typeof buildScript>[2] = {},
) {
  const built = await buildScript(t, script, options);
  return client.api.createDeployment({
    params: { projectId },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
}
