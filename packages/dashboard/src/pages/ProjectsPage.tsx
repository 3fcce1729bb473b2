import type { Project } from "@sdk/protocol";
import { api } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Empty, Loading } from "../components/Feedback.tsx";
import { Form } from "../components/Form.tsx";
import { PageHeader } from "../components/PageHeader.tsx";
import { RelativeTime } from "../components/Time.tsx";
import { useLoad } from "../hooks/useLoad.ts";
import { useUserNames } from "../hooks/useUserNames.ts";
import { Link, navigate, paths } from "../router.tsx";
import { useUser } from "../session.tsx";

function CreateProjectForm() {
  return (
    <Form
      title="New project"
      titleLevel={2}
      className="card form"
      fields={[
        {
          name: "name",
          label: "Project name",
          required: true,
          maxLength: 100,
          placeholder: "Greenhouse",
          grow: true,
        },
      ]}
      submitLabel="Create project"
      busyLabel="Creating…"
      onSubmit={async ({ name }) => {
        const project = await api.createProject({ body: { name } });
        navigate(paths.project(project.id));
      }}
    />
  );
}

function ProjectList({ projects }: { projects: Project[] }) {
  const me = useUser();
  const userName = useUserNames();
  const showOwner = me.role === "admin" && projects.some((p) => p.ownerId !== me.id);
  if (projects.length === 0) {
    return (
      <Empty title="No projects yet">
        A project groups devices, their script and its settings. Create your first one below.
      </Empty>
    );
  }
  return (
    <ul className="project-list">
      {[...projects]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((project) => (
          <li key={project.id} className="card project-card">
            <Link to={paths.project(project.id)} className="project-link">
              {project.name}
            </Link>
            <p className="muted small">
              Created <RelativeTime iso={project.createdAt} />
              {showOwner && <> · owner {userName(project.ownerId)}</>}
            </p>
          </li>
        ))}
    </ul>
  );
}

export function ProjectsPage() {
  const projects = useLoad(() => api.listProjects(), []);
  return (
    <>
      <PageHeader title="Projects" />
      <section aria-label="Your projects" className="section">
        {projects.status === "loading" && <Loading what="projects" />}
        {projects.status === "error" && <ErrorMessage error={projects.error} onRetry={projects.reload} />}
        {projects.status === "ready" && <ProjectList projects={projects.data} />}
      </section>
      <CreateProjectForm />
    </>
  );
}
