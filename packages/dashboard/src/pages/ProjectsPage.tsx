import type { Project } from "@sdk/protocol";
import { type FormEvent, useState } from "react";
import { api } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Empty, Loading } from "../components/Feedback.tsx";
import { PageHeader } from "../components/PageHeader.tsx";
import { RelativeTime } from "../components/Time.tsx";
import { useAction } from "../hooks/useAction.ts";
import { useLoad } from "../hooks/useLoad.ts";
import { useUserNames } from "../hooks/useUserNames.ts";
import { Link, navigate, paths } from "../router.tsx";
import { useUser } from "../session.tsx";

function CreateProjectForm() {
  const [name, setName] = useState("");
  const create = useAction(async (projectName: string) => {
    const project = await api.createProject({ body: { name: projectName } });
    navigate(paths.project(project.id));
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(name);
  };
  return (
    <form className="card form" onSubmit={submit} aria-labelledby="new-project-title">
      <h2 id="new-project-title">New project</h2>
      <div className="inline-fields">
        <div className="field grow">
          <label htmlFor="project-name">Project name</label>
          <input
            id="project-name"
            required
            maxLength={100}
            placeholder="Greenhouse"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" className="button-primary" disabled={create.busy}>
          {create.busy ? "Creating…" : "Create project"}
        </button>
      </div>
      {create.error != null && <ErrorMessage error={create.error} />}
    </form>
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
