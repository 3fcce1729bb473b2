import { createHmac } from "node:crypto";
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { type PrivateRange, refusedTarget } from "./webhook-target.ts";

/**
 * `sha256=<hex>`: HMAC-SHA256 of `<timestamp>.<raw body>` with the webhook's secret, where the
 * timestamp is the `X-Sdk-Timestamp` header: a receiver that also checks the timestamp is recent
 * refuses a replayed request.
 */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

class RefusedTargetError extends Error {}

/** Resolves like the default lookup, then refuses the connection when any address is in a refused range. */
function guardedLookup(allowed: readonly PrivateRange[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 4);
      for (const { address } of addresses) {
        const why = refusedTarget(address, allowed);
        if (why) return callback(new RefusedTargetError(`${hostname} resolves to ${why}`), "", 4);
      }
      if (options.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} has no address`), "", 4);
      callback(null, first.address, first.family);
    });
  };
}

/** Why the URL's target is refused, or `null`: an IP literal is checked here, a name once resolved. */
export async function checkWebhookUrl(url: string, allowed: readonly PrivateRange[]): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return refusedTarget(host, allowed);
  const addresses = await new Promise<LookupAddress[]>((resolve) =>
    dnsLookup(host, { all: true }, (error, list) => resolve(error ? [] : list)),
  );
  for (const { address } of addresses) {
    const why = refusedTarget(address, allowed);
    if (why) return `${host} resolves to ${why}`;
  }
  return null;
}

export interface PostOutcome {
  status: number | null;
  error: string | null;
}

/**
 * One POST attempt. Never follows redirects (a 3xx counts as a failure) and never throws: the
 * outcome says what the receiver answered, or why there was no answer. The attempt settles when
 * the status line arrives (the body is not read); `deadlineMs` bounds the whole attempt (connect,
 * send, status line), so a receiver that trickles bytes cannot hold it, and `signal` aborts it.
 */
export async function postWebhook(options: {
  url: string;
  body: string;
  headers: Record<string, string>;
  allowed: readonly PrivateRange[];
  deadlineMs: number;
  signal?: AbortSignal;
}): Promise<PostOutcome> {
  const refused = await literalRefusal(options.url, options.allowed);
  if (refused) return { status: null, error: `refused: ${refused}` };
  const target = new URL(options.url);
  const transport = target.protocol === "https:" ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(outcome);
    };
    const request = transport.request(
      target,
      {
        method: "POST",
        headers: { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) },
        lookup: guardedLookup(options.allowed),
        // A fresh connection each attempt: a pooled socket would skip the address check.
        agent: false,
        timeout: options.deadlineMs,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        settle({ status, error: ok ? null : `the receiver answered ${status}` });
        // The answer is in; the body is not needed, and a slow one must not hold the socket.
        request.destroy();
      },
    );
    const fail = (message: string) => {
      settle({ status: null, error: message });
      request.destroy();
    };
    const deadline = setTimeout(
      () => fail(`no answer within ${options.deadlineMs / 1000} s`),
      options.deadlineMs,
    );
    const onAbort = () => fail("aborted: the server is shutting down");
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    request.on("timeout", () => fail(`no answer within ${options.deadlineMs / 1000} s`));
    request.on("error", (error) =>
      settle({
        status: null,
        error: error instanceof RefusedTargetError ? `refused: ${error.message}` : error.message,
      }),
    );
    request.end(options.body);
  });
}

async function literalRefusal(url: string, allowed: readonly PrivateRange[]): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  return isIP(host) ? refusedTarget(host, allowed) : null;
}
