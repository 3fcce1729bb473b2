export { type Api, type CallInput, type ClientOptions, SdkClient } from "./client.ts";
export { SdkApiError, SdkNetworkError } from "./errors.ts";
export { type WatchHandle, type WatchOptions, watchDevice } from "./watch.ts";
