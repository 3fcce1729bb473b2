import { type Api, SdkApiError, SdkClient, SdkNetworkError } from "@sdk/client";
import { type ErrorBody, type ErrorCode, isErrorCode } from "@sdk/protocol";

/** The one client: same origin, no token, so the browser's session cookie is used. */
const client = new SdkClient({ baseUrl: location.origin });

type Listener = () => void;
const sessionEndedListeners = new Set<Listener>();

/** Called when the server says the session is gone (expired, or signed out elsewhere). */
export function onSessionEnded(listener: Listener): () => void {
  sessionEndedListeners.add(listener);
  return () => sessionEndedListeners.delete(listener);
}

export function isSessionEnded(error: unknown): boolean {
  return (
    error instanceof SdkApiError &&
    error.status === 401 &&
    (error.code === "authentication_required" || error.code === "invalid_token")
  );
}

/**
 * `client.api`, with one addition: an answer saying the session has ended tells the listeners,
 * so the app can send the user to the sign-in page whatever page they are on.
 */
export const api: Api = Object.fromEntries(
  Object.entries(client.api).map(([name, call]) => [
    name,
    async (input?: never) => {
      try {
        return await (call as (input?: never) => Promise<unknown>)(input);
      } catch (error) {
        if (isSessionEnded(error) && name !== "whoami")
          for (const listener of sessionEndedListeners) listener();
        throw error;
      }
    },
  ]),
) as unknown as Api;

/** An error, said in plain words for people, with the server's docs link when it gave one. */
export interface Problem {
  title: string;
  message: string;
  code?: string;
  docs?: string;
  fields?: ErrorBody["fields"];
}

const titles: Partial<Record<ErrorCode, string>> = {
  invalid_request: "Some of what you entered is not accepted",
  authentication_required: "Please sign in",
  invalid_credentials: "Check what you typed",
  invalid_token: "Your session has ended",
  forbidden: "You are not allowed to do this",
  cross_site_request: "The request was refused",
  registration_closed: "Sign-up is closed",
  not_found: "Not found",
  conflict: "That clashes with something that already exists",
  last_admin: "At least one admin must remain",
  no_script: "No script is running for this device",
  device_offline: "The device is offline",
  device_error: "The device reported an error",
  device_timeout: "The device did not answer in time",
  rate_limited: "Too many attempts",
  payload_too_large: "That is too large",
  database_unavailable: "The server's database is unavailable",
  internal_error: "Something went wrong on the server",
};

export function describeError(error: unknown): Problem {
  if (error instanceof SdkApiError) {
    return {
      title: (isErrorCode(error.code) ? titles[error.code] : undefined) ?? "The server refused this",
      message: error.message,
      code: error.code,
      docs: error.docs,
      fields: error.fields,
    };
  }
  if (error instanceof SdkNetworkError) {
    return {
      title: "Could not reach the server",
      message: "Check your connection and that the server is running, then try again.",
    };
  }
  return { title: "Something went wrong", message: error instanceof Error ? error.message : String(error) };
}

export function isNotFound(error: unknown): boolean {
  return error instanceof SdkApiError && error.status === 404;
}
