import { errorCatalog, errorDocsPath } from "@sdk/protocol";
import type { FastifyInstance } from "fastify";
import type { WebSocketServer } from "ws";
import { AppError } from "../errors.ts";

/** A WebSocket path's answer to a plain HTTP request (no `Upgrade: websocket`). */
export function notAnUpgrade(): never {
  throw new AppError(
    "upgrade_required",
    "This path is a WebSocket: connect with a WebSocket client (the request had no Upgrade: websocket)",
  );
}

/**
 * A malformed handshake (bad Sec-WebSocket-Key or -Version, …) is refused by the ws library before
 * any route runs; it answers in the same envelope as every other error instead of ws's plain text.
 */
export function installUpgradeRefusals(app: FastifyInstance, publicUrl: string | null): void {
  refuseMalformedHandshakes(app.websocketServer, publicUrl);
}

/** The same refusal for a `ws` server of our own (the device socket's). */
export function refuseMalformedHandshakes(wss: WebSocketServer, publicUrl: string | null): void {
  wss.on("wsClientError", (error: Error, socket, request) => {
    if (!socket.writable) return socket.destroy();
    const code = "upgrade_required" as const;
    const base = publicUrl ?? `http://${request.headers.host ?? "localhost"}`;
    const body = JSON.stringify({
      success: false,
      error: {
        code,
        message: `${errorCatalog[code].message}, but the handshake was refused: ${error.message}`,
        docs: `${base}${errorDocsPath}#${code}`,
      },
    });
    socket.end(
      [
        "HTTP/1.1 400 Bad Request",
        "Connection: close",
        "Content-Type: application/json; charset=utf-8",
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...(/Version/.test(error.message) ? ["Sec-WebSocket-Version: 13"] : []),
        "",
        body,
      ].join("\r\n"),
    );
  });
}
