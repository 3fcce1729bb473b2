import type { RouteRegistrar } from "./registrar.ts";

export const firmwareRoutes: RouteRegistrar = (route, services) => {
  route("listFirmware", () => services.firmware.list());
  route("downloadFirmware", async ({ params, reply }) => {
    const { bytes, filename } = await services.firmware.download(params.version!, params.board!);
    reply.header("content-disposition", `attachment; filename="${filename}"`);
    return bytes;
  });
  route("uploadFirmware", ({ principal, params, body }) =>
    services.firmware.upload(principal, params.version!, params.board!, body),
  );
};
