import type { FastifyReply, FastifyRequest } from "fastify";
import { LogController } from "fastify";

/** One line per request (`GET /v1/projects 200 3ms`) with structured fields, instead of two. */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    const path = request.url.split("?")[0];
    const fields = { method: request.method, path, status: reply.statusCode, ms, ip: request.ip };
    if (error)
      reply.log.error({ ...fields, err: error }, `${request.method} ${path} ${reply.statusCode} ${ms}ms`);
    else reply.log.info(fields, `${request.method} ${path} ${reply.statusCode} ${ms}ms`);
  }
}
