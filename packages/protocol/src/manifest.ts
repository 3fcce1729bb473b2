import { z } from "zod";
import { Board } from "./fields.ts";
import { type EntityConfig, entityIdPattern, entityKinds, entityLimits, stateClasses } from "./hardware.ts";
import { Name } from "./schema-parts.ts";

// What a deployment declares: the board, the entry file, and its Home Assistant entities.

export const EntityConfigSchema = z.object({
  id: z.string().regex(entityIdPattern, "must be 1–64 letters, digits, _ . or -"),
  kind: z.enum(entityKinds),
  name: Name(entityLimits.nameMaxLength),
  unit: z.string().max(entityLimits.textMaxLength).optional(),
  deviceClass: z.string().max(entityLimits.textMaxLength).optional(),
  icon: z.string().max(entityLimits.textMaxLength).optional(),
  stateClass: z.enum(stateClasses).optional(),
  displayPrecision: z.number().int().min(0).max(10).optional(),
  brightness: z.boolean().optional(),
  rgb: z.boolean().optional(),
}) satisfies z.ZodType<EntityConfig>;

export const DeploymentManifest = z.object({
  board: Board,
  entry: z.string().max(256).optional(),
  project: z.string().nullable().optional(),
  entities: z.array(EntityConfigSchema).max(entityLimits.perDeployment).default([]),
  libraryVersion: z.string().max(32),
  sha256: z.string().optional(),
});
export type DeploymentManifest = z.infer<typeof DeploymentManifest>;

/** The manifest a build writes: every field present (the server accepts older manifests without some). */
export type BuiltManifest = { [K in keyof DeploymentManifest]-?: Exclude<DeploymentManifest[K], undefined> };

/** The largest bundle and source map a deployment may upload. */
export const deploymentLimits = {
  bundleMaxBytes: 2 * 1024 * 1024,
  sourceMapMaxBytes: 6 * 1024 * 1024,
} as const;
