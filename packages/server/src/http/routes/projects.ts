import type { RouteRegistrar } from "./registrar.ts";

export const projectRoutes: RouteRegistrar = (route, services) => {
  route("listProjects", ({ principal }) => services.projects.list(principal));
  route("createProject", ({ principal, body }) => services.projects.create(principal, body.name));
  route("getProject", ({ principal, params }) => services.projects.get(principal, params.projectId!));
  route("renameProject", ({ principal, params, body }) =>
    services.projects.rename(principal, params.projectId!, body.name),
  );
  route("deleteProject", async ({ principal, params }) => {
    await services.projects.delete(principal, params.projectId!);
    return { ok: true as const };
  });
};
