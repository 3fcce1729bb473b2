import { z } from "zod";
import { alertEndpoints } from "./alerts.ts";
import { successEnvelope } from "./envelope.ts";
import { deploymentLimits, StoredEntityConfigSchema } from "./manifest.ts";
import { PinState } from "./pins.ts";
import {
  ActivateDeploymentBody,
  AuthResult,
  ChangePasswordBody,
  ChangeRoleBody,
  CommandOutcome,
  CreateDeploymentBody,
  CreateDeviceBody,
  CreatedDevice,
  CreateProjectBody,
  CreateTokenBody,
  CreateUserBody,
  LoginBody,
  MessageOutcome,
  RegisterBody,
  RenameDeviceBody,
  RenameProjectBody,
  SendCommandBody,
  SendMessageBody,
  SetEnvVarBody,
} from "./requests.ts";
import {
  ApiToken,
  AuditEntry,
  BackupArchive,
  CreatedApiToken,
  Deployment,
  DeploymentBundle,
  DeploymentSource,
  Device,
  DeviceCredentials,
  EnvVar,
  FirmwareImage,
  FirmwareRelease,
  firmwareLimits,
  HomeAssistantStatus,
  LogEntry,
  Project,
  ServerInfo,
  StateHistoryEntry,
  StateValue,
  User,
} from "./resources.ts";
import { Retention, SetRetentionBody } from "./retention.ts";
import {
  AddTagsBody,
  CreateDevicesBody,
  CreatedDevices,
  ListDevicesQuery,
  SetTagsBody,
  TagCommandBody,
  TagCommandOutcome,
  TagMessageBody,
  TagMessageOutcome,
} from "./tags.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
/** Who may call an endpoint: anyone, any signed-in user, or admins only. */
export type Access = "public" | "user" | "admin";

export interface Endpoint {
  method: HttpMethod;
  path: string;
  summary: string;
  access: Access;
  body?: z.ZodType;
  query?: z.ZodObject;
  result: z.ZodType;
  /** HTTP status of a success; 200 unless stated. */
  status?: number;
  /** Largest request body in bytes, when not the default 1 MiB. */
  bodyLimit?: number;
  /**
   * Raw bytes instead of JSON: `"body"` takes an `application/octet-stream` request body (its schema
   * is `FirmwareImage`); `"result"` answers the bytes themselves as `application/octet-stream`,
   * without the success envelope (errors keep the error envelope).
   */
  binary?: "body" | "result";
}

const ok = z.object({ ok: z.literal(true) });
/** How many entries one page of a list (logs, audit) holds: `limit` defaults to 100, at most 500. */
export const pageLimits = { default: 100, max: 500 } as const;

const Page = z.object({
  limit: z.coerce.number().int().min(1).max(pageLimits.max).default(pageLimits.default),
  before: z
    .string()
    .max(64)
    .optional()
    .describe(
      "Return entries older than this entry id (the last of the previous page). An id that is not an entry of this list — unknown, pruned, or another device's — is refused with 400 `invalid_request`.",
    ),
});

function endpoint<const E extends Endpoint>(e: E): E {
  return e;
}

/**
 * Every REST endpoint. The server registers its routes from this table, the client derives its
 * typed calls from it, and `/v1/openapi.json` is generated from it.
 */
