import {
  type Board,
  boardIds,
  type EntityConfig,
  entityIdPattern,
  entityKinds,
  entityLimits,
  stateClasses,
} from "@sdk/protocol/hardware";
import { idPattern, idPrefixes } from "@sdk/protocol/ids";

export type { EntityConfig, EntityKind, StateClass } from "@sdk/protocol/hardware";

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

/** Checks and returns the project configuration; throws `ConfigError` naming the bad field. */
export function defineConfig(config: ProjectConfig): ProjectConfig {
  if (typeof config !== "object" || config === null) throw new ConfigError("(config)", "must be an object");
  if (config.project !== undefined && !idPattern(idPrefixes.project).test(String(config.project))) {
    throw new ConfigError(
      "project",
      `must be a project id like prj_… (got ${JSON.stringify(config.project)})`,
    );
  }
  if (!boardIds.includes(config.board)) {
    const names = boardIds.map((b) => JSON.stringify(b)).join(" or ");
    throw new ConfigError("board", `must be ${names} (got ${JSON.stringify(config.board)})`);
  }
  if (
    config.entry !== undefined &&
    (typeof config.entry !== "string" || !/\.(ts|js|mts|mjs)$/.test(config.entry))
  ) {
    throw new ConfigError("entry", `must be a .ts or .js file path (got ${JSON.stringify(config.entry)})`);
  }
  const entities = config.ha?.entities ?? [];
  if (!Array.isArray(entities)) throw new ConfigError("ha.entities", "must be an array");
  if (entities.length > entityLimits.perDeployment) {
    throw new ConfigError("ha.entities", `must list at most ${entityLimits.perDeployment} entities`);
  }
  const seen = new Set<string>();
  entities.forEach((e, i) => {
    const at = `ha.entities[${i}]`;
    if (typeof e !== "object" || e === null) throw new ConfigError(at, "must be an object");
    if (typeof e.id !== "string" || !entityIdPattern.test(e.id)) {
      throw new ConfigError(
        `${at}.id`,
        `must be 1–64 letters, digits, _ . or - (got ${JSON.stringify(e.id)})`,
      );
    }
    if (seen.has(e.id)) throw new ConfigError(`${at}.id`, `repeats ${JSON.stringify(e.id)}`);
    seen.add(e.id);
    if (!entityKinds.includes(e.kind))
      throw new ConfigError(
        `${at}.kind`,
        `must be one of ${entityKinds.join(", ")} (got ${JSON.stringify(e.kind)})`,
      );
    const { nameMaxLength, textMaxLength } = entityLimits;
    if (typeof e.name !== "string" || e.name.trim() === "" || e.name.length > nameMaxLength) {
      throw new ConfigError(
        `${at}.name`,
        `must be a non-empty string of at most ${nameMaxLength} characters`,
      );
    }
    for (const key of ["unit", "deviceClass", "icon"] as const) {
      if (e[key] !== undefined && (typeof e[key] !== "string" || e[key].length > textMaxLength)) {
        throw new ConfigError(`${at}.${key}`, `must be a string of at most ${textMaxLength} characters`);
      }
    }
    if (e.stateClass !== undefined && !stateClasses.includes(e.stateClass)) {
      throw new ConfigError(`${at}.stateClass`, "must be measurement, total or total_increasing");
    }
    if (e.kind !== "sensor" && (e.unit !== undefined || e.stateClass !== undefined)) {
      throw new ConfigError(`${at}`, `a ${e.kind} has no unit or stateClass (only sensors do)`);
    }
  });
  return config;
}
