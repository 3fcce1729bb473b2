/**
 * The one catalog of error codes the service can answer with. Every error body is
 * `{ success: false, error: { code, message, docs } }`; `docs` points at `/docs/errors#<code>`.
 * Codes are stable: clients may branch on them. Messages are for people.
 */
export const errorCatalog = {
  invalid_request: {
    status: 400,
    message: "Invalid request",
    description:
      "The request body, query or path parameters did not match what the endpoint accepts. The message names each bad field.",
  },
  authentication_required: {
    status: 401,
    message: "Authentication required",
    description:
      "The request carried no session cookie and no API token. Sign in on the dashboard, or send `Authorization: Bearer <token>`.",
  },
  invalid_credentials: {
    status: 401,
    message: "Invalid email or password",
    description:
      "The email and password do not match an account. The message never says which of the two was wrong.",
  },
  invalid_token: {
    status: 401,
    message: "Invalid or expired credentials",
    description:
      "The session cookie or API token is unknown, expired or revoked. Sign in again, or create a new API token.",
  },
  invalid_device_credentials: {
    status: 401,
    message: "Invalid device credentials",
    description:
      "A device connected with an unknown device id or a wrong or revoked secret. Re-flash the device, or issue new credentials for it and put them on the device.",
  },
  forbidden: {
    status: 403,
    message: "You are not allowed to do this",
    description:
      "The caller is signed in but lacks the role this action needs (for example, admin-only actions).",
  },
  cross_site_request: {
    status: 403,
    message: "Cross-site request refused",
    description:
      "A state-changing request came from another site (its Origin or Sec-Fetch-Site header says so). Use the dashboard served by this server, or an API token without cookies.",
  },
  registration_closed: {
    status: 403,
    message: "Registration is closed on this server",
    description:
      "The server runs with `ALLOW_REGISTRATION=false` and an admin account already exists. Ask the admin to create your account.",
  },
  not_found: {
    status: 404,
    message: "Not found",
    description:
      "The resource does not exist, or it belongs to a project you cannot see (the two look the same on purpose).",
  },
  conflict: {
    status: 409,
    message: "Conflict",
    description:
      "The request conflicts with existing data, for example an email address that is already registered.",
  },
  last_admin: {
    status: 409,
    message: "The last admin cannot be removed or demoted",
    description: "Every server keeps at least one admin account. Promote another user to admin first.",
  },
  no_script: {
    status: 409,
    message: "No script is running for this device",
    description:
      "The project has no live deployment, or its scripts were stopped after repeated failures. Deploy a script (`sdk deploy`) or roll back to a working deployment.",
  },
  invalid_firmware: {
    status: 400,
    message: "Invalid firmware image",
    description:
      "An uploaded UF2 file was refused: not a UF2 file (its size is not a multiple of 512 bytes, or a block has a bad magic number), a family id that does not match the board (RP2040 `0xe48bff56` for `pico_w`, RP2350 ARM-S `0xe48bff59` for `pico2_w`), or a block that writes at or above the config sector (the last two 4 KiB sectors of flash hold the device's configuration). The message says which.",
  },
  firmware_exists: {
    status: 409,
    message: "This firmware release already exists",
    description:
      "A release with this version already has a different UF2 for this board. Releases never change once stored: give your build a new version (uploading the same bytes again is fine).",
  },
  gone: {
    status: 410,
    message: "This endpoint has been removed",
    description:
      "The endpoint existed in an earlier release and was removed. `GET /logs/stream` was replaced by the watch WebSocket `/v1/projects/:projectId/devices/:deviceId/watch`.",
  },
  payload_too_large: {
    status: 413,
    message: "Request body too large",
    description: "The request body is larger than the endpoint accepts.",
  },
  unsupported_media_type: {
    status: 415,
    message: "Unsupported content type",
    description:
      "Send request bodies as `application/json`; the firmware upload alone takes `application/octet-stream`.",
  },
  device_offline: {
    status: 409,
    message: "The device is not connected",
    description:
      "A command was sent to a device that is offline, or the device disconnected before it answered. Check its power and Wi-Fi (2.4 GHz only), then try again.",
  },
  rate_limited: {
    status: 429,
    message: "Rate limit exceeded",
    description:
      "Too many failed sign-in or registration attempts from this address or for this account in a short window. Wait for the number of seconds in the `Retry-After` header, then try again. Only login and register are rate limited.",
  },
  deploys_throttled: {
    status: 429,
    message: "Too many failed deploys of this project",
    description:
      "The project's last deploys all failed (the script did not load or crashed while starting). After 3 failed deploys in a row the next one waits 10 seconds, and the pause doubles with each further failure, up to 5 minutes. Wait for the number of seconds in the `Retry-After` header, fix the error shown on the failed deployment, and deploy again. A deploy that goes live resets the count; other projects are not affected.",
  },
  internal_error: {
    status: 500,
    message: "Internal server error",
    description: "Something went wrong on the server. The server log has the details.",
  },
  device_error: {
    status: 502,
    message: "The device reported an error",
    description:
      "The device received the command but could not carry it out (for example an I2C device that does not answer). The message has the device's own words.",
  },
  device_not_reading: {
    status: 503,
    message: "The device is not reading what the server sends",
    description:
      'More than 256 KB the server sent to the device (script messages, commands) is still waiting for the device to read it, so the message or command was refused. The device is busy or stuck; if it stays that far behind for 10 seconds the server drops the connection (the device log says "disconnected (1008: not reading: …)"). Send less often, or fix the firmware so it keeps reading its socket.',
  },
  database_unavailable: {
    status: 503,
    message: "Database unavailable",
    description:
      "The server could not write to its database (a full disk, a lock held by another process, or PostgreSQL unreachable). `/ready` answers 503 until it can.",
  },
  device_timeout: {
    status: 504,
    message: "The device did not answer in time",
    description:
      "A command got no answer within the command timeout (`DEVICE_COMMAND_TIMEOUT_SECONDS`, default 10). The device may be busy, or its connection poor.",
  },
  invalid_argument: {
    status: 400,
    message: "Invalid argument",
    description:
      "A device call (`this.env.DEVICE.*`) was given a bad argument: a pin the board does not have or that cannot do this function, a value out of range, a bad I2C address, SPI, UART or WS2812 setting, or a message of 64 KB or more. It is thrown synchronously, before anything is sent to the device.",
  },
  script_timeout: {
    status: 500,
    message: "Script execution timeout",
    description:
      "A device script handler, timer or promise job ran longer than the execution deadline and was stopped. Look for infinite loops or long synchronous work.",
  },
  upgrade_required: {
    status: 426,
    message: "This path is a WebSocket",
    description:
      "A plain HTTP request reached a WebSocket path (the device socket `/v1/device` or a watch socket), or its WebSocket handshake was malformed (the message says which header). Connect with a WebSocket client: it sends `Upgrade: websocket`, `Connection: Upgrade`, `Sec-WebSocket-Key` and `Sec-WebSocket-Version: 13`.",
  },
  backup_in_progress: {
    status: 409,
    message: "A backup is already being taken",
    description:
      "The server takes one backup at a time (a download or a scheduled one). Try again once it has finished.",
  },
  insufficient_storage: {
    status: 507,
    message: "Not enough free disk space",
    description:
      "A backup needs room in `DATA_DIR` for a copy of the database (and, for a scheduled one, the archive) plus a margin; the message says how much is free and how much is needed. Free some space (older archives in `DATA_DIR/backups/`, say) and try again.",
  },
  too_many_commands: {
    status: 429,
    message: "Too many commands waiting",
    description:
      "A device script sent a command while 64 commands to the same device were already waiting for their result. Await command results (or send fewer at once) before sending more; the command was not sent.",
  },
  scripts_busy: {
    status: 429,
    message: "The project's scripts are busy",
    description:
      "A message for a device's script was refused because the project's scripts are behind: 500 device messages wait for them, or 256 of their outputs wait to be stored. Devices are slowed down the same way (the server stops reading their sockets for a while). Retry after a short wait.",
  },
  no_canary_devices: {
    status: 409,
    message: "No device to run the canary on",
    description:
      "A canary deploy names devices by tag or as a share of the connected devices, and none of them is connected now. Connect a device with the tag (or any device, for a percentage), or deploy without `--canary`.",
  },
  canary_needs_one_instance: {
    status: 409,
    message: "Canaries need a server of one instance",
    description:
      "The server runs as several instances (a cluster, docs/scaling.md), and staged deploys are refused there for now: a canary's two versions would run on the instance that started it while its devices may be served by the others. Deploy without `--canary` (plain deploys go live on every instance and are watched for a crash loop), or run the canary against a server of one instance.",
  },
  rollout_in_progress: {
    status: 409,
    message: "A canary is already running",
    description:
      "The project already has a canary in its window. Wait for its decision, or end it first (`POST …/deployments/:id/promote` or `…/roll-back`, the buttons on the dashboard), then deploy again.",
  },
} as const;

export type ErrorCode = keyof typeof errorCatalog;

export const errorCodes = Object.keys(errorCatalog) as ErrorCode[];

/** The path of the error reference page; a code's anchor is `#<code>`. */
export const errorDocsPath = "/docs/errors";

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(errorCatalog, value);
}
