import type { Deployment, DeploymentStatus } from "@sdk/protocol";
import { Fragment, useState } from "react";
import type { LoadResult } from "../../hooks/useLoad.ts";
import { useUserNames } from "../../hooks/useUserNames.ts";
import { useServerInfo } from "../../session.tsx";
import { DataTable } from "../DataTable.tsx";
import { ListSection } from "../ListSection.tsx";
import { RelativeTime } from "../Time.tsx";
import { ActivateButton } from "./ActivateButton.tsx";
import { CanaryPanel, RolloutOutcome } from "./CanaryPanel.tsx";
import { bundleUrl, DeploymentSource } from "./DeploymentSource.tsx";
import { useCanaryRefresh } from "./useCanaryRefresh.ts";

const statusWords: Record<DeploymentStatus, string> = {
  active: "Live",
  inactive: "Previous",
  failed: "Failed",
  pending: "Loading",
  canary: "Canary",
  rolled_back: "Rolled back",
};

/** Made live again later (a rollback), not right when it was uploaded. */
const rolledBack = (d: Deployment) =>
  d.activatedAt !== null && new Date(d.activatedAt).getTime() - new Date(d.createdAt).getTime() > 60_000;

/** The project's deployments, newest first, with rollback to an earlier one. */
export function DeploymentsSection({
  projectId,
  deployments,
  onActivated,
}: {
  projectId: string;
  deployments: LoadResult<Deployment[]>;
  onActivated: () => void;
}) {
  const userName = useUserNames();
  const kept = useServerInfo()?.deploymentsKept;
  const [shown, setShown] = useState<string | null>(null);
  useCanaryRefresh(projectId, deployments, onActivated);
  const live = deployments.data?.find((d) => d.status === "active")?.version ?? 0;
  const canary = deployments.data?.find((d) => d.status === "canary");
  // Going back to an older version is a rollback; a newer one that is not live can be made live too.
  const verb = (version: number) => (version < live ? "Roll back to" : "Make live:");
  return (
    <ListSection
      id="deployments"
      title="Deployments"
      list={deployments}
      what="deployments"
      after={
        kept !== undefined && (
          <p className="muted small" data-testid="deployments-kept">
            The server keeps each project's last {kept} deployments (<code>DEPLOYMENTS_KEPT</code>); older
            ones are removed, but never the live one.
          </p>
        )
      }
      empty={{
        title: "Nothing deployed yet",
        body: (
          <>
            Write a device script, then run <code>sdk deploy</code> in its directory. The{" "}
            <a href="/docs/scripts" target="_blank" rel="noreferrer">
              script guide
            </a>{" "}
            shows how.
          </>
        ),
      }}
    >
      {(list) => (
        <DataTable
          caption="Deployments, newest first"
          columns={["Version", "Status", "Deployed", "By"]}
          actions
        >
          {list.map((deployment) => (
            <Fragment key={deployment.id}>
              <tr data-deployment-version={deployment.version}>
                <td data-label="Version">
                  <strong>v{deployment.version}</strong>
                  <span className="muted small block">
                    {deployment.manifest.board} · library {deployment.manifest.libraryVersion}
                  </span>
                </td>
                <td data-label="Status">
                  <span className={`pill pill-${deployment.status}`}>{statusWords[deployment.status]}</span>
                  {deployment.error && <pre className="error-text">{deployment.error}</pre>}
                  {deployment.rollout && (
                    <RolloutOutcome rollout={deployment.rollout} shown={deployment.error} />
                  )}
                </td>
                <td data-label="Deployed">
                  <RelativeTime iso={deployment.createdAt} />
                  {deployment.status === "active" && rolledBack(deployment) && (
                    <span className="muted small block">
                      live since <RelativeTime iso={deployment.activatedAt} />
                    </span>
                  )}
                </td>
                <td data-label="By">{userName(deployment.createdBy)}</td>
                <td data-label="Actions" className="actions">
                  <button
                    type="button"
                    className="button-small"
                    aria-expanded={shown === deployment.id}
                    aria-label={`Source of v${deployment.version}`}
                    onClick={() => setShown(shown === deployment.id ? null : deployment.id)}
                  >
                    Source
                  </button>{" "}
                  <a
                    className="button-small"
                    href={bundleUrl(projectId, deployment)}
                    download
                    aria-label={`Download bundle of v${deployment.version}`}
                  >
                    Download bundle
                  </a>{" "}
                  {(deployment.status === "inactive" || deployment.status === "rolled_back") && (
                    <ActivateButton
                      projectId={projectId}
                      deploymentId={deployment.id}
                      label={`${verb(deployment.version)} v${deployment.version}`}
                      version={deployment.version}
                      wasLive={deployment.activatedAt !== null}
                      busyWith={
                        canary ? `Canary v${canary.version} is running: promote or roll it back first.` : null
                      }
                      onActivated={onActivated}
                    />
                  )}
                </td>
              </tr>
              {deployment.status === "canary" && deployment.rollout && (
                <tr className="canary-row">
                  <td colSpan={5}>
                    <CanaryPanel
                      projectId={projectId}
                      deployment={deployment}
                      rollout={deployment.rollout}
                      onChanged={onActivated}
                    />
                  </td>
                </tr>
              )}
              {shown === deployment.id && (
                <tr className="source-row">
                  <td colSpan={5}>
                    <DeploymentSource projectId={projectId} deployment={deployment} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </DataTable>
      )}
    </ListSection>
  );
}
