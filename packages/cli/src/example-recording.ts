import type { RecordingEntry, RecordingHeader } from "@sdk/protocol";
import type { TemplateInput } from "./templates.ts";

const ok = (value: unknown = null) => ({ ok: true as const, value });

/**
 * The session `sdk init` scaffolds as test/recordings/example.jsonl: the template script on a board
 * that connects, has its button pressed and let go, is switched on from Home Assistant, and reads
 * the chip's temperature twice. `sdk test` replays it against the template as generated.
 */
export function exampleRecording(t: TemplateInput): string {
  const header: RecordingHeader = {
    format: "sdk-recording",
    version: 1,
    device: { id: "dev_example", name: "example", board: t.board, firmware: "1.0.0" },
    projectId: t.projectId ?? "prj_example",
    recordedAt: "2026-01-01T12:00:00.000Z",
    deploymentVersion: null,
  };
  const entries: RecordingEntry[] = [
    { t: 0, kind: "connect", board: t.board, firmware: "1.0.0" },
    { t: 1, kind: "log", level: "info", message: "connected: dev_example" },
    {
      t: 1,
      kind: "command",
      command: "pin_mode",
      args: { pin: 15, mode: "input", pull: "up" },
      result: ok(),
    },
    {
      t: 14,
      kind: "command",
      command: "gpio_watch",
      args: { pin: 15, edge: "both", debounceMs: 20 },
      result: ok(),
    },
    { t: 27, kind: "command", command: "gpio_write", args: { pin: "LED", value: 0 }, result: ok() },
    { t: 39, kind: "state", entityId: "led", value: false },
    { t: 4210, kind: "message", message: { type: "gpio_change", pin: 15, value: 0 } },
    { t: 4211, kind: "state", entityId: "button", value: true },
    { t: 4630, kind: "message", message: { type: "gpio_change", pin: 15, value: 1 } },
    { t: 4631, kind: "state", entityId: "button", value: false },
    { t: 10_040, kind: "command", command: "temperature_read", args: {}, result: ok({ celsius: 21.46 }) },
    { t: 10_052, kind: "state", entityId: "temperature", value: 21.5 },
    {
      t: 12_500,
      kind: "message",
      message: { type: "ha_command", entityId: "led", kind: "switch", state: "ON" },
    },
    { t: 12_501, kind: "command", command: "gpio_write", args: { pin: "LED", value: 1 }, result: ok() },
    { t: 12_513, kind: "state", entityId: "led", value: true },
    { t: 20_041, kind: "command", command: "temperature_read", args: {}, result: ok({ celsius: 22.04 }) },
    { t: 20_050, kind: "state", entityId: "temperature", value: 22 },
    { t: 25_000, kind: "disconnect", reason: "closed" },
  ];
  return [header, ...entries].map((line) => `${JSON.stringify(line)}\n`).join("");
}
