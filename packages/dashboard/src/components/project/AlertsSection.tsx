import type { AlertDelivery, AlertRule, CreateAlertRuleBody, CreatedWebhook, Webhook } from "@sdk/protocol";
import { useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Empty, Loading } from "../Feedback.tsx";
import { Form } from "../Form.tsx";
import { SecretValue } from "../SecretValue.tsx";
import { RelativeTime } from "../Time.tsx";

const describeRule = (r: AlertRule) =>
  r.kind === "device_offline"
    ? `A device offline for ${r.minutes} min (then back online)`
    : r.kind === "script_errors"
      ? `${r.count} script failures within ${r.windowMinutes} min on one device`
      : "A deployment failed or was rolled back";

const kinds = [
  { value: "device_offline", label: "Device offline" },
  { value: "deployment", label: "Deployment failed or rolled back" },
  { value: "script_errors", label: "Script errors above a rate" },
] as const;

function ruleBody(values: {
  kind: string;
  minutes: string;
  count: string;
  window: string;
}): CreateAlertRuleBody {
  const n = (v: string, fallback: number) => (v.trim() === "" ? fallback : Number(v));
  if (values.kind === "device_offline") return { kind: "device_offline", minutes: n(values.minutes, 10) };
  if (values.kind === "script_errors")
    return { kind: "script_errors", count: n(values.count, 10), windowMinutes: n(values.window, 5) };
  return { kind: "deployment" };
}

