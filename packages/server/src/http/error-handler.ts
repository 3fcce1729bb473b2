import { type ErrorCode, errorCatalog } from "@sdk/protocol";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError, isDatabaseUnavailable } from "../errors.ts";
import { docsUrl } from "./docs-url.ts";

const invalid = (why: string) => new AppError("invalid_request", `Invalid request: ${why}`);

/** Fastify's errors that a request can cause, each as a catalogued error that says what to do. */
const requestErrors: Record<string, (error: FastifyError) => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError("payload_too_large"),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError("unsupported_media_type"),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => invalid("the body is empty but Content-Type says JSON"),
  FST_ERR_CTP_INVALID_JSON_BODY: () => invalid("the body is not valid JSON"),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => invalid("Content-Length does not match the body"),
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: () => invalid("send a Content-Type header with the body"),
  FST_ERR_ROUTE_MISSING_CONTENT: () => invalid("this method needs a request body"),
  FST_ERR_VALIDATION: (error) => invalid(error.message),
  FST_ERR_BAD_URL: () =>
    invalid("the URL has a malformed percent-encoding (a % must be followed by two hex digits of UTF-8)"),
  FST_ERR_INVALID_URL: () => invalid("the URL is not valid"),
  FST_ERR_MAX_PARAM_LENGTH: () =>
    invalid(`a part of the path is longer than ${maxPathParamLength} characters; no name or id is that long`),
  FST_ERR_NOT_FOUND: () => new AppError("not_found"),
};

/** A request error from elsewhere (a plugin, a library) with its status: the catalogued code for it. */
const codeByStatus: Record<number, ErrorCode> = {
  401: "authentication_required",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  410: "gone",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
};

/** The longest path parameter the router matches (Fastify's `maxParamLength`). */
export const maxPathParamLength = 100;

/** Any error as a catalogued one; errors the request did not cause are `internal_error`. */
export function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error;
  const known = typeof error.code === "string" && Object.hasOwn(requestErrors, error.code);
  if (known) return requestErrors[error.code]!(error);
  if (error instanceof SyntaxError) return invalid("the body is not valid JSON");
  if (isDatabaseUnavailable(error)) return new AppError("database_unavailable");
  const status = error.statusCode;
  if (!error.code?.startsWith("FST_") && typeof status === "number" && status >= 400 && status < 500) {
    const code = Object.hasOwn(codeByStatus, status) ? codeByStatus[status] : undefined;
    return code ? new AppError(code) : invalid(error.message);
  }
  return new AppError("internal_error");
}

function sendError(
  reply: FastifyReply,
  request: FastifyRequest,
  publicUrl: string | null,
  error: AppError,
): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).send({
    success: false,
    error: {
      code: error.code,
      message: error.message,
      docs: docsUrl(request, publicUrl, error.code),
      ...(error.fields ? { fields: error.fields } : {}),
      ...(error.details ? { details: error.details } : {}),
    },
  });
}

/** Fastify's `frameworkErrors` option: errors met before routing (a bad URL, an overlong parameter). */
export function frameworkErrorHandler(publicUrl: string | null) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
    sendError(reply, request, publicUrl, toAppError(error));
}

/** One handler for every error: the envelope `{ success: false, error: { code, message, docs } }`. */
export function installErrorHandling(
  app: FastifyInstance,
  publicUrl: string | null,
  fallback: (request: FastifyRequest, reply: FastifyReply) => boolean = () => false,
): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error);
    if (appError.code === "internal_error" || appError.code === "database_unavailable") {
      request.log.error({ err: error }, "request failed");
    }
    return sendError(reply, request, publicUrl, appError);
  });
  app.setNotFoundHandler((request, reply) => {
    if (fallback(request, reply)) return reply;
    const code: ErrorCode = "not_found";
    return sendError(
      reply,
      request,
      publicUrl,
      new AppError(code, `${errorCatalog[code].message}: ${request.method} ${request.url.split("?")[0]}`),
    );
  });
}
