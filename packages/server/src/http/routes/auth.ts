import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../../config.ts";
import type { SignedIn } from "../../services/auth.ts";
import type { Services } from "../../services/index.ts";
import { userView } from "../../services/views.ts";
import { sessionCookie } from "../authenticate.ts";
import type { RouteRegistrar } from "./registrar.ts";

function secure(request: FastifyRequest, config: Config): boolean {
  return request.protocol === "https" || Boolean(config.publicUrl?.startsWith("https:"));
}

export function startSession(
  reply: FastifyReply,
  request: FastifyRequest,
  config: Config,
  signedIn: SignedIn,
) {
  if (signedIn.session) {
    reply.setCookie(sessionCookie, signedIn.session.value, {
      httpOnly: true,
      sameSite: "lax",
      secure: secure(request, config),
      path: "/",
      maxAge: signedIn.session.maxAgeSeconds,
    });
  }
  return { user: signedIn.user, ...(signedIn.token ? { token: signedIn.token } : {}) };
}

export const authRoutes: RouteRegistrar = (route, services: Services, config: Config) => {
  route("serverInfo", () => services.auth.serverInfo());
  route("register", async ({ body, request, reply }) =>
    startSession(reply, request, config, await services.auth.register(body, request.ip)),
  );
  route("login", async ({ body, request, reply }) =>
    startSession(reply, request, config, await services.auth.login(body, request.ip)),
  );
  route("logout", async ({ principal, request, reply }) => {
    await services.auth.logout(principal);
    if (principal.via === "session") {
      reply.clearCookie(sessionCookie, {
        path: "/",
        httpOnly: true,
        sameSite: "lax",
        secure: secure(request, config),
      });
    }
    return { ok: true as const };
  });
  route("whoami", async ({ principal }) => userView(principal.user));
  route("changePassword", async ({ principal, body }) => {
    await services.auth.changePassword(principal, body.currentPassword, body.newPassword);
    return { ok: true as const };
  });
  route("listTokens", ({ principal }) => services.auth.listTokens(principal));
  route("createToken", ({ principal, body }) => services.auth.createToken(principal, body.name));
  route("revokeToken", async ({ principal, params }) => {
    await services.auth.revokeToken(principal, params.tokenId!);
    return { ok: true as const };
  });
};
