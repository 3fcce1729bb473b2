import fs from "node:fs";
import path from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { htmlPage } from "../html.ts";

/** Paths that belong to the API and docs: never answered with the dashboard's page. */
const serverPaths = /^\/(v1|docs|health|ready|changelog|logs)(\/|$)/;

const csp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

/**
 * Serves the built dashboard at `/`. Client-side routes (`/projects/…`) get `index.html`; API and
 * docs paths are untouched. Without a build, `/` explains how to make one.
 */
export async function dashboardRoutes(
  app: FastifyInstance,
  dir: string,
): Promise<(request: FastifyRequest, reply: FastifyReply) => boolean> {
  const index = path.join(dir, "index.html");
  if (!fs.existsSync(index)) {
    app.get("/", async (_request, reply) => {
      reply.type("text/html; charset=utf-8");
      return htmlPage(
        "Dashboard not built",
        '<h1>The dashboard has not been built</h1><p>Run <code>npm start</code> (it builds the dashboard when needed) or <code>npm run build -w @sdk/dashboard</code>, then reload. The API is at <a href="/docs/api">/docs/api</a>.</p>',
      );
    });
    return () => false;
  }
  await app.register(fastifyStatic, {
    root: dir,
    wildcard: false,
    index: "index.html",
    cacheControl: false,
    setHeaders: (res, file) => {
      if (file.endsWith(".html")) {
        res.header("content-security-policy", csp);
        res.header("cache-control", "no-cache");
      } else if (file.includes(`${path.sep}assets${path.sep}`)) {
        res.header("cache-control", "public, max-age=31536000, immutable"); // file names carry a content hash
      }
    },
  });
  /** The SPA fallback for the not-found handler: true when it answered. */
  return (request, reply) => {
    if (request.method !== "GET" || serverPaths.test(request.url)) return false;
    if (!String(request.headers.accept ?? "").includes("text/html")) return false;
    reply.header("content-security-policy", csp).header("cache-control", "no-cache");
    void reply.sendFile("index.html");
    return true;
  };
}
