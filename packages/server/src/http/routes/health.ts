import type { FastifyInstance } from "fastify";
import { AppError } from "../../errors.ts";
import type { Services } from "../../services/index.ts";

/** Liveness never touches the database; readiness proves a write succeeds. */
export function healthRoutes(app: FastifyInstance, services: Services): void {
  app.get("/health", async () => ({ success: true, result: { status: "ok" } }));
  app.get("/ready", async (request) => {
    try {
      return { success: true, result: await services.readiness.check() };
    } catch (error) {
      request.log.warn({ err: error }, "readiness check failed");
      const disk = await services.readiness.disk();
      throw new AppError("database_unavailable", "Database unavailable: a test write did not succeed", {
        ...(disk ? { details: { ...disk } } : {}),
      });
    }
  });
}
