import type { EndpointBody } from "@sdk/protocol";
import { api } from "../../api.ts";
import { Form } from "../Form.tsx";
import { parseJsonObject } from "./json-object.ts";

type Message = EndpointBody<"sendDeviceMessage">;

/** Reads the text as a message object, or says what is wrong with it. */
function parseMessage(text: string): Message | string {
  const value = parseJsonObject(text, "message", '{"type": "ping"}');
  if (typeof value === "string") return value;
  if (typeof value.type !== "string") return 'The message needs a "type" (lower_snake_case text).';
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
