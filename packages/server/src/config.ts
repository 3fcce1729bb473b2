import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { rolloutLimits } from "@sdk/protocol";
import { type PrivateRange, privateRanges } from "./lib/webhook-target.ts";

/** The server's own log levels (pino's), not a device log line's `LogLevel`. */
type ServerLogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Read-only bundle of firmware releases (`<version>/<board>.uf2`) imported at boot; `null` for none. */
  firmwareDir: string | null;
  /** `null` means the embedded SQLite database at `<dataDir>/sdk.db`. */
  databaseUrl: string | null;
  allowRegistration: boolean;
  /** The URL users reach the server at, without a trailing slash; `null` to derive it from each request. */
  publicUrl: string | null;
  logLevel: ServerLogLevel;
  /** `pretty` for people, `json` for log collectors; `auto` picks pretty on a terminal. */
  logFormat: "pretty" | "json";
  trustProxy: boolean;
  /** DNS-SD advertisement (`_sdk._tcp`) so `sdk login` finds the server without `--host`. */
  mdns: { enabled: boolean /** The instance name people pick from. */; name: string };
  rateLimit: { maxAttempts: number; windowSeconds: number };
  sessionMaxAgeDays: number;
  /**
   * The key one-time sign-in links are signed with (`sdk dev` sets it for its own server);
   * `null` (the default) and /sign-in-link does not exist.
   */
  signInLinkKey: string | null;
  device: {
    /** Ping interval; a device that misses two pongs in a row is offline. */
    heartbeatSeconds: number;
    commandTimeoutSeconds: number;
    logMaxEntries: number;
    logMaxAgeDays: number;
    stateHistoryMaxEntries: number;
  };
  scripts: {
    /** Deadline of every entry into a script (handler, timer, promise jobs). */
    timeoutMs: number;
    /** Memory cap of one project's scripts. */
    memoryLimitMb: number;
    /** Deadline of evaluating a bundle's top level (a deploy's trial load, a restart). */
    loadTimeoutMs: number;
    /** Worker threads the projects' scripts share (projects over their CPU budget get one more, of their own). */
    workers: number;
    /** Guest CPU milliseconds one project's scripts may use per second before they wait for the next second. */
    cpuBudgetMs: number;
  };
  /** How many deployments each project keeps; the live one is never removed. */
  deploymentsKept: number;
  /** A canary's window when the deploy names none, in seconds. */
  canaryWindowSeconds: number;
  /** The Home Assistant bridge over MQTT; `null` (MQTT_URL unset) turns it off. */
  homeAssistant: HomeAssistantConfig | null;
  /** Scheduled backups into `<dataDir>/backups/`: every `intervalMs` (0: off), the newest `keep` kept. */
  backup: { intervalMs: number; keep: number };
  /** Disk use: the defaults of a project's retention are `device`'s limits; these are server-wide. */
  retention: {
    /** Age of the oldest state history values kept (a project's default). */
    stateHistoryMaxAgeDays: number;
    /** Largest database in MB; the sweeper removes the oldest logs and history above it. 0: no cap. */
    databaseMaxMb: number;
    /** Below this many MB free in DATA_DIR the server warns (log, /ready, dashboard). 0: never. */
    diskLowMb: number;
    /** Rows removed by one statement of the sweeper; it yields between statements. */
    batchRows: number;
  };
  /** Alert webhooks: the private address ranges they may target (loopback and link-local are refused by default). */
  webhooks: { allowPrivate: PrivateRange[] };
  /** Device state and log rows queued for the group commit at most; writers wait for room beyond it. */
  writeQueueMaxRows: number;
  /** SQLite: the group commit in a thread of its own (`on`), on the main thread (`off`), or by the disk's speed (`auto`). */
  sqliteCommitThread: "auto" | "on" | "off";
  /** One instance of a cluster (NATS_URL set, docs/scaling.md); `null`: one process on its own. */
  cluster: ClusterConfig | null;
  /** The key env vars and webhook secrets are encrypted with (default `<dataDir>/secret.key`). */
  secretKeyFile: string;
}

export interface ClusterConfig {
  /** `nats://` or `tls://` URL(s) of the NATS servers, comma-separated, credentials included (never logged). */
  natsUrl: string;
  /** `host:port` of the first NATS server, without credentials (for logs). */
  natsServer: string;
  /** Subjects start with `<name>.`: clusters sharing one NATS stay apart. */
  name: string;
  /** This instance's id (INSTANCE_ID, else generated at each start). */
  instanceId: string;
  /** An instance that has not renewed its lease for this long is dead; its devices go offline. */
  leaseSeconds: number;
}

