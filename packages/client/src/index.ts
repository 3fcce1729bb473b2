export { type Api, type CallInput, type ClientOptions, SdkClient } from "./client.ts";
export { SdkApiError, SdkNetworkError } from "./errors.ts";
