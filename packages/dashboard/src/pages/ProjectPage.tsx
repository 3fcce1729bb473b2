import { api, isNotFound } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Loading } from "../components/Feedback.tsx";
import { PageHeader } from "../components/PageHeader.tsx";
import { AlertsSection } from "../components/project/AlertsSection.tsx";
import { DeploymentsSection } from "../components/project/DeploymentsSection.tsx";
import { DevicesSection } from "../components/project/DevicesSection.tsx";
import { EntitiesSection } from "../components/project/EntitiesSection.tsx";
import { EnvVarsSection } from "../components/project/EnvVarsSection.tsx";
import { HomeAssistantSection } from "../components/project/HomeAssistantSection.tsx";
import { ProjectActions } from "../components/project/ProjectSettings.tsx";
import { RelativeTime } from "../components/Time.tsx";
import { useLoad } from "../hooks/useLoad.ts";
import { Link } from "../router.tsx";
import { NotFoundPage } from "./NotFoundPage.tsx";

export function ProjectPage({ projectId }: { projectId: string }) {
  const project = useLoad(() => api.getProject({ params: { projectId } }), [projectId]);
  const deployments = useLoad(() => api.listDeployments({ params: { projectId } }), [projectId]);
  const entities = useLoad(() => api.listEntities({ params: { projectId } }), [projectId]);
  const trail = <Link to="/">Projects</Link>;

  if (project.status === "loading")
    return (
      <>
        <PageHeader title="Project" trail={trail} />
        <Loading what="the project" />
      </>
    );
  if (project.status === "error") {
    if (isNotFound(project.error)) return <NotFoundPage what="project" />;
    return (
      <>
        <PageHeader title="Project" trail={trail} />
        <ErrorMessage error={project.error} onRetry={project.reload} />
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={project.data.name}
        trail={trail}
        actions={<ProjectActions project={project.data} onRenamed={project.setData} />}
      >
        <p className="muted small">
          <code>{project.data.id}</code> · created <RelativeTime iso={project.data.createdAt} />
        </p>
      </PageHeader>
      <DevicesSection projectId={projectId} />
      <DeploymentsSection
        projectId={projectId}
        deployments={deployments}
        onActivated={() => {
          void deployments.reload();
          void entities.reload();
        }}
      />
      <EntitiesSection entities={entities} />
      <HomeAssistantSection
        projectId={projectId}
        reloadKey={deployments.data?.find((d) => d.status === "active")?.id}
      />
      <EnvVarsSection projectId={projectId} />
      <AlertsSection projectId={projectId} />
    </>
  );
}
