import type { FastifyRequest } from "fastify";
import { AppError } from "../errors.ts";
import type { AuthService, Principal } from "../services/auth.ts";

export const sessionCookie = "sdk_session";

/**
 * Who is calling: an API token (`Authorization: Bearer …`) wins over the session cookie. A request
 * that carries a credential which does not check out is refused, never treated as anonymous.
 */
export async function authenticate(request: FastifyRequest, auth: AuthService): Promise<Principal> {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const principal = match ? await auth.authenticateToken(match[1]!) : null;
    if (!principal) throw new AppError("invalid_token", "Invalid or revoked API token");
    return principal;
  }
  const cookie = request.cookies[sessionCookie];
  if (cookie) {
    const principal = await auth.authenticateSession(cookie);
    if (!principal) throw new AppError("invalid_token", "Your session has expired; sign in again");
    return principal;
  }
  throw new AppError("authentication_required");
}
