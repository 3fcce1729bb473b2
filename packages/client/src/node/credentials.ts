// Node only (files in the user's home): the saved logins shared by the sdk CLI and the MCP server.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export interface SavedLogin {
  token: string;
  tokenId: string;
  email: string;
  userId: string;
  savedAt: string;
}

interface CredentialsFile {
  version: 1;
  /** The host `sdk` talks to when no --host is given: the last one logged in to. */
  current: string | null;
  hosts: Record<string, SavedLogin>;
}

export function credentialsPath(): string {
  return path.join(os.homedir(), ".sdk", "credentials.json");
}

/** `http://pi.local:8080/` → `http://pi.local:8080`. */
export function normalizeHost(host: string): string {
  const withScheme = /^[a-z]+:\/\//i.test(host) ? host : `http://${host}`;
  const url = new URL(withScheme);
  return `${url.protocol}//${url.host}`;
}

async function read(): Promise<CredentialsFile> {
  try {
    const parsed = JSON.parse(await fs.readFile(credentialsPath(), "utf8")) as CredentialsFile;
    if (parsed.version === 1 && parsed.hosts) return parsed;
  } catch {
    // missing or unreadable: start afresh
  }
  return { version: 1, current: null, hosts: {} };
}

async function write(file: CredentialsFile): Promise<void> {
  const target = credentialsPath();
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const temp = `${target}.${process.pid}.tmp`;
  await fs.writeFile(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await fs.rename(temp, target);
  await fs.chmod(target, 0o600);
}

/** The login for a host, or for the current host when none is given. */
/**
 * The server and token to use. `SDK_TOKEN` (CI) wins over the credentials file; its host comes
 * from `host`, else `SDK_HOST`. Without `SDK_TOKEN`: the saved login for `host` (or `SDK_HOST`),
 * else for the host last logged in to. `null` when there is none.
 */
export async function resolveCredentials(
  env: Record<string, string | undefined>,
  host?: string,
): Promise<
  { host: string; token: string; source: "SDK_TOKEN" | "credentials" } | { error: "no_host_for_token" } | null
> {
  const hostFlag = host ?? env.SDK_HOST;
  if (env.SDK_TOKEN) {
    if (!hostFlag) return { error: "no_host_for_token" };
    return { host: normalizeHost(hostFlag), token: env.SDK_TOKEN, source: "SDK_TOKEN" };
  }
  const saved = await loadLogin(hostFlag);
  return saved ? { host: saved.host, token: saved.login.token, source: "credentials" } : null;
}

export async function loadLogin(host?: string): Promise<{ host: string; login: SavedLogin } | null> {
  const file = await read();
  const key = host ? normalizeHost(host) : file.current;
  if (!key) return null;
  const login = file.hosts[key];
  return login ? { host: key, login } : null;
}

export async function saveLogin(host: string, login: SavedLogin): Promise<void> {
  const file = await read();
  const key = normalizeHost(host);
  file.hosts[key] = login;
  file.current = key;
  await write(file);
}

/** Forgets a host's login; returns what was removed. */
export async function removeLogin(host?: string): Promise<{ host: string; login: SavedLogin } | null> {
  const file = await read();
  const key = host ? normalizeHost(host) : file.current;
  if (!key || !file.hosts[key]) return null;
  const login = file.hosts[key];
  delete file.hosts[key];
  if (file.current === key) file.current = Object.keys(file.hosts)[0] ?? null;
  await write(file);
  return { host: key, login };
}
