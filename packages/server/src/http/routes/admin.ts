import type { RouteRegistrar } from "./registrar.ts";

export const adminRoutes: RouteRegistrar = (route, services) => {
  route("listUsers", ({ principal }) => services.users.list(principal));
  route("createUser", ({ principal, body }) => services.users.create(principal, body));
  route("changeRole", ({ principal, params, body }) =>
    services.users.changeRole(principal, params.userId!, body.role),
  );
  route("deleteUser", async ({ principal, params }) => {
    await services.users.delete(principal, params.userId!);
    return { ok: true as const };
  });
  route("listAudit", ({ query }) => services.audit.list(query.limit, query.before));
};
