import type { RouteRegistrar } from "./registrar.ts";

export const deploymentRoutes: RouteRegistrar = (route, services) => {
  route("listDeployments", ({ principal, params }) =>
    services.deployments.list(principal, params.projectId!),
  );
  route("createDeployment", ({ principal, params, body }) =>
    services.deployments.create(principal, params.projectId!, body),
  );
  route("getDeployment", ({ principal, params }) =>
    services.deployments.get(principal, params.projectId!, params.deploymentId!),
  );
  route("getDeploymentSource", ({ principal, params }) =>
    services.deployments.source(principal, params.projectId!, params.deploymentId!),
  );
  route("downloadDeploymentBundle", async ({ principal, params, reply }) => {
    const { bytes, filename } = await services.deployments.bundle(
      principal,
      params.projectId!,
      params.deploymentId!,
    );
    reply.header("content-disposition", `attachment; filename="${filename}"`);
    return bytes;
  });
  route("activateDeployment", ({ principal, params, body }) =>
    services.deployments.activate(principal, params.projectId!, params.deploymentId!, body),
  );
  route("promoteDeployment", ({ principal, params }) =>
    services.deployments.promote(principal, params.projectId!, params.deploymentId!),
  );
  route("rollBackDeployment", ({ principal, params }) =>
    services.deployments.rollBack(principal, params.projectId!, params.deploymentId!),
  );
  route("listEntities", ({ principal, params }) =>
    services.deployments.entities(principal, params.projectId!),
  );
  route("getHomeAssistant", ({ principal, params }) =>
    services.homeAssistant.status(principal, params.projectId!),
  );
  route("sendDeviceMessage", async ({ principal, params, body }) => {
    await services.scripts.deliverAs(
      principal,
      { projectId: params.projectId!, deviceId: params.deviceId! },
      body,
    );
    return { delivered: true };
  });
};
