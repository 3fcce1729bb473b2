import { EnvVarName } from "@sdk/protocol";
import { AppError } from "../../errors.ts";
import type { RouteRegistrar } from "./registrar.ts";

function envName(raw: string | undefined): string {
  const parsed = EnvVarName.safeParse(raw);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? "is not a valid name";
    throw new AppError("invalid_request", `Invalid request: name ${message}`, {
      fields: [{ path: "name", message }],
    });
  }
  return parsed.data;
}

export const envVarRoutes: RouteRegistrar = (route, services) => {
  route("listEnvVars", ({ principal, params }) => services.envVars.list(principal, params.projectId!));
  route("setEnvVar", ({ principal, params, body }) =>
    services.envVars.set(principal, params.projectId!, envName(params.name), body.value),
  );
  route("unsetEnvVar", async ({ principal, params }) => {
    await services.envVars.unset(principal, params.projectId!, envName(params.name));
    return { ok: true as const };
  });
};
