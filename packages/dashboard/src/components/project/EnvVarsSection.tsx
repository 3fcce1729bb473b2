import { type EnvVar, envVarNamePattern } from "@sdk/protocol";
import { useState } from "react";
import { api } from "../../api.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { DataTable } from "../DataTable.tsx";
import { Form } from "../Form.tsx";
import { ListSection } from "../ListSection.tsx";
import { RelativeTime } from "../Time.tsx";

function SetEnvVarForm({ projectId, onSaved }: { projectId: string; onSaved: (envVar: EnvVar) => void }) {
  return (
    <Form
      title="Set a variable"
      fields={[
        {
          name: "name",
          label: "Name",
          required: true,
          maxLength: 64,
          pattern: envVarNamePattern,
          code: "upper-case",
          placeholder: "WIFI_SSID",
        },
        { name: "value", label: "Value", autoComplete: "off", code: true, grow: true },
      ]}
      note={
        <>
          Upper-case letters, digits and _ (e.g. <code>API_KEY</code>). Setting an existing name replaces its
          value. Scripts read it as <code>this.env.NAME</code>.
        </>
      }
      noteFor="name"
      submitLabel="Save variable"
      busyLabel="Saving…"
      clearOnSuccess={["name", "value"]}
      onSubmit={async ({ name, value }) => {
        onSaved(await api.setEnvVar({ params: { projectId, name }, body: { value } }));
      }}
    />
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
    <ListSection
      id="env"
      title="Environment variables"
      list={vars}
      what="environment variables"
      empty={{
        title: "No variables",
        body: "Settings and secrets for your script (Wi-Fi names, API keys) go here.",
      }}
      after={
        <SetEnvVarForm
          projectId={projectId}
          onSaved={(saved) => setData((list) => [...list.filter((v) => v.name !== saved.name), saved])}
        />
      }
    >
      {(list) => (
        <DataTable caption="Environment variables" columns={["Name", "Value", "Updated"]} actions>
          {[...list]
            .sort((a, b) => a.name.localeCompare(b.name))
            .map((envVar) => (
              <EnvVarRow
                key={envVar.name}
                projectId={projectId}
                envVar={envVar}
                onRemoved={() => setData((items) => items.filter((v) => v.name !== envVar.name))}
              />
            ))}
        </DataTable>
      )}
    </ListSection>
  );
}
