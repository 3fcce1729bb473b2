import type { AlertDelivery, AlertRule, CreateAlertRuleBody } from "@sdk/protocol";
import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { UsageError } from "../errors.ts";
import { localTime } from "../output.ts";

const describeRule = (r: AlertRule) =>
  r.kind === "device_offline"
    ? `a device offline ${r.minutes} min (and back online)`
    : r.kind === "script_errors"
      ? `${r.count} script failures within ${r.windowMinutes} min on one device`
      : "a deployment failed or rolled back";

function whole(raw: string | boolean | undefined, flag: string, usage: string): number {
  const value = Number(raw);
  if (typeof raw !== "string" || !/^\d+$/.test(raw) || value < 1)
    throw new UsageError(`--${flag} must be a whole number of at least 1`, usage);
  return value;
}

export const alertsList: Command = {
  name: "alerts list",
  summary: "List the project's alert rules and webhooks",
  usage: "sdk alerts list [--project prj_…] [--json]",
  details:
    "Alerts are sent to every webhook of the project as a signed JSON POST (see docs/api.md, “Alerts and webhooks”). Webhook secrets are shown only when a webhook is added.",
  json: true,
  async run({ g }) {
    const { client } = await connect(g);
    const id = await projectId(g);
    const [rules, webhooks] = await Promise.all([
      client.api.listAlertRules({ params: { projectId: id } }),
      client.api.listWebhooks({ params: { projectId: id } }),
    ]);
    g.out.result({ projectId: id, rules, webhooks });
    if (rules.length === 0) g.out.line("No alert rules. Add one with: sdk alerts add offline --minutes 10");
    else
      g.out.table(
        ["RULE", "ALERTS ON"],
        rules.map((r) => [r.id, describeRule(r)]),
      );
    g.out.line();
    if (webhooks.length === 0) g.out.line("No webhooks. Add one with: sdk alerts webhooks add https://…");
    else
      g.out.table(
        ["WEBHOOK", "NAME", "URL"],
        webhooks.map((w) => [w.id, w.name, w.url]),
      );
    return 0;
  },
};

const addUsage = "alerts add";
export const alertsAdd: Command = {
  name: "alerts add",
  summary: "Add an alert rule: offline, deployment or script-errors",
  usage:
    "sdk alerts add offline --minutes N | deployment | script-errors --count C --window MINUTES [--project prj_…] [--json]",
  details:
    "offline: a device disconnected N minutes in a row (one alert per episode; a device back within N minutes raises nothing), then a back-online notice. deployment: a deploy that failed to load, or a rollback to an older deployment. script-errors: C uncaught script errors or timeouts on one device within the window (once per burst).",
  options: { minutes: { type: "string" }, count: { type: "string" }, window: { type: "string" } },
  optionHelp: [
    "--minutes N     offline: minutes offline before the alert",
    "--count C       script-errors: failures that raise the alert…",
    "--window M      script-errors: …within this many minutes",
  ],
  json: true,
  async run({ args, values, g }) {
    const [kind] = args;
    let body: CreateAlertRuleBody;
    if (kind === "offline")
      body = { kind: "device_offline", minutes: whole(values.minutes, "minutes", addUsage) };
    else if (kind === "deployment") body = { kind: "deployment" };
    else if (kind === "script-errors")
      body = {
        kind: "script_errors",
        count: whole(values.count, "count", addUsage),
        windowMinutes: whole(values.window, "window", addUsage),
      };
    else throw new UsageError("Which rule? offline, deployment or script-errors", addUsage);
    const { client } = await connect(g);
    const id = await projectId(g);
    const rule = await client.api.createAlertRule({ params: { projectId: id }, body });
    g.out.result(rule);
    g.out.line(`${g.out.green("✔")} ${rule.id}: alerts on ${describeRule(rule)}`);
    return 0;
  },
};

export const alertsRemove: Command = {
  name: "alerts remove",
  summary: "Remove an alert rule (alr_…) or a webhook (whk_…)",
  usage: "sdk alerts remove ID [--project prj_…] [--json]",
  json: true,
  async run({ args, g }) {
    const [target] = args;
    if (!target || args.length > 1)
      throw new UsageError("Which rule or webhook? sdk alerts remove ID", "alerts remove");
    const { client } = await connect(g);
    const id = await projectId(g);
    if (target.startsWith("whk_"))
      await client.api.deleteWebhook({ params: { projectId: id, webhookId: target } });
    else await client.api.deleteAlertRule({ params: { projectId: id, ruleId: target } });
    g.out.result({ projectId: id, id: target, removed: true });
    g.out.line(`${g.out.green("✔")} ${target} removed`);
    return 0;
  },
};

