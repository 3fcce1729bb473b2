import { type Endpoint, ErrorEnvelope, endpoints, successEnvelope } from "@sdk/protocol";
import { z } from "zod";

const jsonSchema = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { io, unrepresentable: "any", target: "openapi-3.0" });

const bytes = { type: "string", format: "binary" };

/** The OpenAPI 3 description of the REST API, generated from the endpoint table in @sdk/protocol. */
export function buildOpenApi(version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, spec] of Object.entries(endpoints) as [string, Endpoint][]) {
    const path = spec.path.replace(/:(\w+)/g, "{$1}");
    const params = [...spec.path.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const query = spec.query
      ? Object.entries(spec.query.shape).map(([key, schema]) => ({
          name: key,
          in: "query",
          required: false,
          schema: jsonSchema(schema as z.ZodType, "input"),
        }))
      : [];
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = {
      operationId: name,
      summary: spec.summary,
      security: spec.access === "public" ? [] : [{ bearer: [] }, { session: [] }],
      parameters: [...params, ...query],
      ...(spec.body
        ? {
            requestBody: {
              required: true,
              content:
                spec.binary === "body"
                  ? { "application/octet-stream": { schema: bytes } }
                  : { "application/json": { schema: jsonSchema(spec.body, "input") } },
            },
          }
        : {}),
      responses: {
        [String(spec.status ?? 200)]: {
          description: "Success",
          content:
            spec.binary === "result"
              ? { "application/octet-stream": { schema: bytes } }
              : { "application/json": { schema: jsonSchema(successEnvelope(spec.result), "output") } },
        },
        default: {
          description: "Error (see /docs/errors)",
          content: { "application/json": { schema: jsonSchema(ErrorEnvelope, "output") } },
        },
      },
    };
  }
  return {
    openapi: "3.0.3",
    info: { title: "sdk server API", version, license: { name: "AGPL-3.0-only" } },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API token (sdk_…)" },
        session: { type: "apiKey", in: "cookie", name: "sdk_session" },
      },
    },
    paths,
  };
}
