export { type Api, type CallInput, type ClientOptions, SdkClient } from "./client.ts";
export { SdkApiError, SdkNetworkError } from "./errors.ts";
export {
  type ProjectWatchFilters,
  type WatchHandle,
  type WatchOptions,
  watchDevice,
  watchProject,
} from "./watch.ts";