function RulesPart({ projectId }: { projectId: string }) {
  const rules = useLoad(() => api.listAlertRules({ params: { projectId } }), [projectId]);
  return (
    <>
      <h3>Rules</h3>
      {rules.status === "loading" && <Loading what="alert rules" />}
      {rules.status === "error" && <ErrorMessage error={rules.error} onRetry={rules.reload} />}
      {rules.status === "ready" &&
        (rules.data.length === 0 ? (
          <Empty title="No alert rules">Add one below to be told when something needs you.</Empty>
        ) : (
          <DataTable caption="Alert rules" columns={["Alerts on", "Added"]} actions>
            {rules.data.map((rule) => (
              <tr key={rule.id}>
                <td data-label="Alerts on">{describeRule(rule)}</td>
                <td data-label="Added">
                  <RelativeTime iso={rule.createdAt} />
                </td>
                <td data-label="Actions" className="actions">
                  <ConfirmButton
                    label="Remove"
                    ariaLabel={`Remove the rule: ${describeRule(rule)}`}
                    title="Remove this alert rule?"
                    confirmLabel="Remove rule"
                    onConfirm={async () => {
                      await api.deleteAlertRule({ params: { projectId, ruleId: rule.id } });
                      rules.setData((list) => list.filter((r) => r.id !== rule.id));
                    }}
                  >
                    {describeRule(rule)} will no longer raise alerts.
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </DataTable>
        ))}
      <Form
        title="Add a rule"
        titleLevel={3}
        fields={[
          { name: "kind", label: "Alert on", type: "select", options: kinds },
          { name: "minutes", label: "Offline minutes", pattern: /\d{1,5}/, placeholder: "10" },
          { name: "count", label: "Failures", pattern: /\d{1,6}/, placeholder: "10" },
          { name: "window", label: "Within minutes", pattern: /\d{1,5}/, placeholder: "5" },
        ]}
        note={
          <>
            Offline minutes apply to “Device offline” (a device back sooner raises nothing); failures and
            minutes to “Script errors”. Each episode alerts once.
          </>
        }
        noteFor="kind"
        submitLabel="Add rule"
        busyLabel="Adding…"
        onSubmit={async (values) => {
          const rule = await api.createAlertRule({ params: { projectId }, body: ruleBody(values) });
          rules.setData((list) => [...list, rule]);
        }}
      />
    </>
  );
}

function TestButton({
  projectId,
  webhook,
  onSent,
}: {
  projectId: string;
  webhook: Webhook;
  onSent: () => void;
}) {
  const send = useAction(() => api.testWebhook({ params: { projectId, webhookId: webhook.id } }));
  const [outcome, setOutcome] = useState<AlertDelivery | null>(null);
  const last = outcome?.attempts.at(-1);
  return (
    <>
      <button
        type="button"
        className="button-small"
        disabled={send.busy}
        aria-label={`Send a test to ${webhook.name}`}
        onClick={async () => {
          const delivery = await send.run();
          if (delivery) {
            setOutcome(delivery);
            onSent();
          }
        }}
      >
        {send.busy ? "Sending…" : "Send a test"}
      </button>
      <span role="status" className="small">
        {outcome &&
          (outcome.status === "delivered"
            ? `Delivered (${last?.status}).`
            : `Not delivered: ${last?.error ?? "no answer"}. It will be retried.`)}
      </span>
      {send.error !== null && <ErrorMessage error={send.error} />}
    </>
  );
}

function WebhooksPart({ projectId, onSent }: { projectId: string; onSent: () => void }) {
  const webhooks = useLoad(() => api.listWebhooks({ params: { projectId } }), [projectId]);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  return (
    <>
      <h3>Webhooks</h3>
      <p className="muted">
        Every alert is sent to each webhook as a JSON POST signed with <code>X-Sdk-Signature: sha256=…</code>{" "}
        (HMAC-SHA256 of the timestamp header, a dot and the body, with the webhook's secret; see the API docs,
        “Alerts and webhooks”).
      </p>
      {created && (
        <div className="callout" data-testid="created-webhook">
          <p className="callout-warning">
            <strong>Copy the signing secret of “{created.name}” now: it is shown only this once.</strong>
          </p>
          <SecretValue label="Signing secret" value={created.secret} testId="webhook-secret" />
          <button type="button" className="button-small" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
      {webhooks.status === "loading" && <Loading what="webhooks" />}
      {webhooks.status === "error" && <ErrorMessage error={webhooks.error} onRetry={webhooks.reload} />}
      {webhooks.status === "ready" &&
        (webhooks.data.length === 0 ? (
          <Empty title="No webhooks">Alerts are delivered to the URLs you add here.</Empty>
        ) : (
          <DataTable caption="Webhooks" columns={["Name", "URL"]} actions>
            {webhooks.data.map((webhook) => (
              <tr key={webhook.id}>
                <td data-label="Name">{webhook.name}</td>
                <td data-label="URL">
                  <code className="wrap">{webhook.url}</code>
                </td>
                <td data-label="Actions" className="actions">
                  <TestButton projectId={projectId} webhook={webhook} onSent={onSent} />
                  <ConfirmButton
                    label="Remove"
                    ariaLabel={`Remove the webhook ${webhook.name}`}
                    title={`Remove the webhook ${webhook.name}?`}
                    confirmLabel="Remove webhook"
                    onConfirm={async () => {
                      await api.deleteWebhook({ params: { projectId, webhookId: webhook.id } });
                      webhooks.setData((list) => list.filter((w) => w.id !== webhook.id));
                      onSent();
                    }}
                  >
                    Its pending deliveries and its delivery log are removed too.
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </DataTable>
        ))}
      <Form
        title="Add a webhook"
        titleLevel={3}
        fields={[
          {
            name: "url",
            label: "Webhook URL",
            required: true,
            maxLength: 2048,
            placeholder: "https://",
            code: true,
            grow: true,
          },
          { name: "name", label: "Webhook name", maxLength: 100, placeholder: "ops chat" },
        ]}
        submitLabel="Add webhook"
        busyLabel="Adding…"
        clearOnSuccess={["url", "name"]}
        onSubmit={async ({ url, name }) => {
          const webhook = await api.createWebhook({
            params: { projectId },
            body: { url, ...(name.trim() ? { name: name.trim() } : {}) },
          });
          setCreated(webhook);
          webhooks.setData((list) => [...list, webhook]);
        }}
      />
    </>
  );
}

function DeliveriesPart({ projectId, reloadKey }: { projectId: string; reloadKey: number }) {
  const deliveries = useLoad(
    () => api.listAlertDeliveries({ params: { projectId }, query: { limit: 50 } }),
    [projectId, reloadKey],
  );
  return (
    <>
      <h3>Deliveries</h3>
      <button type="button" className="button-small" onClick={() => void deliveries.reload()}>
        Refresh
      </button>
      {deliveries.status === "loading" && <Loading what="deliveries" />}
      {deliveries.status === "error" && <ErrorMessage error={deliveries.error} onRetry={deliveries.reload} />}
      {deliveries.status === "ready" &&
        (deliveries.data.length === 0 ? (
          <Empty title="No deliveries yet">Alerts sent to your webhooks, and every attempt, show here.</Empty>
        ) : (
          <DataTable
            caption="Webhook deliveries"
            columns={["Sent", "Alert", "Status", "Attempts", "Last error"]}
          >
            {deliveries.data.map((d) => (
              <tr key={d.id} data-testid="delivery">
                <td data-label="Sent">
                  <RelativeTime iso={d.createdAt} />
                </td>
                <td data-label="Alert">
                  <code>{d.type}</code>
                </td>
                <td data-label="Status">{d.status}</td>
                <td data-label="Attempts">
                  {d.attempts.map((a) => (a.status === null ? "✗" : String(a.status))).join(" → ") || "—"}
                </td>
                <td data-label="Last error">{d.attempts.at(-1)?.error ?? ""}</td>
              </tr>
            ))}
          </DataTable>
        ))}
    </>
  );
}

/** The project's alerts: rules, the webhooks they go to (secret shown once, a test button) and the delivery log. */
export function AlertsSection({ projectId }: { projectId: string }) {
  const [sent, setSent] = useState(0);
  return (
    <section className="card section" aria-labelledby="alerts-title">
      <h2 id="alerts-title">Alerts</h2>
      <div className="alerts-part">
        <RulesPart projectId={projectId} />
      </div>
      <div className="alerts-part">
        <WebhooksPart projectId={projectId} onSent={() => setSent((n) => n + 1)} />
      </div>
      <div className="alerts-part">
        <DeliveriesPart projectId={projectId} reloadKey={sent} />
      </div>
    </section>
  );
}
