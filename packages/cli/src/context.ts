import { loadProjectConfig, ProjectConfigError } from "@sdk/build";
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

/**
 * The project's sdk.ts; a missing or broken one is a CliError that says what to do, with `instead`
 * as the other way out (e.g. "pass --project prj_…").
 */
export async function readProjectConfig(
  g: Globals,
  instead: string,
): Promise<Awaited<ReturnType<typeof loadProjectConfig>>> {
  try {
    return await loadProjectConfig(g.dir);
  } catch (error) {
    if (!(error instanceof ProjectConfigError)) throw error;
    if (error.missing) {
      throw new CliError(`No sdk.ts in ${g.dir}: run sdk init to make a project here, or ${instead}`);
    }
    const { file, line, column, message } = error.diagnostic;
    throw new CliError(`${file}:${line}:${column}: ${message}\nFix sdk.ts, or ${instead}`);
  }
}

/** The server project this directory is linked to: `--project`, else `project` in sdk.ts. */
export async function projectId(g: Globals): Promise<string> {
  if (g.project) return g.project;
  const config = await readProjectConfig(g, "pass --project prj_…");
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
