import { type ErrorCode, errorCatalog } from "@sdk/protocol";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError, isDatabaseUnavailable } from "../errors.ts";
import { docsUrl } from "./docs-url.ts";

function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error;
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError("payload_too_large");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("unsupported_media_type");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("invalid_request", "Invalid request: the body is empty but Content-Type says JSON");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new AppError("invalid_request", "Invalid request: Content-Length does not match the body");
  }
  if (error instanceof SyntaxError || error.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return new AppError("invalid_request", "Invalid request: the body is not valid JSON");
  }
  if (isDatabaseUnavailable(error)) return new AppError("database_unavailable");
  if (typeof error.statusCode === "number" && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError("invalid_request", `Invalid request: ${error.message}`);
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
    },
  });
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
