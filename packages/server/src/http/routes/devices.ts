import type { RouteRegistrar } from "./registrar.ts";

export const deviceRoutes: RouteRegistrar = (route, services) => {
  route("listDevices", ({ principal, params }) => services.devices.list(principal, params.projectId!));
  route("createDevice", ({ principal, params, body }) =>
    services.devices.create(principal, params.projectId!, body),
  );
  route("getDevice", ({ principal, params }) =>
    services.devices.get(principal, params.projectId!, params.deviceId!),
  );
  route("renameDevice", ({ principal, params, body }) =>
    services.devices.rename(principal, params.projectId!, params.deviceId!, body.name),
  );
  route("deleteDevice", async ({ principal, params }) => {
    await services.devices.delete(principal, params.projectId!, params.deviceId!);
    return { ok: true as const };
  });
  route("rotateDeviceCredentials", ({ principal, params }) =>
    services.devices.rotateCredentials(principal, params.projectId!, params.deviceId!),
  );
};
