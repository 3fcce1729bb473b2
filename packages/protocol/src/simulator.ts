import { z } from "zod";

/** A simulated board says so in hello: its firmware string starts with this. */
export const simulatorFirmwarePrefix = "sim-";

export const isSimulatorFirmware = (firmware: string | null | undefined): boolean =>
  typeof firmware === "string" && firmware.startsWith(simulatorFirmwarePrefix);

const Pin = z.number().int().min(0).max(29).describe("A header GPIO of the board");

/**
 * Commands only the simulator understands: they act on its virtual inputs from outside, the way
 * a finger or a sensor acts on a real board. The server lets them through to any device; real
 * firmware answers them like every command it does not know (`unsupported`).
 */
export const simulatorCommandSchemas = {
  /** A button between the pin and the rail opposite its pull: pressed for holdMs, then released. */
  sim_press: z.object({
    pin: Pin,
    holdMs: z.number().int().min(1).max(10_000).optional().describe("How long it is held, default 150 ms"),
  }),
  /** Drives the pin from outside (0 or 1), or stops driving it (null: the pull decides). */
  sim_input: z.object({ pin: Pin, level: z.union([z.literal(0), z.literal(1), z.null()]) }),
};

/** What the simulator answers: nothing (null) for both. */
export const simulatorCommandResults = {
  sim_press: z.null(),
  sim_input: z.null(),
};

export type SimulatorCommandType = keyof typeof simulatorCommandSchemas;
export type SimulatorCommandArgs<T extends SimulatorCommandType> = z.infer<
  (typeof simulatorCommandSchemas)[T]
>;

export const isSimulatorCommand = (type: string): type is SimulatorCommandType =>
  Object.hasOwn(simulatorCommandSchemas, type);
