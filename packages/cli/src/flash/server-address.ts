import { deviceSocketUrl } from "@sdk/protocol";

/**
 * The address to put on the board for the server the CLI talks to. `http://h:8080` becomes
 * `h:8080` (a port means plain ws://), `http://h` becomes `h:80`, `https://h` becomes `h` (TLS on
 * 443); `https://h:8443` stays a URL, since `h:8443` would mean plain ws://.
 */
export function boardServerAddress(host: string): string {
  const url = new URL(host);
  if (url.protocol === "https:" || url.protocol === "wss:")
    return url.port ? `https://${url.host}` : url.hostname;
  return `${url.hostname}:${url.port || "80"}`;
}

/** The socket URL a board derives from the address, or a sentence saying why it cannot use it. */
export function socketUrlOf(address: string): { url: string } | { error: string } {
  try {
    return { url: deviceSocketUrl(address) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** Whether the URL's host is this computer, which a board on the network cannot reach. */
export function isLoopback(socketUrl: string): boolean {
  const host = new URL(socketUrl).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    /^127\./.test(host) ||
    host === "::1" ||
    host === "0.0.0.0" ||
    host === "::"
  );
}
