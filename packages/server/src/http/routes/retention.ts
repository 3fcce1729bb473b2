import type { RouteRegistrar } from "./registrar.ts";

export const retentionRoutes: RouteRegistrar = (route, services) => {
  route("getRetention", ({ principal, params }) => services.retention.get(principal, params.projectId!));
  route("setRetention", ({ principal, params, body }) =>
    services.retention.set(principal, params.projectId!, body),
  );
};
