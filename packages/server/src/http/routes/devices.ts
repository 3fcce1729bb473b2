import type { RouteRegistrar } from "./registrar.ts";

export const deviceRoutes: RouteRegistrar = (route, services) => {
  route("listDevices", ({ principal, params, query }) =>
    services.devices.list(principal, params.projectId!, query.tag),
  );
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
  route("setDeviceTags", ({ principal, params, body }) =>
    services.devices.setTags(principal, params.projectId!, params.deviceId!, body.tags),
  );
  route("addDeviceTags", ({ principal, params, body }) =>
    services.devices.addTags(principal, params.projectId!, params.deviceId!, body.tags),
  );
  route("removeDeviceTag", ({ principal, params }) =>
    services.devices.removeTag(principal, params.projectId!, params.deviceId!, params.tag!),
  );
  route("createDevices", ({ principal, params, body }) =>
    services.devices.createMany(principal, params.projectId!, body.devices),
  );
  route("sendTagCommand", ({ principal, params, body }) =>
    services.tagActions.command(principal, params.projectId!, body),
  );
  route("sendTagMessage", ({ principal, params, body }) =>
    services.tagActions.message(principal, params.projectId!, body),
  );
};