export interface HomeAssistantConfig {
  /** `mqtt://`, `mqtts://`, `ws://` or `wss://` URL, credentials included (never logged). */
  mqttUrl: string;
  /** `host:port` of the broker, without credentials (for logs and the status endpoint). */
  broker: string;
  /** Topics of the bridge: `<baseTopic>/status`, `<baseTopic>/<deviceId>/…`. */
  baseTopic: string;
  discoveryPrefix: string;
  /** `device`: one config per device (Home Assistant 2024.11+); `component`: one per entity. */
  discovery: "device" | "component";
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const serverLogLevels: ServerLogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

/** A number of hours, decimals allowed (0.5 = 30 minutes). */
function hours(env: Env, name: string, fallback: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value > max) {
    throw new ConfigError(
      `${name} must be a number of hours from 0 to ${max}, decimals allowed (got "${raw}")`,
    );
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["true", "1", "yes", "on"].includes(raw)) return true;
  if (["false", "0", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${env[name]}")`);
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")} (got "${env[name]}")`);
  }
  return raw as T;
}

function url(env: Env, name: string, protocols: string[], what: string): string | null {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be ${what} (got "${raw}")`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must be ${what} (got "${raw}")`);
  return raw;
}

/** A DNS-SD instance name: 1 to 63 bytes of UTF-8, no control characters (RFC 6763 §4.1.1). */
function instanceName(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters
  if (Buffer.byteLength(raw) > 63 || /[\u0000-\u001f\u007f]/.test(raw)) {
    throw new ConfigError(`${name} must be 1 to 63 bytes without control characters (got "${raw}")`);
  }
  return raw;
}

/** "sdk on <host>", cut to the 63 bytes an instance name may have. */
function defaultInstanceName(hostname: string): string {
  const chars = [...`sdk on ${hostname.split(".")[0] || "this machine"}`]; // code points: no half pairs
  while (Buffer.byteLength(chars.join("")) > 63) chars.pop();
  return chars.join("");
}

/** A topic prefix: MQTT topic levels without wildcards, no leading or trailing `/`. */
function topicPrefix(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(raw) || raw.length > 100) {
    throw new ConfigError(
      `${name} must be topic levels of letters, digits, _ and - separated by / (no wildcards, no leading or trailing /; got "${raw}")`,
    );
  }
  return raw;
}

function homeAssistant(env: Env): HomeAssistantConfig | null {
  const raw = env.MQTT_URL?.trim();
  if (raw === undefined || raw === "") return null;
  const what =
    "MQTT_URL must be an mqtt://[user:password@]host[:port] or mqtts:// URL, or unset to turn the Home Assistant bridge off";
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(what); // the value is not echoed: it may hold a password
  }
  if (!["mqtt:", "mqtts:", "ws:", "wss:"].includes(parsed.protocol) || !parsed.hostname)
    throw new ConfigError(`${what} (got a ${parsed.protocol} URL)`);
  const baseTopic = topicPrefix(env, "MQTT_BASE_TOPIC", "sdk");
  const discoveryPrefix = topicPrefix(env, "HA_DISCOVERY_PREFIX", "homeassistant");
  const within = (inner: string, outer: string) => inner === outer || inner.startsWith(`${outer}/`);
  // Shared trees collide: with equal values the server's own `<base>/status` is Home Assistant's
  // birth topic (an endless republish loop); nested, one side's topics land in the other's filters.
  if (within(baseTopic, discoveryPrefix) || within(discoveryPrefix, baseTopic))
    throw new ConfigError(
      `MQTT_BASE_TOPIC ("${baseTopic}") and HA_DISCOVERY_PREFIX ("${discoveryPrefix}") must be separate topic trees: neither may equal or contain the other (e.g. MQTT_BASE_TOPIC=sdk, HA_DISCOVERY_PREFIX=homeassistant)`,
    );
  const port =
    parsed.port || { "mqtt:": "1883", "mqtts:": "8883", "ws:": "80", "wss:": "443" }[parsed.protocol];
  return {
    mqttUrl: raw,
    broker: `${parsed.hostname}:${port}`,
    baseTopic,
    discoveryPrefix,
    discovery: oneOf(env, "HA_DISCOVERY", "device", ["device", "component"] as const),
  };
}

