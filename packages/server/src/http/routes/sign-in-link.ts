import { readSignInToken, signInLinkPath } from "@sdk/protocol/sign-in-link";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config.ts";
import type { Services } from "../../services/index.ts";
import { htmlPage } from "../html.ts";
import { startSession } from "./auth.ts";

/**
 * One-time sign-in links (`sdk dev` prints them): only when SIGN_IN_LINK_KEY is set. A token
 * signed with that key, not expired and not used before, opens a session for the admin account
 * it names and redirects to the dashboard. Used tokens are remembered until they expire.
 */
export function signInLinkRoutes(app: FastifyInstance, services: Services, config: Config): void {
  const key = config.signInLinkKey;
  if (!key) return;
  const used = new Map<string, number>();
  app.get<{ Querystring: { token?: string } }>(signInLinkPath, async (request, reply) => {
    reply.header("cache-control", "no-store").header("referrer-policy", "no-referrer");
    const now = Date.now();
    for (const [nonce, exp] of used) if (exp <= now) used.delete(nonce);
    const claims = readSignInToken(key, String(request.query.token ?? ""), now);
    const fresh = claims !== null && !used.has(claims.nonce);
    if (claims) used.set(claims.nonce, claims.exp);
    const signedIn = fresh ? await services.auth.signInByLink(claims.email) : null;
    if (!signedIn) {
      reply.code(401).type("text/html; charset=utf-8");
      return htmlPage(
        "Sign-in link not valid",
        "<h1>This sign-in link cannot be used</h1><p>A sign-in link works once, for a few minutes. In the terminal running <code>sdk dev</code>, press <kbd>l</kbd> for a new link, or restart <code>sdk dev</code>.</p>",
      );
    }
    startSession(reply, request, config, signedIn);
    return reply.redirect("/", 303);
  });
}
