import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { UsageError } from "../errors.ts";
import { localTime } from "../output.ts";
import { ask, isInteractive, readStdin } from "../prompt.ts";

export const envList: Command = {
  name: "env list",
  summary: "List the project's environment variables (values masked)",
  usage: "sdk env list [--show-values] [--project prj_…] [--json]",
  details:
    "Values are masked, as in the dashboard, so that a shared screen or a pasted output does not leak them. With --json the entries have no value field (and valuesShown is false) unless --show-values is given too.",
  options: { "show-values": { type: "boolean" } },
  optionHelp: ["--show-values   print the values (in the table and in --json)"],
  json: true,
  async run({ values, g }) {
    const show = values["show-values"] === true;
    const { client } = await connect(g);
    const id = await projectId(g);
    const vars = await client.api.listEnvVars({ params: { projectId: id } });
    g.out.result({
      projectId: id,
      valuesShown: show,
      env: vars.map((v) => (show ? v : { name: v.name, updatedAt: v.updatedAt })),
    });
    if (vars.length === 0) {
      g.out.line("No environment variables. Set one with: sdk env set NAME [VALUE]");
      return 0;
    }
    g.out.table(
      ["NAME", "VALUE", "UPDATED"],
      vars.map((v) => [v.name, show ? v.value : "••••••••", localTime(v.updatedAt)]),
    );
    if (!show) g.out.line(g.out.dim("Values are masked; sdk env list --show-values prints them."));
    return 0;
  },
};

export const envSet: Command = {
  name: "env set",
  summary: "Set an environment variable (the value is read from stdin when not given)",
  usage: "sdk env set NAME [VALUE] [--project prj_…] [--json]",
  details:
    "Names are upper-case letters, digits and _. Without VALUE, the value is read from standard input (typed without echo on a terminal), so secrets stay out of your shell history. Running scripts see the new value at once in this.env.",
  json: true,
  async run({ args, g }) {
    const [name, value] = args;
    if (!name) throw new UsageError("Which variable? sdk env set NAME [VALUE]", "env set");
    if (args.length > 2) throw new UsageError("Too many arguments: quote a value with spaces", "env set");
    let v = value;
    if (v === undefined) v = isInteractive() ? await ask(`Value for ${name}: `, true) : await readStdin();
    const { client } = await connect(g);
    const id = await projectId(g);
    const saved = await client.api.setEnvVar({ params: { projectId: id, name }, body: { value: v } });
    g.out.result({ projectId: id, name: saved.name, updatedAt: saved.updatedAt });
    g.out.line(`${g.out.green("✔")} ${name} set`);
    return 0;
  },
};

export const envUnset: Command = {
  name: "env unset",
  summary: "Remove an environment variable",
  usage: "sdk env unset NAME [--project prj_…] [--json]",
  json: true,
  async run({ args, g }) {
    const [name] = args;
    if (!name || args.length > 1) throw new UsageError("Which variable? sdk env unset NAME", "env unset");
    const { client } = await connect(g);
    const id = await projectId(g);
    await client.api.unsetEnvVar({ params: { projectId: id, name } });
    g.out.result({ projectId: id, name, removed: true });
    g.out.line(`${g.out.green("✔")} ${name} removed`);
    return 0;
  },
};
