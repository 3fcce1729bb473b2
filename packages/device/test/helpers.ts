import assert from "node:assert/strict";
import { type Board, Device, type DeviceBridge, SdkError } from "../src/index.ts";

export interface Recorded {
  commands: { type: string; args: Record<string, unknown> }[];
  states: [entityId: string, valueJson: string][];
  sent: string[];
}

/** A bridge that records everything and answers each command type with a canned result. */
export function fakeBridge(answers: Record<string, unknown> = {}): { bridge: DeviceBridge; rec: Recorded } {
  const rec: Recorded = { commands: [], states: [], sent: [] };
  const bridge: DeviceBridge = {
    command(type, args) {
      rec.commands.push({ type, args: structuredClone(args) });
      return Promise.resolve(answers[type] ?? {});
    },
    emitState(entityId, valueJson) {
      rec.states.push([entityId, valueJson]);
    },
    send(messageJson) {
      rec.sent.push(messageJson);
    },
  };
  return { bridge, rec };
}

export function setup(board: Board, answers?: Record<string, unknown>) {
  const { bridge, rec } = fakeBridge(answers);
  return { device: new Device(board, bridge), rec };
}

export const boardsUnderTest: Board[] = ["pico_w", "pico2_w"];
export const boardName = { pico_w: "Raspberry Pi Pico W", pico2_w: "Raspberry Pi Pico 2 W" } as const;
export const utf8 = (text: string) => [...new TextEncoder().encode(text)];

/** Asserts `run` throws `SdkError` invalid_argument synchronously, matching `message`, and nothing reached the bridge. */
export function assertInvalid(board: Board, run: (device: any) => unknown, message: RegExp) {
  const { device, rec } = setup(board);
  assert.throws(
    () => run(device),
    (error: unknown) => {
      assert.ok(error instanceof SdkError, `expected SdkError, got ${String(error)}`);
      assert.equal(error.name, "SdkError");
      assert.equal(error.code, "invalid_argument");
      assert.equal(error.docs, "/docs/errors#invalid_argument");
      assert.match(error.message, message);
      return true;
    },
  );
  assert.deepEqual(rec, { commands: [], states: [], sent: [] }, "nothing may reach the bridge");
}