export const endpoints = {
  serverInfo: endpoint({
    method: "GET",
    path: "/v1/server",
    summary: "Server version, and whether setup or registration is open",
    access: "public",
    result: ServerInfo,
  }),
  register: endpoint({
    method: "POST",
    path: "/v1/auth/register",
    summary: "Create an account (the first one becomes admin); starts a session",
    access: "public",
    body: RegisterBody,
    result: AuthResult,
    status: 201,
  }),
  login: endpoint({
    method: "POST",
    path: "/v1/auth/login",
    summary: "Sign in; starts a session, and returns an API token when `issueToken` is true",
    access: "public",
    body: LoginBody,
    result: AuthResult,
  }),
  logout: endpoint({
    method: "POST",
    path: "/v1/auth/logout",
    summary: "End the current session, or revoke the API token used for this request",
    access: "user",
    result: ok,
  }),
  whoami: endpoint({
    method: "GET",
    path: "/v1/auth/me",
    summary: "The signed-in user",
    access: "user",
    result: User,
  }),
  changePassword: endpoint({
    method: "POST",
    path: "/v1/auth/password",
    summary: "Change the password; ends the user's other sessions",
    access: "user",
    body: ChangePasswordBody,
    result: ok,
  }),
  listTokens: endpoint({
    method: "GET",
    path: "/v1/tokens",
    summary: "The user's API tokens (without their secrets)",
    access: "user",
    result: z.array(ApiToken),
  }),
  createToken: endpoint({
    method: "POST",
    path: "/v1/tokens",
    summary: "Create a named API token; the secret is returned only this once",
    access: "user",
    body: CreateTokenBody,
    result: CreatedApiToken,
    status: 201,
  }),
  revokeToken: endpoint({
    method: "DELETE",
    path: "/v1/tokens/:tokenId",
    summary: "Revoke an API token",
    access: "user",
    result: ok,
  }),
  listUsers: endpoint({
    method: "GET",
    path: "/v1/admin/users",
    summary: "All users",
    access: "admin",
    result: z.array(User),
  }),
  createUser: endpoint({
    method: "POST",
    path: "/v1/admin/users",
    summary: "Create an account (works while registration is closed); the admin hands over the password",
    access: "admin",
    body: CreateUserBody,
    result: User,
    status: 201,
  }),
  changeRole: endpoint({
    method: "PATCH",
    path: "/v1/admin/users/:userId",
    summary: "Change a user's role",
    access: "admin",
    body: ChangeRoleBody,
    result: User,
  }),
  deleteUser: endpoint({
    method: "DELETE",
    path: "/v1/admin/users/:userId",
    summary: "Delete a user with their projects, devices, tokens and sessions",
    access: "admin",
    result: ok,
  }),
  listAudit: endpoint({
    method: "GET",
    path: "/v1/admin/audit",
    summary: "The audit log, newest first",
    access: "admin",
    query: Page,
    result: z.array(AuditEntry),
  }),
  listProjects: endpoint({
    method: "GET",
    path: "/v1/projects",
    summary: "Projects the caller can see (admins see all)",
    access: "user",
    result: z.array(Project),
  }),
  createProject: endpoint({
    method: "POST",
    path: "/v1/projects",
    summary: "Create a project owned by the caller",
    access: "user",
    body: CreateProjectBody,
    result: Project,
    status: 201,
  }),
  getProject: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId",
    summary: "One project",
    access: "user",
    result: Project,
  }),
  renameProject: endpoint({
    method: "PATCH",
    path: "/v1/projects/:projectId",
    summary: "Rename a project",
    access: "user",
    body: RenameProjectBody,
    result: Project,
  }),
  deleteProject: endpoint({
    method: "DELETE",
    path: "/v1/projects/:projectId",
    summary: "Delete a project with its devices, env vars and stored files",
    access: "user",
    result: ok,
  }),
  listDevices: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices",
    summary: "Devices of a project (with `?tag=`: only those with that tag)",
    access: "user",
    query: ListDevicesQuery,
    result: z.array(Device),
  }),
  createDevice: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/devices",
    summary: "Add a device; its credentials are returned only this once",
    access: "user",
    body: CreateDeviceBody,
    result: CreatedDevice,
    status: 201,
  }),
  getDevice: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices/:deviceId",
    summary: "One device",
    access: "user",
    result: Device,
  }),
  renameDevice: endpoint({
    method: "PATCH",
    path: "/v1/projects/:projectId/devices/:deviceId",
    summary: "Rename a device",
    access: "user",
    body: RenameDeviceBody,
    result: Device,
  }),
  deleteDevice: endpoint({
    method: "DELETE",
    path: "/v1/projects/:projectId/devices/:deviceId",
    summary: "Delete a device",
    access: "user",
    result: ok,
  }),
  rotateDeviceCredentials: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/devices/:deviceId/credentials",
    summary: "Issue new device credentials; the old secret stops working at once",
    access: "user",
    result: DeviceCredentials,
  }),
  listEnvVars: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/env",
    summary: "The project's environment variables with their values",
    access: "user",
    result: z.array(EnvVar),
  }),
  setEnvVar: endpoint({
    method: "PUT",
    path: "/v1/projects/:projectId/env/:name",
    summary: "Set an environment variable",
    access: "user",
    body: SetEnvVarBody,
    result: EnvVar,
  }),
  unsetEnvVar: endpoint({
    method: "DELETE",
    path: "/v1/projects/:projectId/env/:name",
    summary: "Remove an environment variable",
    access: "user",
    result: ok,
  }),
  listDeviceLogs: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices/:deviceId/logs",
    summary: "A device's logs, newest first (its own lines, system entries and, later, script output)",
    access: "user",
    query: Page,
    result: z.array(LogEntry),
  }),
  getDeviceState: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices/:deviceId/state",
    summary: "The latest value of each state entity of a device",
    access: "user",
    result: z.array(StateValue),
  }),
  getStateHistory: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices/:deviceId/state/:entityId/history",
    summary: "Recent values of one state entity, newest first",
    access: "user",
    query: Page,
    result: z.array(StateHistoryEntry),
  }),
  getDevicePins: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices/:deviceId/pins",
    summary:
      "The board's pins as the server knows them on the current connection (from the commands it sent and gpio_change events), by pin; empty while offline",
    access: "user",
    result: z.array(PinState),
  }),
  sendDeviceCommand: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/devices/:deviceId/commands",
    summary: "Send one command to a connected device and wait for its answer",
    access: "user",
    body: SendCommandBody,
    result: CommandOutcome,
  }),
  listDeployments: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/deployments",
    summary: "The project's deployments, newest first",
    access: "user",
    result: z.array(Deployment),
  }),
  createDeployment: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/deployments",
    summary:
      "Upload a built bundle; it goes live if it loads, else it is `failed` and the previous one stays",
    access: "user",
    body: CreateDeploymentBody,
    result: Deployment,
    status: 201,
    bodyLimit: 2 * (deploymentLimits.bundleMaxBytes + deploymentLimits.sourceMapMaxBytes),
  }),
  getDeployment: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/deployments/:deploymentId",
    summary: "One deployment",
    access: "user",
    result: Deployment,
  }),
  activateDeployment: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/deployments/:deploymentId/activate",
    summary: "Make an earlier deployment live again (rollback), at once or as a canary",
    access: "user",
    body: ActivateDeploymentBody,
    result: Deployment,
  }),
  promoteDeployment: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/deployments/:deploymentId/promote",
    summary: "End a canary now and make it live on every device",
    access: "user",
    result: Deployment,
  }),
  rollBackDeployment: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/deployments/:deploymentId/roll-back",
    summary: "End a canary now and put its devices back on the stable version",
    access: "user",
    result: Deployment,
  }),
  getDeploymentSource: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/deployments/:deploymentId/source",
    summary:
      "The deployment's source files with their text, from its source map (the `@sdk/device` library left out); none when it was deployed without a map",
    access: "user",
    result: DeploymentSource,
  }),
  downloadDeploymentBundle: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/deployments/:deploymentId/bundle",
    summary: "The deployment's bundle as deployed, as `<project>-v<version>.js`",
    access: "user",
    result: DeploymentBundle,
    binary: "result",
  }),
  listEntities: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/entities",
    summary: "The Home Assistant entities declared by the live deployment",
    access: "user",
    result: z.array(StoredEntityConfigSchema),
  }),
  getHomeAssistant: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/home-assistant",
    summary: "The Home Assistant bridge: connected to which broker, and the entities published per device",
    access: "user",
    result: HomeAssistantStatus,
  }),
  sendDeviceMessage: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/devices/:deviceId/messages",
    summary: "Send a message to the device's script (it arrives in onMessage)",
    access: "user",
    body: SendMessageBody,
    result: MessageOutcome,
  }),
  listFirmware: endpoint({
    method: "GET",
    path: "/v1/firmware",
    summary: "Firmware releases, newest first (semver order), with each board's UF2 size and SHA-256",
    access: "user",
    result: z.array(FirmwareRelease),
  }),
  downloadFirmware: endpoint({
    method: "GET",
    path: "/v1/firmware/:version/:board",
    summary: "One board's UF2 of a release, as `sdk-<version>-<board>.uf2`",
    access: "user",
    result: FirmwareImage,
    binary: "result",
  }),
  uploadFirmware: endpoint({
    method: "PUT",
    path: "/v1/admin/firmware/:version/:board",
    summary:
      "Add your own build as a release: the UF2 as the raw body, checked like a bundled one; a version and board already stored answer 409 unless the bytes are the same",
    access: "admin",
    body: FirmwareImage,
    result: FirmwareRelease,
    binary: "body",
    bodyLimit: firmwareLimits.uf2MaxBytes,
  }),
  downloadBackup: endpoint({
    method: "GET",
    path: "/v1/admin/backup",
    summary:
      "A backup of the whole server as one archive (`sdk-backup-<time>.tar.gz`: manifest.json with every file's size and SHA-256, then the SQLite database snapshot, secret.key, project files and firmware), streamed; with PostgreSQL the database is not in it (use pg_dump). Restore with `sdk-server restore`. One backup at a time (409 `backup_in_progress`); 507 `insufficient_storage` when DATA_DIR lacks room for a copy of the database plus a margin",
    access: "admin",
    result: BackupArchive,
    binary: "result",
  }),
  getRetention: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/retention",
    summary: "How long the project's device logs and state history are kept",
    access: "user",
    result: Retention,
  }),
  setRetention: endpoint({
    method: "PUT",
    path: "/v1/projects/:projectId/retention",
    summary:
      "Change how long the project's device logs and state history are kept; the sweeper applies it within the hour",
    access: "user",
    body: SetRetentionBody,
    result: Retention,
  }),
  // ── device tags and actions on every device with a tag ─────────────────────────────────────
  setDeviceTags: endpoint({
    method: "PUT",
    path: "/v1/projects/:projectId/devices/:deviceId/tags",
    summary: "Replace a device's tags",
    access: "user",
    body: SetTagsBody,
    result: Device,
  }),
  addDeviceTags: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/devices/:deviceId/tags",
    summary: "Add tags to a device (tags it already has are kept)",
    access: "user",
    body: AddTagsBody,
    result: Device,
  }),
  removeDeviceTag: endpoint({
    method: "DELETE",
    path: "/v1/projects/:projectId/devices/:deviceId/tags/:tag",
    summary: "Remove one tag from a device (removing a tag it does not have is not an error)",
    access: "user",
    result: Device,
  }),
  sendTagCommand: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/commands",
    summary:
      "Send one command to every device with a tag (8 at a time, within an overall timeout); one answer per device",
    access: "user",
    body: TagCommandBody,
    result: TagCommandOutcome,
  }),
  sendTagMessage: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/messages",
    summary: "Send a message to the script of every device with a tag; one outcome per device",
    access: "user",
    body: TagMessageBody,
    result: TagMessageOutcome,
  }),
  createDevices: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/devices/bulk",
    summary:
      "Add many devices at once (name, board, tags each): all or none; their credentials are returned only this once",
    access: "user",
    body: CreateDevicesBody,
    result: CreatedDevices,
    status: 201,
  }),
  ...alertEndpoints,
} as const satisfies Record<string, Endpoint>;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;

/** The `result` of an endpoint's success envelope. */
export type EndpointResult<N extends EndpointName> = z.infer<Endpoints[N]["result"]>;
/** The body an endpoint accepts (before parsing). */
export type EndpointBody<N extends EndpointName> = Endpoints[N] extends { body: z.ZodType }
  ? z.input<Endpoints[N]["body"]>
  : undefined;

export function successSchema<N extends EndpointName>(name: N) {
  return successEnvelope(endpoints[name].result);
}
