import type { CreatedApiToken } from "@sdk/protocol";
import { useState } from "react";
import { api } from "../../api.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { DataTable } from "../DataTable.tsx";
import { Form } from "../Form.tsx";
import { ListSection } from "../ListSection.tsx";
import { SecretValue } from "../SecretValue.tsx";
import { DateTime, RelativeTime } from "../Time.tsx";

/** API tokens for scripts, the CLI and Home Assistant: create (shown once), list, revoke. */
export function TokensSection() {
  const tokens = useLoad(() => api.listTokens(), []);
  const [created, setCreated] = useState<CreatedApiToken | null>(null);

  return (
    <ListSection
      id="tokens"
      title="API tokens"
      list={tokens}
      what="tokens"
      empty={{ title: "No API tokens", body: "Create one below when a tool needs to act as you." }}
      before={
        <>
          <p className="muted">
            For the <code>sdk</code> command, scripts and Home Assistant: send it as{" "}
            <code>Authorization: Bearer sdk_…</code>. A token acts as you.
          </p>
          {created && (
            <div className="callout" data-testid="created-token">
              <p className="callout-warning">
                <strong>Copy the token “{created.name}” now: it is shown only this once.</strong>
              </p>
              <SecretValue label="API token" value={created.token} testId="api-token" />
              <button type="button" className="button-small" onClick={() => setCreated(null)}>
                Done
              </button>
            </div>
          )}
        </>
      }
      after={
        <Form
          title="New token"
          fields={[
            {
              name: "name",
              label: "Token name",
              required: true,
              maxLength: 100,
              placeholder: "Home Assistant",
              grow: true,
            },
          ]}
          submitLabel="Create token"
          busyLabel="Creating…"
          clearOnSuccess={["name"]}
          onSubmit={async ({ name }) => {
            setCreated(await api.createToken({ body: { name } }));
            await tokens.reload();
          }}
        />
      }
    >
      {(list) => (
        <DataTable caption="Your API tokens" columns={["Name", "Created", "Last used"]} actions>
          {list.map((token) => (
            <tr key={token.id}>
              <td data-label="Name">{token.name}</td>
              <td data-label="Created">
                <DateTime iso={token.createdAt} />
              </td>
              <td data-label="Last used">
                <RelativeTime iso={token.lastUsedAt} fallback="never" />
              </td>
              <td data-label="Actions" className="actions">
                <ConfirmButton
                  label="Revoke"
                  ariaLabel={`Revoke ${token.name}`}
                  title={`Revoke “${token.name}”?`}
                  confirmLabel="Revoke token"
                  onConfirm={async () => {
                    await api.revokeToken({ params: { tokenId: token.id } });
                    tokens.setData((items) => items.filter((t) => t.id !== token.id));
                  }}
                >
                  Anything that uses this token stops working at once.
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </ListSection>
  );
}
