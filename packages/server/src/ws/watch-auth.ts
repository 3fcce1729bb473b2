import { bearerSubprotocolPrefix } from "@sdk/protocol";
import type { FastifyRequest } from "fastify";
import { AppError } from "../errors.ts";
import { authenticate } from "../http/authenticate.ts";
import { isOwnOrigin } from "../http/cross-site.ts";
import type { Principal } from "../services/auth.ts";
import type { Services } from "../services/index.ts";

declare module "fastify" {
  interface FastifyRequest {
    watcher?: Principal;
  }
}

/** An API token as a sub-protocol (`bearer.<token>`), for browsers, which cannot set headers. */
function subprotocolToken(request: FastifyRequest): string | undefined {
  const offered = String(request.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((p) => p.trim());
  return offered.find((p) => p.startsWith(bearerSubprotocolPrefix))?.slice(bearerSubprotocolPrefix.length);
}

/** How both watch sockets authenticate: a bearer token, a `bearer.` sub-protocol or a same-origin session. */
export async function authenticateWatcher(
  request: FastifyRequest,
  services: Services,
  publicUrl: string | null,
): Promise<Principal> {
  const token = subprotocolToken(request);
  if (token && request.headers.authorization === undefined) {
    const principal = await services.auth.authenticateToken(token);
    if (!principal) throw new AppError("invalid_token", "Invalid or revoked API token");
    return principal;
  }
  const principal = await authenticate(request, services.auth);
  // A browser sends the session cookie with a WebSocket from any site: accept only our own pages.
  const origin = request.headers.origin;
  if (principal.via === "session" && origin !== undefined && !isOwnOrigin(request, publicUrl, origin)) {
    throw new AppError("cross_site_request");
  }
  return principal;
}
