import type { RouteRegistrar } from "./registrar.ts";

export const backupRoutes: RouteRegistrar = (route, services) => {
  route("downloadBackup", async ({ principal, reply }) => {
    const backup = await services.backups.download(principal);
    reply.header("content-disposition", `attachment; filename="${backup.filename}"`);
    reply.header("x-sdk-backup-files", String(backup.manifest.files.length));
    reply.header("x-sdk-backup-bytes", String(backup.bytes));
    reply.header("x-sdk-backup-dialect", backup.manifest.dialect);
    return backup.stream;
  });
};
