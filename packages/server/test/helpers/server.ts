export {
  createTestServer,
  startTestServer,
  type TestServer,
  tempDir,
} from "@sdk/test-helpers";

/** Raw fetch against the server, for what the typed client would not send. */
export async function raw(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const response = await fetch(url, { ...init, headers, body, redirect: "manual" });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body: parsed };
}
