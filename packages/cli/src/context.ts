import { loadProjectConfig } from "@sdk/build";
import { SdkApiError, SdkClient, SdkNetworkError } from "@sdk/client";
import { normalizeHost, resolveCredentials } from "@sdk/client/credentials";
import { CliError, UsageError } from "./errors.ts";
import type { Output } from "./output.ts";

/** Flags every command understands. */
export interface Globals {
  json: boolean;
  host?: string;
  project?: string;
  /** The project directory (default: the current one). */
  dir: string;
  env: Record<string, string | undefined>;
  out: Output;
}

export interface Connection {
  client: SdkClient;
  host: string;
  /** Where the credential came from. */
  source: "SDK_TOKEN" | "credentials";
}

/**
 * The server and credential to use. `SDK_TOKEN` (CI) wins over the credentials file; its host comes
 * from `--host`, else `SDK_HOST`. Without `SDK_TOKEN`: the saved login for `--host` (or `SDK_HOST`),
 * else for the host last logged in to.
 */
export async function connect(g: Globals): Promise<Connection> {
  const hostFlag = g.host ?? g.env.SDK_HOST;
  const found = await resolveCredentials(g.env, g.host);
  if (found && "error" in found)
    throw new UsageError("SDK_TOKEN is set but no server is named: pass --host or set SDK_HOST");
  if (!found) {
    const where = hostFlag ? ` to ${normalizeHost(hostFlag)}` : "";
    throw new CliError(
      `Not logged in${where}. Run: sdk login --host ${hostFlag ? normalizeHost(hostFlag) : "http://<server>:8080"}`,
    );
  }
  return {
    client: new SdkClient({ baseUrl: found.host, token: found.token }),
    host: found.host,
    source: found.source,
  };
}

/** The server project this directory is linked to: `--project`, else `project` in sdk.ts. */
export async function projectId(g: Globals): Promise<string> {
  if (g.project) return g.project;
  let config: Awaited<ReturnType<typeof loadProjectConfig>>;
  try {
    config = await loadProjectConfig(g.dir);
  } catch (error) {
    throw new CliError(
      `No project given and none linked here (${(error as Error).message.replace(/^sdk\.ts:1:1 - error: /, "")}). Pass --project prj_… or run this in a directory made by sdk init.`,
    );
  }
  if (!config.project)
    throw new CliError('sdk.ts has no `project`: add project: "prj_…" or pass --project prj_…');
  return config.project;
}

/** Turns client errors into what the CLI prints. */
export function explain(error: unknown): unknown {
  if (error instanceof SdkApiError) {
    return new CliError(error.message, { code: error.code, docs: error.docs });
  }
  if (error instanceof SdkNetworkError) return new CliError(error.message);
  return error;
}
