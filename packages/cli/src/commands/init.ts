import fs from "node:fs/promises";
import path from "node:path";
import { writeScriptTypes } from "@sdk/build";
import { recordingsDir } from "@sdk/protocol";
import { type Board, boardIds } from "@sdk/protocol/hardware";
import type { Command } from "../command.ts";
import { connect } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import { ask, isInteractive } from "../prompt.ts";
import { templates } from "../templates.ts";

const defaultBoard: Board = "pico_w";
const otherBoards = boardIds.filter((b) => b !== defaultBoard);

const isBoard = (value: string): value is Board => (boardIds as string[]).includes(value);

async function exists(file: string) {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

export const init: Command = {
  name: "init",
  summary: "Scaffold a project (script, sdk.ts, agent files) and link it to a server project",
  usage: `sdk init [directory] [--name <name>] [--board ${boardIds.join("|")}] [--project prj_…] [--no-link]`,
  details:
    "Writes AGENTS.md, .cursor/rules/sdk.mdc, .mcp.json, README.md, sdk.ts, src/index.ts (a working example), package.json, tsconfig.json, .gitignore, test/recordings/example.jsonl (a recorded session sdk test replays) and .github/workflows/sdk-test.yml (sdk test in CI), and the @sdk/device types into .sdk/types (for editors; sdk build and sdk dev refresh them). Existing files are never overwritten without asking (without a terminal they are kept). When you are logged in, a server project is created (or --project is used) and written into sdk.ts.",
  options: { name: { type: "string" }, board: { type: "string" }, "no-link": { type: "boolean" } },
  optionHelp: [
    "--name <name>      the project's name (default: the directory's name)",
    `--board <board>    ${defaultBoard} (default) or ${otherBoards.join(" or ")}`,
    "--project <id>     link an existing server project instead of creating one",
    "--no-link          do not create or link a server project",
  ],
  json: true,
  async run({ args, values, g }) {
    if (args.length > 1) throw new UsageError("Give at most one directory", "init");
    const dir = path.resolve(g.dir, args[0] ?? ".");
    const board = (values.board as string | undefined) ?? defaultBoard;
    if (!isBoard(board)) throw new UsageError(`--board must be ${boardIds.join(" or ")}`, "init");
    const name = (values.name as string | undefined) ?? path.basename(dir);
    await fs.mkdir(dir, { recursive: true });

    let projectId: string | null = g.project ?? null;
    let host: string | null = null;
    if (!values["no-link"]) {
      try {
        const conn = await connect(g);
        host = conn.host;
        if (projectId) await conn.client.api.getProject({ params: { projectId } });
        else {
          g.out.step(`Creating project "${name}" on ${conn.host}`);
          projectId = (await conn.client.api.createProject({ body: { name } })).id;
        }
      } catch (error) {
        if (g.project || !(error instanceof CliError) || !/Not logged in/.test(error.message)) throw error;
        g.out.warn(
          "Not logged in: the project is not linked to a server yet. After `sdk login`, run `sdk init` again or set project in sdk.ts.",
        );
      }
    }

    const written: string[] = [];
    const kept: string[] = [];
    const example = `${recordingsDir}/example.jsonl`;
    let exampleLeftOut = false;
    for (const [file, render] of Object.entries(templates)) {
      const target = path.join(dir, file);
      // The example is a session of the template's script: only beside the script written now.
      if (file === example && !written.includes("src/index.ts")) {
        exampleLeftOut = !(await exists(target));
        if (!exampleLeftOut) kept.push(file);
        continue;
      }
      if (await exists(target)) {
        const overwrite =
          isInteractive() &&
          !g.out.json &&
          /^y(es)?$/i.test((await ask(`${file} exists. Overwrite? [y/N] `)).trim());
        if (!overwrite) {
          kept.push(file);
          continue;
        }
      }
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.writeFile(target, render({ name, board, projectId, host }));
      written.push(file);
    }
    await writeScriptTypes(dir);
    g.out.result({ dir, projectId, host, board, written, kept });
    g.out.line(
      `${g.out.green("✔")} ${written.length} file${written.length === 1 ? "" : "s"} written in ${dir}`,
    );
    for (const file of written) g.out.line(`  ${g.out.dim("+")} ${file}`);
    for (const file of kept) g.out.line(`  ${g.out.dim("=")} ${file} ${g.out.dim("(kept)")}`);
    if (projectId) g.out.line(`Linked to project ${g.out.bold(projectId)}${host ? ` on ${host}` : ""}.`);
    if (exampleLeftOut)
      g.out.line(
        g.out.dim(
          `${example} not written: it is a session of the template's src/index.ts, and yours was kept (record your own with sdk record or sdk dev --record)`,
        ),
      );
    if (written.includes(example))
      g.out.line(
        `${recordingsDir}/example.jsonl is a recorded session: ${g.out.cyan("sdk test")} replays it against the script (in CI too: .github/workflows/sdk-test.yml).`,
      );
    g.out.line(
      `Next: ${g.out.cyan("sdk dev")} to try it on a simulated board, or ${g.out.cyan("sdk deploy")}.`,
    );
    return 0;
  },
};
