import { z } from "zod";
import { Board } from "./fields.ts";
import {
  displayPrecisionRange,
  type EntityConfig,
  type EntityKind,
  entityIdPattern,
  entityKindFields,
  entityKinds,
  entityLimits,
  entityProblems,
  haEntityIdPattern,
  stateClasses,
} from "./hardware.ts";
import { Name } from "./schema-parts.ts";

// What a deployment declares: the board, the entry file, and its Home Assistant entities.

/** An entity's fields after its id; `text` is the schema of unit, deviceClass and icon. */
const entityFields = (text: z.ZodOptional<z.ZodString>) => ({
  kind: z.enum(entityKinds),
  name: Name(entityLimits.nameMaxLength),
  unit: text,
  deviceClass: text,
  icon: text,
  stateClass: z.enum(stateClasses).optional(),
  displayPrecision: z.number().int().min(displayPrecisionRange.min).max(displayPrecisionRange.max).optional(),
  brightness: z.boolean().optional(),
  rgb: z.boolean().optional(),
});

/** Fields whose values the object schema above already checks (a field of the wrong kind is still reported). */
const checkedByFieldSchemas = new Set([
  "kind",
  "name",
  "stateClass",
  "displayPrecision",
  "brightness",
  "rgb",
]);
const ownField = (kind: EntityKind, field: string) =>
  field === "kind" || field === "name" || entityKindFields[kind].includes(field);

/**
 * An `ha.entities` entry as a new deployment must declare it: the same rules as `defineConfig`
 * (`entityProblems` in @sdk/protocol/hardware): ids without `.`, fields of its kind only, a
 * sensor's unit valid for its device class.
 */
export const EntityConfigSchema = z
  .object({
    id: z.string().describe(`1–64 letters, digits, _ or - (${haEntityIdPattern.source}); no "."`),
    // unit, deviceClass and icon: entityProblems checks them (length, spelling, device class tables).
    ...entityFields(z.string().optional()),
  })
  .superRefine((entity, ctx) => {
    for (const problem of entityProblems(entity)) {
      if (checkedByFieldSchemas.has(problem.field) && ownField(entity.kind, problem.field)) continue;
      ctx.addIssue({ code: "custom", path: problem.field ? [problem.field] : [], message: problem.message });
    }
  }) satisfies z.ZodType<EntityConfig>;

/**
 * An entity as a deployment already stored may hold it: deployments made before the Home
 * Assistant rules (ids with `.`, any unit) still list and roll back.
 */
export const StoredEntityConfigSchema = z.object({
  id: z.string().regex(entityIdPattern, "must be 1–64 letters, digits, _ . or -"),
  ...entityFields(z.string().max(entityLimits.textMaxLength).optional()),
}) satisfies z.ZodType<EntityConfig>;

const manifestFields = {
  board: Board,
  entry: z.string().max(256).optional(),
  project: z.string().nullable().optional(),
  libraryVersion: z.string().max(32),
  sha256: z.string().optional(),
};

const uniqueIds = (entities: EntityConfig[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  entities.forEach((e, i) => {
    if (seen.has(e.id))
      ctx.addIssue({ code: "custom", path: [i, "id"], message: `repeats ${JSON.stringify(e.id)}` });
    seen.add(e.id);
  });
};

/** The manifest of a new deployment (what `sdk build` writes). */
export const DeploymentManifest = z.object({
  ...manifestFields,
  entities: z.array(EntityConfigSchema).max(entityLimits.perDeployment).superRefine(uniqueIds).default([]),
});
export type DeploymentManifest = z.infer<typeof DeploymentManifest>;

/** The manifest of a stored deployment, as the server reads and lists it. */
export const StoredDeploymentManifest = z.object({
  ...manifestFields,
  entities: z.array(StoredEntityConfigSchema).max(entityLimits.perDeployment).default([]),
});

/** The manifest a build writes: every field present (the server accepts older manifests without some). */
export type BuiltManifest = { [K in keyof DeploymentManifest]-?: Exclude<DeploymentManifest[K], undefined> };

/** The largest bundle and source map a deployment may upload. */
export const deploymentLimits = {
  bundleMaxBytes: 2 * 1024 * 1024,
  sourceMapMaxBytes: 6 * 1024 * 1024,
} as const;
