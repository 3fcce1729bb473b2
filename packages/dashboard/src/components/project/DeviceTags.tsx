import { type Device, tagLimits, tagPattern } from "@sdk/protocol";
import { useEffect, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { ErrorMessage } from "../ErrorMessage.tsx";

/** A device's tags as small pills (nothing when it has none). */
export function TagPills({ tags }: { tags: string[] }) {
  if (tags.length === 0) return null;
  return (
    <span className="tag-list" data-testid="device-tags">
      <span className="sr-only">Tags: </span>
      {tags.map((tag) => (
        <span key={tag} className="pill tag">
          {tag}
        </span>
      ))}
    </span>
  );
}

/** Which tag the device list shows (all devices when none is chosen), from the tags devices have. */
export function TagFilter({
  devices,
  value,
  onChange,
}: {
  devices: Device[];
  value: string;
  onChange: (tag: string) => void;
}) {
  const tags = [...new Set(devices.flatMap((d) => d.tags))].sort();
  if (tags.length === 0 && value === "") return null;
  return (
    <label className="tag-filter">
      Show devices tagged{" "}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">(any tag or none)</option>
        {[...new Set([...tags, ...(value ? [value] : [])])].map((tag) => (
          <option key={tag} value={tag}>
            {tag}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The device page's tags: shown, removed one by one, added from a text field (validated as the server does). */
export function DeviceTagsEditor({ projectId, device }: { projectId: string; device: Device }) {
  const [tags, setTags] = useState(device.tags);
  const [text, setText] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const action = useAction(async (change: () => Promise<Device>) => setTags((await change()).tags));
  const params = { projectId, deviceId: device.id };
  useEffect(() => setTags(device.tags), [device.tags]);

  const add = async () => {
    const wanted = text.split(/[\s,]+/).filter((t) => t !== "");
    const bad = wanted.find((t) => !tagPattern.test(t));
    if (wanted.length === 0) return setProblem("Type a tag first.");
    if (bad)
      return setProblem(
        `“${bad}” is not a valid tag: use 1–${tagLimits.maxLength} lowercase letters, digits, - or _, starting with a letter or digit.`,
      );
    setProblem(null);
    const done = await action.run(() => api.addDeviceTags({ params, body: { tags: wanted } }));
    if (done !== undefined) setText("");
  };

  return (
    <section className="card section" aria-labelledby="tags-title">
      <h2 id="tags-title">Tags</h2>
      <p className="muted small">
        Group devices with tags (at most {tagLimits.perDevice}): filter the project's device list by tag, and
        send a command or message to every device with one (REST and <code>sdk devices</code>).
      </p>
      {tags.length === 0 ? (
        <p className="muted">No tags yet.</p>
      ) : (
        <ul className="tag-list" aria-label="Tags of this device">
          {tags.map((tag) => (
            <li key={tag} className="pill tag">
              {tag}{" "}
              <button
                type="button"
                className="tag-remove"
                aria-label={`Remove tag ${tag}`}
                disabled={action.busy}
                onClick={() => void action.run(() => api.removeDeviceTag({ params: { ...params, tag } }))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="form-inline"
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <label>
          Add tags{" "}
          <input
            name="tags"
            value={text}
            placeholder="kitchen floor-2"
            onChange={(e) => setText(e.target.value)}
            aria-describedby="tags-hint"
          />
        </label>{" "}
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Saving…" : "Add"}
        </button>
        <span id="tags-hint" className="muted small block">
          Lowercase letters, digits, - and _; separate several with spaces.
        </span>
      </form>
      {problem && (
        <p className="notice notice-error" role="alert">
          {problem}
        </p>
      )}
      {action.error !== null && <ErrorMessage error={action.error} />}
    </section>
  );
}
