import { type ErrorCode, errorDocsPath } from "@sdk/protocol";
import type { FastifyRequest } from "fastify";

/** The server's own base URL as the caller sees it: PUBLIC_URL when set, else from the request. */
function baseUrl(request: FastifyRequest, publicUrl: string | null): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

export function docsUrl(request: FastifyRequest, publicUrl: string | null, code: ErrorCode | string): string {
  return `${baseUrl(request, publicUrl)}${errorDocsPath}#${code}`;
}
