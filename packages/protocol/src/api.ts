import { z } from "zod";
import { successEnvelope } from "./envelope.ts";

// ---------------------------------------------------------------- shared pieces

const Timestamp = z.string().describe("ISO 8601 date-time in UTC");

export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254, "must be at most 254 characters")
  .pipe(z.email("must be a valid email address"));

export const Password = z
  .string()
  .min(8, "must be at least 8 characters")
  .max(256, "must be at most 256 characters");

export const Role = z.enum(["admin", "member"]);
export type Role = z.infer<typeof Role>;

export const Board = z.enum(["pico_w", "pico2_w"]);
export type Board = z.infer<typeof Board>;

export const DeviceStatus = z.enum(["online", "offline"]);
export type DeviceStatus = z.infer<typeof DeviceStatus>;

const isControl = (c: string) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;

const Name = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what} must not be empty`)
    .max(100, `${what} must be at most 100 characters`)
    .refine((value) => ![...value].some(isControl), `${what} must not contain control characters`);

const utf8 = new TextEncoder();

export const envVarNamePattern = /^[A-Z_][A-Z0-9_]*$/;
export const envVarLimits = { nameMaxLength: 64, valueMaxBytes: 4096, perProject: 100 } as const;

export const EnvVarName = z
  .string()
  .max(envVarLimits.nameMaxLength, `must be at most ${envVarLimits.nameMaxLength} characters`)
  .regex(envVarNamePattern, "must match ^[A-Z_][A-Z0-9_]*$ (upper-case letters, digits and _)");

export const EnvVarValue = z
  .string()
  .refine(
    (value) => utf8.encode(value).length <= envVarLimits.valueMaxBytes,
    `must be at most ${envVarLimits.valueMaxBytes} bytes`,
  );

// ---------------------------------------------------------------- resources

export const User = z.object({ id: z.string(), email: z.string(), role: Role, createdAt: Timestamp });
export type User = z.infer<typeof User>;

export const ApiToken = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
});
export type ApiToken = z.infer<typeof ApiToken>;

export const CreatedApiToken = ApiToken.extend({
  token: z.string().describe("The secret token. It is shown only once."),
});
export type CreatedApiToken = z.infer<typeof CreatedApiToken>;

export const Project = z.object({
  id: z.string(),
  name: z.string(),
  ownerId: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Project = z.infer<typeof Project>;

export const Device = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  board: Board,
  status: DeviceStatus,
  lastSeenAt: Timestamp.nullable(),
  firmwareVersion: z.string().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Device = z.infer<typeof Device>;

export const DeviceCredentials = z.object({
  deviceId: z.string(),
  secret: z
    .string()
    .describe("The device secret. It is shown only once; issuing new credentials revokes it."),
});
export type DeviceCredentials = z.infer<typeof DeviceCredentials>;

export const EnvVar = z.object({ name: z.string(), value: z.string(), updatedAt: Timestamp });
export type EnvVar = z.infer<typeof EnvVar>;

export const AuditEntry = z.object({
  id: z.string(),
  at: Timestamp,
  actorId: z.string().nullable(),
  action: z.string(),
  projectId: z.string().nullable(),
  targetId: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const ServerInfo = z.object({
  version: z.string(),
  setupRequired: z.boolean().describe("True until the first (admin) account is registered."),
  registrationOpen: z.boolean(),
});
export type ServerInfo = z.infer<typeof ServerInfo>;

// ---------------------------------------------------------------- request bodies

export const RegisterBody = z.object({
  email: Email,
  password: Password,
  issueToken: z.boolean().optional().describe("Also create an API token and return it (for the CLI)."),
  tokenName: Name("tokenName").optional(),
});
export const LoginBody = RegisterBody.extend({ password: z.string().min(1).max(256) });
export const ChangePasswordBody = z.object({
  currentPassword: z.string().min(1).max(256),
  newPassword: Password,
});
export const CreateTokenBody = z.object({ name: Name("name") });
export const ChangeRoleBody = z.object({ role: Role });
export const CreateUserBody = z.object({ email: Email, password: Password, role: Role.default("member") });
export const CreateProjectBody = z.object({ name: Name("name") });
export const RenameProjectBody = z.object({ name: Name("name") });
export const CreateDeviceBody = z.object({ name: Name("name"), board: Board });
export const RenameDeviceBody = z.object({ name: Name("name") });
export const SetEnvVarBody = z.object({ value: EnvVarValue });

export const AuthResult = z.object({ user: User, token: CreatedApiToken.optional() });
export type AuthResult = z.infer<typeof AuthResult>;
export const CreatedDevice = z.object({ device: Device, credentials: DeviceCredentials });
export type CreatedDevice = z.infer<typeof CreatedDevice>;

export const LogEntryResult = z.object({
  id: z.string(),
  at: Timestamp,
  level: z.enum(["debug", "info", "warn", "error"]),
  source: z.enum(["device", "system", "script"]),
  message: z.string(),
});
export const StateValueResult = z.object({ entityId: z.string(), value: z.unknown(), updatedAt: Timestamp });
export const StateHistoryEntry = z.object({ id: z.string(), value: z.unknown(), at: Timestamp });
export const SendCommandBody = z.object({
  type: z.string().min(1).max(64).describe("A device command, e.g. gpio_write (see docs/protocol.md)"),
  args: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("The command's arguments, e.g. { pin: 25, value: 1 }"),
});
export const CommandOutcome = z.object({
  value: z.unknown().describe("The device's result; null for commands without one"),
});

export const EntityConfigSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be 1–64 letters, digits, _ . or -"),
  kind: z.enum(["sensor", "switch", "light"]),
  name: z.string().min(1).max(100),
  unit: z.string().max(64).optional(),
  deviceClass: z.string().max(64).optional(),
  icon: z.string().max(64).optional(),
  stateClass: z.enum(["measurement", "total", "total_increasing"]).optional(),
});
export type EntityConfigSchema = z.infer<typeof EntityConfigSchema>;

export const DeploymentManifest = z.object({
  board: Board,
  entry: z.string().max(256).optional(),
  project: z.string().nullable().optional(),
  entities: z.array(EntityConfigSchema).max(200).default([]),
  libraryVersion: z.string().max(32),
  sha256: z.string().optional(),
});
export type DeploymentManifest = z.infer<typeof DeploymentManifest>;

export const deploymentLimits = {
  bundleMaxBytes: 2 * 1024 * 1024,
  sourceMapMaxBytes: 6 * 1024 * 1024,
} as const;

export const CreateDeploymentBody = z.object({
  bundle: z
    .string()
    .min(1)
    .refine((b) => utf8.encode(b).length <= deploymentLimits.bundleMaxBytes, "must be at most 2 MB"),
  sourceMap: z
    .string()
    .refine((m) => utf8.encode(m).length <= deploymentLimits.sourceMapMaxBytes, "must be at most 6 MB")
    .optional(),
  manifest: DeploymentManifest,
});

export const DeploymentStatus = z.enum(["pending", "active", "inactive", "failed"]);
export type DeploymentStatus = z.infer<typeof DeploymentStatus>;

export const Deployment = z.object({
  id: z.string(),
  projectId: z.string(),
  version: z.number().int(),
  status: DeploymentStatus,
  sha256: z.string(),
  manifest: DeploymentManifest,
  error: z.string().nullable(),
  createdBy: z.string().nullable(),
  createdAt: Timestamp,
  activatedAt: Timestamp.nullable(),
});
export type Deployment = z.infer<typeof Deployment>;

export const SendMessageBody = z
  .object({ type: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "must be lower_snake_case") })
  .catchall(z.unknown())
  .describe("A message for the script's onMessage: an object with a lower_snake_case type and any fields");
export const MessageOutcome = z.object({ delivered: z.boolean() });

// ---------------------------------------------------------------- the endpoint table

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
}

const ok = z.object({ ok: z.literal(true) });
const Page = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  before: z.string().max(64).optional().describe("Return entries older than this entry id."),
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
    summary: "Devices of a project",
    access: "user",
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
    result: z.array(LogEntryResult),
  }),
  getDeviceState: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices/:deviceId/state",
    summary: "The latest value of each state entity of a device",
    access: "user",
    result: z.array(StateValueResult),
  }),
  getStateHistory: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/devices/:deviceId/state/:entityId/history",
    summary: "Recent values of one state entity, newest first",
    access: "user",
    query: Page,
    result: z.array(StateHistoryEntry),
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
    summary: "Make an earlier deployment live again (rollback)",
    access: "user",
    result: Deployment,
  }),
  listEntities: endpoint({
    method: "GET",
    path: "/v1/projects/:projectId/entities",
    summary: "The Home Assistant entities declared by the live deployment",
    access: "user",
    result: z.array(EntityConfigSchema),
  }),
  sendDeviceMessage: endpoint({
    method: "POST",
    path: "/v1/projects/:projectId/devices/:deviceId/messages",
    summary: "Send a message to the device's script (it arrives in onMessage)",
    access: "user",
    body: SendMessageBody,
    result: MessageOutcome,
  }),
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