function signInLinkKey(env: Env): string | null {
  const raw = env.SIGN_IN_LINK_KEY?.trim();
  if (raw === undefined || raw === "") return null;
  if (raw.length < 32) throw new ConfigError("SIGN_IN_LINK_KEY must be at least 32 random characters");
  return raw;
}

/**
 * Reads and validates the whole configuration once. Throws `ConfigError` with one line naming the
 * variable and what it accepts. This is the only place in the server that reads the environment.
 */
export function loadConfig(
  env: Env = process.env,
  cwd = process.cwd(),
  isTTY = Boolean(process.stdout.isTTY),
  hostname = os.hostname(),
): Config {
  const host = env.HOST?.trim() || "0.0.0.0";
  if (/\s/.test(host)) throw new ConfigError(`HOST must be a host name or IP address (got "${env.HOST}")`);
  const publicUrl = url(env, "PUBLIC_URL", ["http:", "https:"], "an http:// or https:// URL");
  const format = oneOf(env, "LOG_FORMAT", "auto", ["auto", "pretty", "json"] as const);
  const dataDir = path.resolve(cwd, env.DATA_DIR?.trim() || "data");
  return {
    port: integer(env, "PORT", 8080, 0, 65535),
    host,
    dataDir,
    firmwareDir: env.FIRMWARE_DIR?.trim() ? path.resolve(cwd, env.FIRMWARE_DIR.trim()) : null,
    databaseUrl: url(
      env,
      "DATABASE_URL",
      ["postgres:", "postgresql:"],
      "a postgres:// URL, or unset for SQLite",
    ),
    allowRegistration: boolean(env, "ALLOW_REGISTRATION", true),
    publicUrl: publicUrl?.replace(/\/+$/, "") ?? null,
    logLevel: oneOf(env, "LOG_LEVEL", "info", serverLogLevels),
    logFormat: format === "auto" ? (isTTY ? "pretty" : "json") : format,
    trustProxy: boolean(env, "TRUST_PROXY", false),
    mdns: {
      enabled: boolean(env, "MDNS", true),
      name: instanceName(env, "MDNS_NAME", defaultInstanceName(hostname)),
    },
    rateLimit: {
      maxAttempts: integer(env, "RATE_LIMIT_MAX_ATTEMPTS", 10, 1, 1_000_000),
      windowSeconds: integer(env, "RATE_LIMIT_WINDOW_SECONDS", 300, 1, 86_400),
    },
    sessionMaxAgeDays: integer(env, "SESSION_MAX_AGE_DAYS", 30, 1, 3650),
    signInLinkKey: signInLinkKey(env),
    device: {
      heartbeatSeconds: integer(env, "HEARTBEAT_SECONDS", 15, 1, 3600),
      commandTimeoutSeconds: integer(env, "DEVICE_COMMAND_TIMEOUT_SECONDS", 10, 1, 300),
      logMaxEntries: integer(env, "DEVICE_LOG_MAX_ENTRIES", 1000, 10, 1_000_000),
      logMaxAgeDays: integer(env, "DEVICE_LOG_MAX_AGE_DAYS", 7, 1, 3650),
      stateHistoryMaxEntries: integer(env, "STATE_HISTORY_MAX_ENTRIES", 500, 1, 100_000),
    },
    scripts: {
      timeoutMs: integer(env, "SCRIPT_TIMEOUT_MS", 100, 5, 60_000),
      memoryLimitMb: integer(env, "SCRIPT_MEMORY_LIMIT_MB", 64, 8, 2048),
      loadTimeoutMs: integer(env, "SCRIPT_LOAD_TIMEOUT_MS", 250, 10, 60_000),
      workers: integer(env, "SCRIPT_WORKERS", defaultScriptWorkers(), 1, 64),
      cpuBudgetMs: integer(env, "SCRIPT_CPU_BUDGET_MS", 500, 10, 1000),
    },
    deploymentsKept: integer(env, "DEPLOYMENTS_KEPT", 20, 1, 10_000),
    canaryWindowSeconds: integer(
      env,
      "CANARY_WINDOW_SECONDS",
      rolloutLimits.defaultWindowSeconds,
      rolloutLimits.minWindowSeconds,
      rolloutLimits.maxWindowSeconds,
    ),
    homeAssistant: homeAssistant(env),
    backup: {
      intervalMs: Math.round(hours(env, "BACKUP_INTERVAL_HOURS", 24, 8760) * 3_600_000),
      keep: integer(env, "BACKUP_KEEP", 7, 1, 1000),
    },
    retention: {
      stateHistoryMaxAgeDays: integer(env, "STATE_HISTORY_MAX_AGE_DAYS", 30, 1, 3650),
      databaseMaxMb: integer(env, "DATABASE_MAX_MB", 0, 0, 10_000_000),
      diskLowMb: integer(env, "DISK_LOW_MB", 256, 0, 1_000_000_000),
      batchRows: integer(env, "RETENTION_BATCH_ROWS", 100, 10, 100_000),
    },
    webhooks: { allowPrivate: webhookAllowPrivate(env) },
    writeQueueMaxRows: integer(env, "WRITE_QUEUE_MAX_ROWS", 20_000, 10, 1_000_000),
    sqliteCommitThread: oneOf(env, "SQLITE_COMMIT_THREAD", "auto", ["auto", "on", "off"] as const),
    cluster: cluster(env),
    secretKeyFile: env.SECRET_KEY_FILE?.trim()
      ? path.resolve(cwd, env.SECRET_KEY_FILE.trim())
      : path.join(dataDir, "secret.key"),
  };
}

