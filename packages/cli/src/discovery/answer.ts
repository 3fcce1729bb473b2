import net from "node:net";

/** Longest name or version shown from an answer; a longer one is cut with "…". */
const maxShown = 80;

/** C0/C1 controls (ESC among them), line separators and the bidirectional-text controls. */
const unsafe = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * A value from an mDNS answer made safe to print: anyone on the LAN can answer, so no terminal
 * escapes, no text direction tricks, and a bounded length (cut by code points).
 */
export function printable(value: unknown, max = maxShown): string {
  if (typeof value !== "string") return "";
  const chars = [...value.replace(unsafe, "")];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : chars.join("");
}

const bare = (host: string) => host.replace(/^\[|\]$/g, "").toLowerCase();

/**
 * The URL to log in to: the advertised one (TXT `url`, the server's PUBLIC_URL) only when it is
 * http(s), without credentials, and names the address the answer came from, so a responder cannot
 * send the password to another host; else http://<that address>:<port>.
 */
export function loginUrl(advertised: unknown, responder: string, port: number): string {
  const fallback = `http://${net.isIPv6(responder) ? `[${responder}]` : responder}:${port}`;
  if (typeof advertised !== "string" || !responder) return fallback;
  let url: URL;
  try {
    url = new URL(advertised);
  } catch {
    return fallback;
  }
  const safe =
    (url.protocol === "http:" || url.protocol === "https:") &&
    !url.username &&
    !url.password &&
    bare(url.hostname) === bare(responder);
  if (!safe) return fallback;
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}
