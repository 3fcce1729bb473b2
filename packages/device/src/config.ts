import { type Board, boardIds, type EntityConfig, entitiesProblems } from "@sdk/protocol/hardware";
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
  /** The id of the `ha.entities` entry at fault, when it has one (the build points at its line). */
  readonly entityId: string | undefined;

  constructor(field: string, message: string, entityId?: string) {
    super(`sdk.ts: ${field} ${message}`);
    this.name = "ConfigError";
    this.field = field;
    this.entityId = entityId;
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
  const [problem] = entitiesProblems(entities);
  if (problem) {
    const index = Number(/^\[(\d+)\]/.exec(problem.field)?.[1]);
    const id: unknown = Array.isArray(entities)
      ? (entities[index] as { id?: unknown } | undefined)?.id
      : undefined;
    throw new ConfigError(
      `ha.entities${problem.field}`,
      problem.message,
      typeof id === "string" ? id : undefined,
    );
  }
  return config;
}
