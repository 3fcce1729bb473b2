import { z } from "zod";
import {
  type Board as BoardName,
  boardIds,
  type ConnectionState as ConnectionStateName,
  connectionStates,
  type LogLevel as LogLevelName,
  logLevels,
} from "./hardware.ts";
import { noNul, noNulMessage, utf8 } from "./schema-parts.ts";

// Field types shared by the REST resources, the device protocol and the watch socket.

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

export const Board = z.enum(boardIds as [BoardName, ...BoardName[]]);
export type Board = BoardName;

export const ConnectionState = z.enum(connectionStates);
export type ConnectionState = ConnectionStateName;

export const LogLevel = z.enum(logLevels);
export type LogLevel = LogLevelName;

export const LogSource = z.enum(["device", "system", "script"]);
export type LogSource = z.infer<typeof LogSource>;

export const envVarNamePattern = /^[A-Z_][A-Z0-9_]*$/;
export const envVarLimits = { nameMaxLength: 64, valueMaxBytes: 4096, perProject: 100 } as const;

export const EnvVarName = z
  .string()
  .max(envVarLimits.nameMaxLength, `must be at most ${envVarLimits.nameMaxLength} characters`)
  .regex(envVarNamePattern, "must match ^[A-Z_][A-Z0-9_]*$ (upper-case letters, digits and _)");

export const EnvVarValue = z
  .string()
  .refine(noNul, noNulMessage)
  .refine(
    (value) => utf8.encode(value).length <= envVarLimits.valueMaxBytes,
    `must be at most ${envVarLimits.valueMaxBytes} bytes`,
  );