/** NATS_URL (with DATABASE_URL=postgres://…) makes this server one instance of a cluster. */
function cluster(env: Env): ClusterConfig | null {
  const raw = env.NATS_URL?.trim();
  if (!raw) return null;
  const urls = raw.split(",").map((u) => u.trim());
  let first: URL | undefined;
  for (const u of urls) {
    const parsed = URL.parse(u);
    // What the error shows of the URL: never its credentials (`user:pass@`, `token@`).
    if (!parsed || !["nats:", "tls:"].includes(parsed.protocol) || !parsed.hostname)
      throw new ConfigError(
        `NATS_URL must be nats:// or tls:// URLs, comma-separated (got "${withoutUserinfo(u)}")`,
      );
    first ??= parsed;
  }
  const databaseUrl = env.DATABASE_URL?.trim();
  if (!databaseUrl || !/^postgres(ql)?:/.test(databaseUrl))
    throw new ConfigError(
      "NATS_URL needs DATABASE_URL=postgres://…: the instances of a cluster share one PostgreSQL database",
    );
  const name = env.CLUSTER_NAME?.trim() || "sdk";
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new ConfigError(`CLUSTER_NAME must be 1 to 64 letters, digits, - or _ (got "${name}")`);
  const instanceId = env.INSTANCE_ID?.trim() || `i-${randomBytes(4).toString("hex")}`;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(instanceId))
    throw new ConfigError(`INSTANCE_ID must be 1 to 64 letters, digits, - or _ (got "${instanceId}")`);
  return {
    natsUrl: raw,
    // URL.hostname keeps an IPv6 address's brackets: `[::1]:4222`.
    natsServer: `${first?.hostname}:${first?.port || "4222"}`,
    name,
    instanceId,
    leaseSeconds: integer(env, "CLUSTER_LEASE_SECONDS", 10, 2, 300),
  };
}

/** A URL as an error may show it: `scheme://` then everything after the last `@` of its authority. */
function withoutUserinfo(url: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0] ?? "";
  const rest = url.slice(scheme.length);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf("@");
  return at < 0 ? url : `${scheme}***@${rest.slice(at + 1)}`;
}

/** WEBHOOK_ALLOW_PRIVATE: a comma list of loopback, link-local, private; or none. Default: private. */
function webhookAllowPrivate(env: Env): PrivateRange[] {
  const raw = env.WEBHOOK_ALLOW_PRIVATE?.trim().toLowerCase();
  if (raw === undefined || raw === "") return ["private"];
  if (raw === "none") return [];
  const items = raw.split(",").map((item) => item.trim());
  const bad = items.filter((item) => !(privateRanges as readonly string[]).includes(item));
  if (bad.length > 0 || items.length === 0) {
    throw new ConfigError(
      `WEBHOOK_ALLOW_PRIVATE must be "none" or a comma list of ${privateRanges.join(", ")} (got "${env.WEBHOOK_ALLOW_PRIVATE}")`,
    );
  }
  return [...new Set(items as PrivateRange[])];
}

/** One core stays with the main thread (sockets, HTTP, storage); the scripts get the rest, up to 4. */
function defaultScriptWorkers(): number {
  return Math.max(1, Math.min(4, os.availableParallelism() - 1));
}
