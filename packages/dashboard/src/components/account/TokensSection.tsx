import type { CreatedApiToken } from "@sdk/protocol";
import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Empty, Loading } from "../Feedback.tsx";
import { SecretValue } from "../SecretValue.tsx";
import { DateTime, RelativeTime } from "../Time.tsx";

/** API tokens for scripts, the CLI and Home Assistant: create (shown once), list, revoke. */
export function TokensSection() {
  const tokens = useLoad(() => api.listTokens(), []);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<CreatedApiToken | null>(null);
  const create = useAction(async () => {
    const token = await api.createToken({ body: { name } });
    setName("");
    setCreated(token);
    await tokens.reload();
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run();
  };

  return (
    <section className="card section" aria-labelledby="tokens-title">
      <h2 id="tokens-title">API tokens</h2>
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
      {tokens.status === "loading" && <Loading what="tokens" />}
      {tokens.status === "error" && <ErrorMessage error={tokens.error} onRetry={tokens.reload} />}
      {tokens.status === "ready" &&
        (tokens.data.length === 0 ? (
          <Empty title="No API tokens">Create one below when a tool needs to act as you.</Empty>
        ) : (
          <DataTable caption="Your API tokens" columns={["Name", "Created", "Last used"]} actions>
            {tokens.data.map((token) => (
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
                      tokens.setData((list) => list.filter((t) => t.id !== token.id));
                    }}
                  >
                    Anything that uses this token stops working at once.
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </DataTable>
        ))}
      <form className="form subcard" onSubmit={submit} aria-labelledby="new-token-title">
        <h3 id="new-token-title">New token</h3>
        <div className="inline-fields">
          <div className="field grow">
            <label htmlFor="token-name">Token name</label>
            <input
              id="token-name"
              required
              maxLength={100}
              placeholder="Home Assistant"
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          </div>
          <button type="submit" className="button-primary" disabled={create.busy}>
            {create.busy ? "Creating…" : "Create token"}
          </button>
        </div>
        {create.error != null && <ErrorMessage error={create.error} />}
      </form>
    </section>
  );
}
