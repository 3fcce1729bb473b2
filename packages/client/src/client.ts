import {
  type Board,
  type Endpoint,
  type EndpointBody,
  type EndpointName,
  type EndpointResult,
  type Endpoints,
  endpoints,
  type FirmwareRelease,
} from "@sdk/protocol";
import { SdkApiError, SdkNetworkError } from "./errors.ts";

type PathParams<P extends string> = P extends `${string}:${infer Param}/${infer Rest}`
  ? Param | PathParams<`/${Rest}`>
  : P extends `${string}:${infer Param}`
    ? Param
    : never;

/** What one call needs: path parameters named in its path, its body, its query. */
export type CallInput<N extends EndpointName> = ([PathParams<Endpoints[N]["path"]>] extends [never]
  ? { params?: undefined }
  : { params: Record<PathParams<Endpoints[N]["path"]>, string> }) &
  (EndpointBody<N> extends undefined
    ? { body?: undefined }
    : undefined extends EndpointBody<N>
      ? { body?: EndpointBody<N> }
      : { body: EndpointBody<N> }) & {
    query?: Record<string, string | number | undefined>;
    /** Gives up on the call when it aborts (Ctrl-C, a time limit): an `SdkNetworkError`. */
    signal?: AbortSignal;
  };

type HasRequiredInput<N extends EndpointName> = [PathParams<Endpoints[N]["path"]>] extends [never]
  ? EndpointBody<N> extends undefined
    ? false
    : true
  : true;

/** One method per endpoint, named as in the endpoint table (`client.api.createProject({ body })`). */
export type Api = {
  [N in EndpointName]: HasRequiredInput<N> extends true
    ? (input: CallInput<N>) => Promise<EndpointResult<N>>
    : (input?: CallInput<N>) => Promise<EndpointResult<N>>;
};

export interface ClientOptions {
  /** The server, e.g. `http://pi.local:8080`. */
  baseUrl: string;
  /** An API token; without one, a browser's session cookie is used. */
  token?: string;
  fetch?: typeof fetch;
}

