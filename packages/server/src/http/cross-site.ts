import type { FastifyRequest } from "fastify";
import { AppError } from "../errors.ts";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses state-changing requests that a browser says come from another site: `Sec-Fetch-Site`
 * when the browser sends it, else an `Origin` that is not this server. Clients that send neither
 * (curl, the CLI, Home Assistant) are not browsers and cannot be tricked into a cross-site request.
 */
export function checkCrossSite(request: FastifyRequest, publicUrl: string | null): void {
  if (safeMethods.has(request.method)) return;
  const site = request.headers["sec-fetch-site"];
  if (typeof site === "string") {
    if (site === "same-origin" || site === "none") return;
    throw new AppError("cross_site_request");
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !isOwnOrigin(request, publicUrl, origin))
    throw new AppError("cross_site_request");
}

/** True when `origin` is this server: the host the request was sent to, or PUBLIC_URL's. */
export function isOwnOrigin(request: FastifyRequest, publicUrl: string | null, origin: string): boolean {
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host === request.host || (publicUrl !== null && host === new URL(publicUrl).host);
}
