import {
  describeIssues,
  type Endpoint,
  type EndpointName,
  type EndpointResult,
  type Endpoints,
  endpoints,
} from "@sdk/protocol";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { AppError } from "../errors.ts";
import type { Principal } from "../services/auth.ts";
import type { Services } from "../services/index.ts";
import { authenticate } from "./authenticate.ts";

type Parsed<E, K extends "body" | "query"> = E extends { [P in K]: infer S extends z.ZodType }
  ? z.output<S>
  : undefined;

export interface RouteInput<N extends EndpointName> {
  params: Record<string, string>;
  body: Parsed<Endpoints[N], "body">;
  query: Parsed<Endpoints[N], "query">;
  principal: Endpoints[N]["access"] extends "public" ? null : Principal;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** Validates input against a schema; on failure a 400 `invalid_request` that names every bad field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: "body" | "query",
): z.output<S> {
  // An optional body (activateDeployment's rollout options) may be left out.
  const optional = value === undefined && schema.safeParse(undefined).success;
  if (where === "body" && !optional && (value === undefined || value === null)) {
    throw new AppError("invalid_request", "Invalid request: a JSON object body is required", {
      fields: [{ path: "body", message: "a JSON object is required" }],
    });
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = describeIssues(result.error.issues, where, value);
  throw new AppError(
    "invalid_request",
    `Invalid request: ${fields.map((f) => `${f.path} ${f.message}`).join("; ")}`,
    {
      fields,
    },
  );
}

/** A binary endpoint's body: the raw bytes of an `application/octet-stream` request. */
function rawBody(request: FastifyRequest): Uint8Array {
  if (request.body instanceof Uint8Array) return request.body;
  if (
    request.body === undefined &&
    /^application\/octet-stream\b/i.test(request.headers["content-type"] ?? "")
  ) {
    return new Uint8Array(0);
  }
  throw new AppError("unsupported_media_type", "Send the file as application/octet-stream");
}

/** Raw bytes are only for binary endpoints; every other body is JSON. */
function jsonBody(spec: Endpoint, body: unknown): unknown {
  if (body instanceof Uint8Array) {
    throw new AppError("unsupported_media_type", "Send request bodies as application/json");
  }
  return spec.body ? parseInput(spec.body, body, "body") : undefined;
}

/**
 * Registers one endpoint of the table in @sdk/protocol: authenticates, checks the role, validates
 * input, calls the handler and wraps its result in the success envelope.
 */
export function route<N extends EndpointName>(
  app: FastifyInstance,
  services: Services,
  name: N,
  handler: (input: RouteInput<N>) => Promise<EndpointResult<N>>,
): void {
  const spec: Endpoint = endpoints[name];
  app.route({
    method: spec.method,
    url: spec.path,
    ...(spec.bodyLimit ? { bodyLimit: spec.bodyLimit } : {}),
    handler: async (request, reply) => {
      const principal = spec.access === "public" ? null : await authenticate(request, services.auth);
      if (spec.access === "admin" && principal?.user.role !== "admin") {
        throw new AppError("forbidden", "Only admins can do this");
      }
      const input = {
        params: request.params as Record<string, string>,
        body: spec.binary === "body" ? rawBody(request) : jsonBody(spec, request.body),
        query: spec.query ? parseInput(spec.query, request.query, "query") : undefined,
        principal,
        request,
        reply,
      } as RouteInput<N>;
      const result = await handler(input);
      reply.code(spec.status ?? 200);
      if (spec.binary === "result") {
        reply.type("application/octet-stream");
        if (!(result instanceof Uint8Array)) return result; // a stream (a backup): sent as it is read
        const bytes = result;
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      }
      return { success: true, result };
    },
  });
}
