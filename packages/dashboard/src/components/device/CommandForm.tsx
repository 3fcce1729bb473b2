import { type CommandType, commandSchemas, commandTypes, describeIssues } from "@sdk/protocol";
import { api } from "../../api.ts";
import { Form } from "../Form.tsx";
import { parseJsonObject } from "./json-object.ts";

const examples: Partial<Record<CommandType, string>> = {
  gpio_write: '{ "pin": "LED", "value": 1 }',
  gpio_read: '{ "pin": 15 }',
  gpio_toggle: '{ "pin": "LED" }',
  pin_mode: '{ "pin": 15, "mode": "input", "pull": "up" }',
  gpio_watch: '{ "pin": 15, "edge": "both", "debounceMs": 20 }',
  pwm: '{ "pin": 2, "frequency": 1000, "duty": 0.5 }',
  adc_read: '{ "pin": 26 }',
  temperature_read: "{}",
};

/** The arguments as the command's schema in @sdk/protocol accepts them, or what is wrong. */
function parseArgs(type: string, text: string): Record<string, unknown> | string {
  const value = parseJsonObject(text, "arguments", '{ "pin": 15 }');
  if (typeof value === "string") return value;
  const schema = commandSchemas[type as CommandType];
  if (!schema) return `Unknown command ${type}.`;
  const parsed = schema.safeParse(value);
  if (parsed.success) return value;
  return describeIssues(parsed.error.issues, "arguments", value)
    .map((f) => `${f.path}: ${f.message}`)
    .join("; ");
}

/** Sends one raw command to the board (as a script's DEVICE methods do) and shows its answer. */
export function CommandForm({ projectId, deviceId }: { projectId: string; deviceId: string }) {
  return (
    <section className="card section" aria-labelledby="command-title">
      <h2 id="command-title">Send a command to the board</h2>
      <Form
        layout="stacked"
        className="form"
        fields={[
          {
            name: "type",
            label: "Command",
            type: "select",
            options: commandTypes.map((t) => ({ value: t, label: t })),
            initial: "gpio_write",
          },
          {
            name: "args",
            label: "Arguments (JSON)",
            type: "textarea",
            rows: 3,
            code: true,
            initial: examples.gpio_write,
            hint: (
              <>
                For example <code>{examples.gpio_read}</code> for <code>gpio_read</code>. The arguments of
                every command are in the{" "}
                <a href="/docs/protocol" target="_blank" rel="noreferrer">
                  device protocol
                </a>
                .
              </>
            ),
            validate: (text, values) => {
              const args = parseArgs(values.type, text);
              return typeof args === "string" ? args : null;
            },
          },
        ]}
        submitLabel="Send command"
        busyLabel="Waiting for the board…"
        onSubmit={async ({ type, args }) => {
          const body = { type, args: parseArgs(type, args) as Record<string, unknown> };
          const answer = await api.sendDeviceCommand({ params: { projectId, deviceId }, body });
          return `${type} answered: ${JSON.stringify(answer.value)}`;
        }}
      />
    </section>
  );
}
