import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP server on loopback that answers every request with `status` and keeps each body with its
 * signature headers; `hookUrl` is its /hook address. The caller closes it (`close`).
 */
export async function webhookReceiver(status: number) {
  const received: { raw: string; signature: string; timestamp: string }[] = [];
  const receiver = http.createServer((request, response) => {
    let raw = "";
    request.on("data", (chunk) => {
      raw += chunk;
    });
    request.on("end", () => {
      received.push({
        raw,
        signature: String(request.headers["x-sdk-signature"]),
        timestamp: String(request.headers["x-sdk-timestamp"]),
      });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const close = () => new Promise<void>((resolve) => receiver.close(() => resolve()));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  return { received, hookUrl, close };
}
