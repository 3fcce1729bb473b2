import net from "node:net";

export const host = "127.0.0.1";

/** A TCP port that was free a moment ago on the loopback address. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Resolves once `port` accepts TCP connections (polled every `everyMs`). */
export async function waitForPort(port: number, timeoutMs: number, everyMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await accepts(port))) {
    if (performance.now() > deadline)
      throw new Error(`nothing listening on ${host}:${port} after ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
