/** Codes of the errors device calls throw or reject with. */
export type SdkErrorCode =
  | "invalid_argument"
  | "device_offline"
  | "device_timeout"
  | "device_error"
  | "script_timeout"
  | "internal_error";

let docsBaseUrl = "";

/**
 * Makes `SdkError.docs` absolute (`<base>/docs/errors#<code>`). The guest runtime calls it with the
 * server's base URL the sandbox provides; without it, `docs` is the path on your server.
 */
export function useDocsBaseUrl(base: string): void {
  docsBaseUrl = base.replace(/\/+$/, "");
}

/**
 * The error `this.env.DEVICE.*` calls throw (bad arguments, synchronously, before anything is sent)
 * or reject with (the device answered with an error, did not answer in time, or is offline).
 */
export class SdkError extends Error {
  /** A stable code, e.g. `invalid_argument`. */
  readonly code: SdkErrorCode;
  /**
   * Where the code is explained: `https://<your server>/docs/errors#<code>` inside a deployed or
   * `sdk dev` script; only the path `/docs/errors#<code>` where the server's URL is unknown.
   */
  readonly docs: string;

  constructor(code: SdkErrorCode, message: string) {
    super(message);
    this.name = "SdkError";
    this.code = code;
    this.docs = `${docsBaseUrl}/docs/errors#${code}`;
  }
}

/** Throws `SdkError` with code `invalid_argument`. */
export function invalid(message: string): never {
  throw new SdkError("invalid_argument", message);
}
