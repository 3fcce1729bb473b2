import { type EnvVar, envVarNamePattern } from "@sdk/protocol";
import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Empty, Loading } from "../Feedback.tsx";
import { RelativeTime } from "../Time.tsx";

function SetEnvVarForm({ projectId, onSaved }: { projectId: string; onSaved: (envVar: EnvVar) => void }) {
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const save = useAction(async () => {
    const saved = await api.setEnvVar({ params: { projectId, name }, body: { value } });
    setName("");
    setValue("");
    onSaved(saved);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run();
  };
  return (
    <form className="form subcard" onSubmit={submit} aria-labelledby="set-env-title">
      <h3 id="set-env-title">Set a variable</h3>
      <div className="inline-fields">
        <div className="field">
          <label htmlFor="env-name">Name</label>
          <input
            id="env-name"
            required
            maxLength={64}
            pattern={envVarNamePattern.source}
            aria-describedby="env-name-hint"
            spellCheck={false}
            autoCapitalize="characters"
            placeholder="WIFI_SSID"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div className="field grow">
          <label htmlFor="env-value">Value</label>
          <input
            id="env-value"
            autoComplete="off"
            spellCheck={false}
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        </div>
        <button type="submit" className="button-primary" disabled={save.busy}>
          {save.busy ? "Saving…" : "Save variable"}
        </button>
      </div>
      <p className="hint" id="env-name-hint">
        Upper-case letters, digits and _ (e.g. <code>API_KEY</code>). Setting an existing name replaces its
        value. Scripts read it as <code>this.env.NAME</code>.
      </p>
      {save.error != null && <ErrorMessage error={save.error} />}
    </form>
  );
}

function EnvVarRow({
  projectId,
  envVar,
  onRemoved,
}: {
  projectId: string;
  envVar: EnvVar;
  onRemoved: () => void;
}) {
  const [revealed, setRevealed] = useState(false);
  return (
    <tr>
      <td data-label="Name">
        <code>{envVar.name}</code>
      </td>
      <td data-label="Value" className="env-value">
        {revealed ? (
          <code className="wrap">
            {envVar.value === "" ? <span className="muted">(empty)</span> : envVar.value}
          </code>
        ) : (
          <span className="masked" role="img" aria-label="hidden value">
            ••••••••
          </span>
        )}
      </td>
      <td data-label="Updated">
        <RelativeTime iso={envVar.updatedAt} />
      </td>
      <td data-label="Actions" className="actions">
        <button
          type="button"
          className="button-small"
          aria-pressed={revealed}
          aria-label={`${revealed ? "Hide" : "Show"} the value of ${envVar.name}`}
          onClick={() => setRevealed(!revealed)}
        >
          {revealed ? "Hide" : "Show"}
        </button>
        <ConfirmButton
          label="Remove"
          ariaLabel={`Remove ${envVar.name}`}
          title={`Remove ${envVar.name}?`}
          confirmLabel="Remove variable"
          onConfirm={async () => {
            await api.unsetEnvVar({ params: { projectId, name: envVar.name } });
            onRemoved();
          }}
        >
          Running scripts stop seeing <code>this.env.{envVar.name}</code> at once.
        </ConfirmButton>
      </td>
    </tr>
  );
}

/** The project's environment variables: values hidden until shown. */
export function EnvVarsSection({ projectId }: { projectId: string }) {
  const vars = useLoad(() => api.listEnvVars({ params: { projectId } }), [projectId]);
  const { setData } = vars;
  return (
    <section className="card section" aria-labelledby="env-title">
      <h2 id="env-title">Environment variables</h2>
      {vars.status === "loading" && <Loading what="environment variables" />}
      {vars.status === "error" && <ErrorMessage error={vars.error} onRetry={vars.reload} />}
      {vars.status === "ready" &&
        (vars.data.length === 0 ? (
          <Empty title="No variables">
            Settings and secrets for your script (Wi-Fi names, API keys) go here.
          </Empty>
        ) : (
          <DataTable caption="Environment variables" columns={["Name", "Value", "Updated"]} actions>
            {[...vars.data]
              .sort((a, b) => a.name.localeCompare(b.name))
              .map((envVar) => (
                <EnvVarRow
                  key={envVar.name}
                  projectId={projectId}
                  envVar={envVar}
                  onRemoved={() => setData((list) => list.filter((v) => v.name !== envVar.name))}
                />
              ))}
          </DataTable>
        ))}
      <SetEnvVarForm
        projectId={projectId}
        onSaved={(saved) => setData((list) => [...list.filter((v) => v.name !== saved.name), saved])}
      />
    </section>
  );
}
