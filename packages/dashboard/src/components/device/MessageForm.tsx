import type { EndpointBody } from "@sdk/protocol";
import { api } from "../../api.ts";
import { Form } from "../Form.tsx";

type Message = EndpointBody<"sendDeviceMessage">;

/** Reads the text as a message object, or says what is wrong with it. */
function parseMessage(text: string): Message | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'This is not valid JSON. Example: {"type": "set_led", "on": true}';
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return 'The message must be a JSON object, like {"type": "ping"}.';
  if (typeof (value as { type?: unknown }).type !== "string")
    return 'The message needs a "type" (lower_snake_case text).';
  return value as Message;
}

/** Sends a message to the device's script; it arrives in onMessage. */
export function MessageForm({ projectId, deviceId }: { projectId: string; deviceId: string }) {
  return (
    <section className="card section" aria-labelledby="message-title">
      <h2 id="message-title">Send a message to the script</h2>
      <Form
        layout="stacked"
        className="form"
        fields={[
          {
            name: "text",
            label: "Message (JSON)",
            type: "textarea",
            rows: 4,
            code: true,
            initial: '{\n  "type": "ping"\n}',
            hint: (
              <>
                An object with a lower_snake_case <code>type</code> and any other fields. The script receives
                it in <code>onMessage</code>.
              </>
            ),
            validate: (text) => {
              const message = parseMessage(text);
              return typeof message === "string" ? message : null;
            },
          },
        ]}
        submitLabel="Send message"
        busyLabel="Sending…"
        onSubmit={async ({ text }) => {
          const message = parseMessage(text) as Message;
          await api.sendDeviceMessage({ params: { projectId, deviceId }, body: message });
          return `Delivered “${message.type}” to the script.`;
        }}
      />
    </section>
  );
}
