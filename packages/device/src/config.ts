import type { Board } from "./pins.ts";

/** A Home Assistant entity kind. */
export type EntityKind = "sensor" | "switch" | "light";

/** A Home Assistant entity fed by `DEVICE.emitState(id, value)`. */
export interface EntityConfig {
  /** The entity id the script emits (`emitState("temperature", 21.5)`). */
  id: string;
  kind: EntityKind;
  /** Shown in Home Assistant. */
  name: string;
  /** Unit of measurement, e.g. "°C", "%" (sensors). */
  unit?: string;
  /** Home Assistant device class, e.g. "temperature", "humidity". */
  deviceClass?: string;
  /** Home Assistant icon, e.g. "mdi:thermometer". */
  icon?: string;
  /** Home Assistant state class for sensors: measurement, total or total_increasing. */
  stateClass?: "measurement" | "total" | "total_increasing";
}

/** The project file `sdk.ts`: `export default defineConfig({ … })`. */
export interface ProjectConfig {
  /** The server project this directory deploys to (`prj_…`). */
  project?: string;
  /** The board the script is written for. */
  board: Board;
  /** The script's entry file. Default `src/index.ts`. */
  entry?: string;
  /** Home Assistant integration. */
  ha?: { entities?: EntityConfig[] };
}

/** Thrown by `defineConfig` for an invalid project file; the message names the field. */
export class ConfigError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(`sdk.ts: ${field} ${message}`);
    this.name = "ConfigError";
    this.field = field;
  }
}

const kinds: EntityKind[] = ["sensor", "switch", "light"];

/** Checks and returns the project configuration; throws `ConfigError` naming the bad field. */
export function defineConfig(config: ProjectConfig): ProjectConfig {
  if (typeof config !== "object" || config === null) throw new ConfigError("(config)", "must be an object");
  if (config.project !== undefined && !/^prj_[a-z2-7]{20}$/.test(String(config.project))) {
    throw new ConfigError(
      "project",
      `must be a project id like prj_… (got ${JSON.stringify(config.project)})`,
    );
  }
  if (config.board !== "pico_w" && config.board !== "pico2_w") {
    throw new ConfigError("board", `must be "pico_w" or "pico2_w" (got ${JSON.stringify(config.board)})`);
  }
  if (
    config.entry !== undefined &&
    (typeof config.entry !== "string" || !/\.(ts|js|mts|mjs)$/.test(config.entry))
  ) {
    throw new ConfigError("entry", `must be a .ts or .js file path (got ${JSON.stringify(config.entry)})`);
  }
  const entities = config.ha?.entities ?? [];
  if (!Array.isArray(entities)) throw new ConfigError("ha.entities", "must be an array");
  const seen = new Set<string>();
  entities.forEach((e, i) => {
    const at = `ha.entities[${i}]`;
    if (typeof e !== "object" || e === null) throw new ConfigError(at, "must be an object");
    if (typeof e.id !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(e.id)) {
      throw new ConfigError(
        `${at}.id`,
        `must be 1–64 letters, digits, _ . or - (got ${JSON.stringify(e.id)})`,
      );
    }
    if (seen.has(e.id)) throw new ConfigError(`${at}.id`, `repeats ${JSON.stringify(e.id)}`);
    seen.add(e.id);
    if (!kinds.includes(e.kind))
      throw new ConfigError(
        `${at}.kind`,
        `must be one of ${kinds.join(", ")} (got ${JSON.stringify(e.kind)})`,
      );
    if (typeof e.name !== "string" || e.name.trim() === "" || e.name.length > 100) {
      throw new ConfigError(`${at}.name`, "must be a non-empty string of at most 100 characters");
    }
    for (const key of ["unit", "deviceClass", "icon"] as const) {
      if (e[key] !== undefined && (typeof e[key] !== "string" || e[key].length > 64)) {
        throw new ConfigError(`${at}.${key}`, "must be a string of at most 64 characters");
      }
    }
    if (e.stateClass !== undefined && !["measurement", "total", "total_increasing"].includes(e.stateClass)) {
      throw new ConfigError(`${at}.stateClass`, "must be measurement, total or total_increasing");
    }
    if (e.kind !== "sensor" && (e.unit !== undefined || e.stateClass !== undefined)) {
      throw new ConfigError(`${at}`, `a ${e.kind} has no unit or stateClass (only sensors do)`);
    }
  });
  return config;
}
