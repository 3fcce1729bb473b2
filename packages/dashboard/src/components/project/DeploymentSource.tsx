import type { Deployment } from "@sdk/protocol";
import { api } from "../../api.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Loading } from "../Feedback.tsx";

/** A deployment's source files with their text, as its source map carries them. */
export function DeploymentSource({ projectId, deployment }: { projectId: string; deployment: Deployment }) {
  const source = useLoad(
    () => api.getDeploymentSource({ params: { projectId, deploymentId: deployment.id } }),
    [projectId, deployment.id],
  );
  return (
    <section className="deployment-source" aria-label={`Source of v${deployment.version}`}>
      {source.status === "loading" && <Loading what="source" />}
      {source.status === "error" && <ErrorMessage error={source.error} onRetry={source.reload} />}
      {source.status === "ready" && source.data.files.length === 0 && (
        <p className="muted small">
          This deployment was uploaded without a source map, so its source is not kept.
        </p>
      )}
      {source.status === "ready" &&
        source.data.files.map((file) => (
          <figure key={file.path} className="source-file">
            <figcaption>
              <code>{file.path}</code>
            </figcaption>
            <pre>{file.text}</pre>
          </figure>
        ))}
    </section>
  );
}

/** Where a deployment's bundle downloads from (the session cookie authenticates it). */
export const bundleUrl = (projectId: string, deployment: Deployment) =>
  `/v1/projects/${encodeURIComponent(projectId)}/deployments/${encodeURIComponent(deployment.id)}/bundle`;
