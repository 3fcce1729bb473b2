// A TLS-terminating proxy (standing in for Caddy, nginx or Traefik in front of the server): each
// TLS connection on 127.0.0.1 is piped to a plain TCP target.
import fs from "node:fs";
import net from "node:net";
import tls from "node:tls";

export interface TlsProxyOptions {
  /** PEM files: the server's private key and certificate. */
  key: string;
  cert: string;
  target: { host: string; port: number };
  /** OpenSSL cipher list for TLS 1.2 and below (e.g. "ECDHE-RSA-AES128-GCM-SHA256"). */
  ciphers?: string;
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
}

export interface TlsProxy {
  port: number;
  /** One entry per completed handshake: "<version> <cipher>", e.g. "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256". */
  handshakes: string[];
  /** One entry per failed handshake: the error's message (e.g. "no shared cipher"). */
  failures: string[];
  close(): Promise<void>;
}

export async function startTlsProxy(options: TlsProxyOptions): Promise<TlsProxy> {
  const handshakes: string[] = [];
  const failures: string[] = [];
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = tls.createServer(
    {
      key: fs.readFileSync(options.key),
      cert: fs.readFileSync(options.cert),
      ...(options.ciphers !== undefined && { ciphers: options.ciphers }),
      ...(options.minVersion !== undefined && { minVersion: options.minVersion }),
      ...(options.maxVersion !== undefined && { maxVersion: options.maxVersion }),
    },
    (client) => {
      const cipher = client.getCipher();
      handshakes.push(`${cipher.version} ${cipher.name}`);
      const upstream = net.connect(options.target.port, options.target.host);
      track(upstream);
      const destroy = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", destroy);
      upstream.on("error", destroy);
      client.pipe(upstream);
      upstream.pipe(client);
    },
  );
  server.on("connection", track);
  server.on("tlsClientError", (error) => failures.push(error.message));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    handshakes,
    failures,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
