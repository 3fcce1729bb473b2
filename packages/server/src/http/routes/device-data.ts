import type { RouteRegistrar } from "./registrar.ts";

const deviceOf = (params: Record<string, string>) => ({
  projectId: params.projectId!,
  deviceId: params.deviceId!,
});

/** A device's logs and state over REST, and direct commands. */
export const deviceDataRoutes: RouteRegistrar = (route, services) => {
  route("listDeviceLogs", ({ principal, params, query }) =>
    services.deviceLogs.list(principal, deviceOf(params), query.limit, query.before),
  );
  route("getDeviceState", ({ principal, params }) =>
    services.deviceState.latest(principal, deviceOf(params)),
  );
  route("getStateHistory", ({ principal, params, query }) =>
    services.deviceState.history(principal, deviceOf(params), params.entityId!, query.limit, query.before),
  );
  route("getDevicePins", ({ principal, params }) => services.devicePins.get(principal, deviceOf(params)));
  route("sendDeviceCommand", async ({ principal, params, body }) => ({
    value: (await services.deviceLink.commandAs(principal, deviceOf(params), body.type, body.args)) ?? null,
  }));
};