function attemptsText(d: AlertDelivery): string {
  return d.attempts.map((a) => (a.status === null ? "✗" : String(a.status))).join(" → ") || "—";
}

const webhooksUsage = "alerts webhooks";
export const alertsWebhooks: Command = {
  name: "alerts webhooks",
  summary: "Add, remove or test a webhook (add URL | remove whk_… | test whk_…)",
  usage: "sdk alerts webhooks add URL [--name NAME] | remove whk_… | test whk_… [--project prj_…] [--json]",
  details:
    "add prints the webhook's signing secret once: keep it, the server cannot show it again. Receivers check X-Sdk-Signature: sha256=<hex HMAC-SHA256 of '<X-Sdk-Timestamp>.<raw body>' with the secret>, and that the timestamp is recent. test sends a `test` alert now and shows the first attempt; failed attempts are retried with backoff (see sdk alerts deliveries).",
  options: { name: { type: "string" } },
  optionHelp: ["--name NAME     add: a name for the webhook (default: the URL's host)"],
  json: true,
  async run({ args, values, g }) {
    const [action, target] = args;
    if (!action || !target || args.length > 2 || !["add", "remove", "test"].includes(action))
      throw new UsageError("sdk alerts webhooks add URL | remove whk_… | test whk_…", webhooksUsage);
    const { client } = await connect(g);
    const id = await projectId(g);
    if (action === "add") {
      const name = typeof values.name === "string" ? values.name : undefined;
      const created = await client.api.createWebhook({
        params: { projectId: id },
        body: { url: target, name },
      });
      g.out.result(created);
      g.out.line(`${g.out.green("✔")} ${created.id} → ${created.url}`);
      g.out.line(`Signing secret (shown only now): ${g.out.bold(created.secret)}`);
      return 0;
    }
    if (action === "remove") {
      await client.api.deleteWebhook({ params: { projectId: id, webhookId: target } });
      g.out.result({ projectId: id, id: target, removed: true });
      g.out.line(`${g.out.green("✔")} ${target} removed`);
      return 0;
    }
    const delivery = await client.api.testWebhook({ params: { projectId: id, webhookId: target } });
    g.out.result(delivery);
    const last = delivery.attempts.at(-1);
    if (delivery.status === "delivered") g.out.line(`${g.out.green("✔")} delivered (${last?.status})`);
    else
      g.out.line(
        `${g.out.red("✗")} ${last?.error ?? "not delivered"}${delivery.nextAttemptAt ? `; next attempt ${localTime(delivery.nextAttemptAt)}` : ""}`,
      );
    return delivery.status === "delivered" ? 0 : 1;
  },
};

export const alertsDeliveries: Command = {
  name: "alerts deliveries",
  summary: "The webhook delivery log: every alert sent, its attempts and outcome",
  usage: "sdk alerts deliveries [--limit N] [--webhook whk_…] [--project prj_…] [--json]",
  details: "Newest first. The server keeps the newest 500 deliveries of each project.",
  options: { limit: { type: "string" }, webhook: { type: "string" } },
  optionHelp: ["--limit N       how many (default 50)", "--webhook ID    only this webhook's deliveries"],
  json: true,
  async run({ values, g }) {
    const limit = values.limit === undefined ? 50 : whole(values.limit, "limit", "alerts deliveries");
    const { client } = await connect(g);
    const id = await projectId(g);
    const webhookId = typeof values.webhook === "string" ? values.webhook : undefined;
    const deliveries = await client.api.listAlertDeliveries({
      params: { projectId: id },
      query: { limit, webhookId },
    });
    g.out.result({ projectId: id, deliveries });
    if (deliveries.length === 0) {
      g.out.line("No deliveries yet. Send a test with: sdk alerts webhooks test whk_…");
      return 0;
    }
    g.out.table(
      ["TIME", "TYPE", "WEBHOOK", "STATUS", "ATTEMPTS", "LAST ERROR"],
      deliveries.map((d) => [
        localTime(d.createdAt),
        d.type,
        d.webhookId,
        d.status,
        attemptsText(d),
        d.attempts.at(-1)?.error ?? "",
      ]),
    );
    return 0;
  },
};
