import { z } from "zod";
import { Board, Email, EnvVarValue, Password, Role } from "./fields.ts";
import { customTypePattern } from "./hardware.ts";
import { DeploymentManifest, deploymentLimits } from "./manifest.ts";
import { CreatedApiToken, Device, DeviceCredentials, User } from "./resources.ts";
import { RolloutOptions } from "./rollouts.ts";
import { Name, utf8 } from "./schema-parts.ts";

// What the REST API accepts (request bodies) and the small results of its actions.

export const RegisterBody = z.object({
  email: Email,
  password: Password,
  issueToken: z.boolean().optional().describe("Also create an API token and return it (for the CLI)."),
  tokenName: Name().optional(),
});
export const LoginBody = RegisterBody.extend({ password: z.string().min(1).max(256) });
export const ChangePasswordBody = z.object({
  currentPassword: z.string().min(1).max(256),
  newPassword: Password,
});
export const CreateTokenBody = z.object({ name: Name() });
export const ChangeRoleBody = z.object({ role: Role });
export const CreateUserBody = z.object({ email: Email, password: Password, role: Role.default("member") });
export const CreateProjectBody = z.object({ name: Name() });
export const RenameProjectBody = z.object({ name: Name() });
export const CreateDeviceBody = z.object({ name: Name(), board: Board });
export const RenameDeviceBody = z.object({ name: Name() });
export const SetEnvVarBody = z.object({ value: EnvVarValue });

export const AuthResult = z.object({ user: User, token: CreatedApiToken.optional() });
export type AuthResult = z.infer<typeof AuthResult>;
export const CreatedDevice = z.object({ device: Device, credentials: DeviceCredentials });
export type CreatedDevice = z.infer<typeof CreatedDevice>;

export const SendCommandBody = z.object({
  type: z.string().min(1).max(64).describe("A device command, e.g. gpio_write (see docs/protocol.md)"),
  args: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("The command's arguments, e.g. { pin: 2, value: 1 }"),
});
export const CommandOutcome = z.object({
  value: z.unknown().describe("The device's result; null for commands without one"),
});

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
  rollout: RolloutOptions.optional().describe("A canary, its window, or no automatic rollback."),
});

/** Making an earlier deployment live again, at once or as a canary. */
export const ActivateDeploymentBody = RolloutOptions.optional();

export const SendMessageBody = z
  .object({ type: z.string().regex(customTypePattern, "must be lower_snake_case") })
  .catchall(z.unknown())
  .describe("A message for the script's onMessage: an object with a lower_snake_case type and any fields");
export const MessageOutcome = z.object({ delivered: z.boolean() });