/** A typed client for the sdk server's REST API. */
export class SdkClient {
  readonly baseUrl: string;
  readonly api: Api;
  #token: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.api = Object.fromEntries(
      (Object.keys(endpoints) as EndpointName[]).map((name) => [
        name,
        (input?: CallInput<EndpointName>) => this.call(name, (input ?? {}) as never),
      ]),
    ) as unknown as Api;
  }

  get token(): string | undefined {
    return this.#token;
  }

  /** Use this API token from now on (after login, say). */
  setToken(token: string | undefined): void {
    this.#token = token;
  }

  async call<N extends EndpointName>(name: N, input: CallInput<N>): Promise<EndpointResult<N>> {
    const spec = endpoints[name];
    const params = (input.params ?? {}) as Record<string, string>;
    let path: string = spec.path.replace(/:(\w+)/g, (_, key: string) => {
      const value = params[key];
      if (value === undefined) throw new TypeError(`${name}: missing path parameter ${key}`);
      return encodeURIComponent(value);
    });
    if (input.query) {
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(input.query))
        if (value !== undefined) search.set(key, String(value));
      const text = search.toString();
      if (text) path += `?${text}`;
    }
    const binary = (spec as Endpoint).binary;
    if (binary) return this.#binary(binary, spec.method, path, input.body) as Promise<EndpointResult<N>>;
    return this.request<EndpointResult<N>>(spec.method, path, input.body, input.signal);
  }

  /** One board's UF2 of a firmware release. */
  downloadFirmware(release: { version: string; board: Board }): Promise<Uint8Array> {
    return this.api.downloadFirmware({ params: release });
  }

  /** Stores your own build as a firmware release (admins only). */
  uploadFirmware(release: { version: string; board: Board; bytes: Uint8Array }): Promise<FirmwareRelease> {
    return this.api.uploadFirmware({
      params: { version: release.version, board: release.board },
      body: release.bytes,
    });
  }

  /** A deployment's bundle (`script.js`) as it was deployed. */
  downloadDeploymentBundle(deployment: { projectId: string; deploymentId: string }): Promise<Uint8Array> {
    return this.api.downloadDeploymentBundle({ params: deployment });
  }

  /** Liveness: `{ status: "ok" }`. */
  health(): Promise<{ status: string }> {
    return this.request("GET", "/health");
  }

  /** Readiness: `{ status: "ready", … }`; throws `SdkApiError` (503) when the database is unavailable. */
  ready(): Promise<{
    status: string;
    database: string;
    /** The database's size; SQLite: its free pages not yet given back; DATA_DIR's free space. */
    databaseBytes: number;
    databaseFreeBytes: number;
    /** SQLite: the write-ahead log's size, on disk besides databaseBytes; PostgreSQL: 0. */
    databaseWalBytes: number;
    dataDirFreeBytes: number | null;
    databaseMaxBytes: number | null;
    /** DATA_DIR has less than DISK_LOW_MB free. */
    diskLow: boolean;
  }> {
    return this.request("GET", "/ready");
  }

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const json = body === undefined ? undefined : JSON.stringify(body);
    const response = await this.#send(method, path, json, "application/json", "application/json", signal);
    return this.#envelope<T>(response, path);
  }

  /** Raw bytes up (`"body"`) or down (`"result"`); errors still come as the JSON envelope. */
  async #binary(kind: "body" | "result", method: string, path: string, body: unknown): Promise<unknown> {
    if (kind === "body") {
      const bytes = body as Uint8Array;
      const response = await this.#send(
        method,
        path,
        bytes as RequestInit["body"],
        "application/octet-stream",
        "application/json",
      );
      return this.#envelope(response, path);
    }
    const response = await this.#send(
      method,
      path,
      undefined,
      undefined,
      "application/octet-stream, application/json",
    );
    if (response.ok && !/json/.test(response.headers.get("content-type") ?? "")) {
      return new Uint8Array(await response.arrayBuffer());
    }
    return this.#envelope(response, path);
  }

  async #send(
    method: string,
    path: string,
    body: RequestInit["body"] | undefined,
    contentType: string | undefined,
    accept: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { accept };
    if (body !== undefined && contentType) headers["content-type"] = contentType;
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    try {
      return await this.#fetch(url, { method, headers, body, credentials: "same-origin", signal });
    } catch (error) {
      if (signal?.aborted)
        throw new SdkNetworkError(url, `No answer from ${this.baseUrl}: ${abortReason(signal)}`, {
          cause: error,
        });
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new SdkNetworkError(
        url,
        `Could not reach ${this.baseUrl}${cause ? ` (${cause})` : ""}: is the server running and the address right?`,
        { cause: error },
      );
    }
  }

  async #envelope<T>(response: Response, path: string): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    let payload: unknown;
    try {
      payload = await response.json();
    } catch (error) {
      throw new SdkNetworkError(
        url,
        `${this.baseUrl} answered HTTP ${response.status} without JSON: is this an sdk server?`,
        {
          cause: error,
        },
      );
    }
    const envelope = payload as {
      success?: boolean;
      result?: T;
      error?: ConstructorParameters<typeof SdkApiError>[1];
    };
    if (envelope.success === true) return envelope.result as T;
    if (envelope.success === false && envelope.error) throw new SdkApiError(response.status, envelope.error);
    throw new SdkNetworkError(
      url,
      `${this.baseUrl} answered HTTP ${response.status} with an unexpected body`,
    );
  }

  /**
   * A backup of the whole server (admins only) as a stream, for writing to a file as it comes:
   * `sdk-backup-<time>.tar.gz`, its file count, uncompressed size and database dialect.
   */
  async streamBackup(): Promise<BackupDownload> {
    const path = endpoints.downloadBackup.path;
    const response = await this.#send(
      "GET",
      path,
      undefined,
      undefined,
      "application/octet-stream, application/json",
    );
    if (!response.ok || /json/.test(response.headers.get("content-type") ?? "") || !response.body)
      return this.#envelope(response, path);
    const filename = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1];
    return {
      // Only a bare name of the expected form: a header naming "../x" or "/etc/x" is ignored.
      filename:
        filename && /^sdk-backup-[0-9A-Za-z-]+\.tar\.gz$/.test(filename) ? filename : "sdk-backup.tar.gz",
      files: Number(response.headers.get("x-sdk-backup-files") ?? 0),
      bytes: Number(response.headers.get("x-sdk-backup-bytes") ?? 0),
      dialect: response.headers.get("x-sdk-backup-dialect") ?? "sqlite",
      body: response.body,
    };
  }
}

/** "timed out" for AbortSignal.timeout, else "the call was abandoned". */
function abortReason(signal: AbortSignal): string {
  return (signal.reason as { name?: string } | undefined)?.name === "TimeoutError"
    ? "the request timed out"
    : "the call was abandoned";
}

interface BackupDownload {
  filename: string;
  /** Files in the archive (manifest.json aside). */
  files: number;
  /** Their total size before compression. */
  bytes: number;
  /** `postgres`: the database is not in the archive (back it up with pg_dump). */
  dialect: string;
  body: ReadableStream<Uint8Array>;
}
