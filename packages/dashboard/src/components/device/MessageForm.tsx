import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Success } from "../Feedback.tsx";

type Message = { type: string } & Record<string, unknown>;

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
  const [text, setText] = useState('{\n  "type": "ping"\n}');
  const [invalid, setInvalid] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const send = useAction(async (message: Message) => {
    await api.sendDeviceMessage({ params: { projectId, deviceId }, body: message });
    setSent(message.type);
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSent(null);
    const message = parseMessage(text);
    if (typeof message === "string") {
      setInvalid(message);
      return;
    }
    setInvalid(null);
    void send.run(message);
  };

  return (
    <section className="card section" aria-labelledby="message-title">
      <h2 id="message-title">Send a message to the script</h2>
      <form className="form" onSubmit={submit}>
        <div className="field">
          <label htmlFor="message-json">Message (JSON)</label>
          <textarea
            id="message-json"
            className="code-input"
            rows={4}
            spellCheck={false}
            aria-describedby="message-hint"
            aria-invalid={invalid ? true : undefined}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
          <p className="hint" id="message-hint">
            An object with a lower_snake_case <code>type</code> and any other fields. The script receives it
            in <code>onMessage</code>.
          </p>
          {invalid && (
            <p className="field-error" role="alert">
              {invalid}
            </p>
          )}
        </div>
        <button type="submit" className="button-primary" disabled={send.busy}>
          {send.busy ? "Sending…" : "Send message"}
        </button>
        {send.error != null && <ErrorMessage error={send.error} />}
        {sent && <Success>Delivered “{sent}” to the script.</Success>}
      </form>
    </section>
  );
}
