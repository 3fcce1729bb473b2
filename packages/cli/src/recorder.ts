import fs from "node:fs";
import path from "node:path";
import {
  type Device,
  type RecordingEntry,
  type RecordingHeader,
  recordingFormat,
  recordingVersion,
  type WatchEvent,
} from "@sdk/protocol";
import { CliError } from "./errors.ts";
import type { Output } from "./output.ts";

/** Without a terminal, a count line after this many entries (on one, a line redrawn in place). */
const countEvery = 100;

/**
 * Opens FILE for a recording: refuses one that exists unless `force`; makes its directory
 * (`test/recordings/`) when missing.
 */
export function openRecordingFile(file: string, force: boolean): number {
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    return fs.openSync(file, force ? "w" : "wx");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new CliError(`${file} exists: pass --force to overwrite it`);
    throw new CliError(`cannot write ${file}: ${(error as Error).message}`);
  }
}

export interface RecordingSummary {
  file: string;
  device: string;
  entries: number;
  seconds: number;
  /** Commands users sent (REST, MCP): not in the recording, which keeps what the script did. */
  apiCommands: number;
  /** Events the server dropped because the watch fell behind, or missed while it reconnected. */
  incomplete: boolean;
  /** False when the watch never opened: no file was written. */
  written: boolean;
}

/**
 * Turns one device's watch events (`?record=true`) into a recording (packages/protocol/src/
 * recording.ts): the header line, then one JSON line per entry, `t` in milliseconds since the
 * recording started on the server's clock. The header needs the device's board and firmware: when
 * the device is offline as the recording starts, it waits for the device's hello (entries wait
 * with it). Lines are written as they come, so an interrupted recording keeps what it had.
 */
export class SessionRecorder {
  readonly #fd: number;
  readonly #file: string;
  readonly #out: Output;
  readonly #projectId: string;
  readonly #deploymentVersion: number | null;
  readonly #startedAt = performance.now();
  #device: Device | undefined;
  #start: number | undefined;
  #lastT = 0;
  #header: RecordingHeader | undefined;
  #waiting: string[] = [];
  #entries = 0;
  #apiCommands = 0;
  #incomplete = false;
  /** The device's connection as the recording last saw it. */
  #online = false;
  /** Its firmware then: another after a reconnect means it reconnected in between. */
  #firmware: string | null = null;
  #closed = false;
  #drawn = false;
  readonly #progress: boolean;

  constructor(
    fd: number,
    options: {
      file: string;
      out: Output;
      projectId: string;
      deploymentVersion: number | null;
      /** Progress lines and a running count (false: only warnings, for `sdk dev`, which shows its own). */
      progress?: boolean;
    },
  ) {
    this.#progress = options.progress ?? true;
    this.#fd = fd;
    this.#file = options.file;
    this.#out = options.out;
    this.#projectId = options.projectId;
    this.#deploymentVersion = options.deploymentVersion;
  }

  /** One event of the device's watch, in `seq` order. */
  handle(event: WatchEvent): void {
    if (this.#closed) return;
    if (event.type === "snapshot") {
      this.#snapshot(event.device, event.at);
      return;
    }
    if (this.#start === undefined) return;
    if (event.type === "lagged") {
      this.#incomplete = true;
      this.#note(
        this.#out.yellow(
          `${event.dropped} events were dropped (the watch fell behind): the recording misses them`,
        ),
        true,
      );
      return;
    }
    if (event.type === "command" && event.source !== "script") {
      this.#apiCommands++;
      return;
    }
    // `t` once it is known to be recorded: other events do not move the clock on.
    const entry = this.#toEntry(event, 0);
    if (!entry) return;
    entry.t = this.#t(event.at);
    if (entry.kind === "connect") this.#writeHeader(entry.firmware, entry.board);
    this.#entry(entry);
    this.#online = entry.kind === "connect" ? true : entry.kind === "disconnect" ? false : this.#online;
    if (entry.kind === "connect") this.#firmware = entry.firmware;
    if (entry.kind === "connect")
      this.#note(`${this.#out.green("●")} device connected (${entry.board}, firmware ${entry.firmware})`);
    if (entry.kind === "disconnect")
      this.#note(`${this.#out.yellow("○")} device disconnected: ${entry.reason}`);
  }

  /** The entry for an event (undefined: not recorded). */
  #toEntry(event: WatchEvent, t: number): RecordingEntry | undefined {
    switch (event.type) {
      case "status":
        return event.status === "online"
          ? {
              t,
              kind: "connect",
              board: event.board ?? this.#device!.board,
              firmware: event.firmware ?? this.#device!.firmwareVersion ?? "unknown",
            }
          : { t, kind: "disconnect", reason: event.reason ?? "offline" };
      case "message":
        return { t, kind: "message", message: event.message };
      case "command":
        return { t, kind: "command", command: event.command, args: event.args, result: event.result };
      case "state":
        return { t, kind: "state", entityId: event.entityId, value: event.value };
      case "send":
        return { t, kind: "send", message: event.message };
      case "log":
        return event.entry.source === "script"
          ? { t, kind: "log", level: event.entry.level, message: event.entry.message }
          : undefined;
      default:
        return undefined;
    }
  }

  /** The watch dropped and reconnects: what happens until its next snapshot is missed. */
  dropped(): void {
    if (this.#closed || this.#start === undefined) return;
    this.#incomplete = true;
    this.#note(this.#out.yellow("the watch connection dropped: events until it is back are missing"), true);
  }

  /** Writes what is still waiting (the header with what is known) and closes the file. */
  finish(): RecordingSummary {
    if (!this.#closed) {
      this.#closed = true;
      if (!this.#header && this.#device)
        this.#writeHeader(this.#device.firmwareVersion ?? "unknown", this.#device.board);
      this.#clearCount();
      fs.closeSync(this.#fd);
      // No snapshot ever came (the watch never opened): nothing is known, no file is left.
      if (!this.#header) fs.rmSync(this.#file, { force: true });
    }
    return {
      file: this.#file,
      device: this.#device?.id ?? "",
      entries: this.#entries,
      seconds: Math.round((performance.now() - this.#startedAt) / 100) / 10,
      apiCommands: this.#apiCommands,
      incomplete: this.#incomplete,
      written: this.#header !== undefined,
    };
  }

  #snapshot(device: Device, at: string): void {
    if (this.#start !== undefined) {
      this.#resumed(device, at);
      return;
    }
    this.#device = device;
    this.#start = Date.parse(at);
    this.#online = device.status === "online";
    this.#firmware = device.firmwareVersion;
    if (device.status === "online") {
      this.#writeHeader(device.firmwareVersion ?? "unknown", device.board);
      this.#note(
        this.#out.yellow(
          "the device is online already: the recording starts in the middle of its session, without its hello (restart the device to record from its connect)",
        ),
        true,
      );
    } else {
      this.#note(this.#out.dim("waiting for the device to connect…"));
    }
  }

  /**
   * The snapshot after the watch reconnected: when the device's connection changed in the gap (it
   * went offline, came online, or came back with other firmware), a disconnect and/or a connect at
   * the snapshot's time stand for what was missed. The recording is marked incomplete already.
   */
  #resumed(device: Device, at: string): void {
    const online = device.status === "online";
    const firmware = device.firmwareVersion ?? "unknown";
    const reconnected = online && this.#online && device.firmwareVersion !== this.#firmware;
    if (online === this.#online && !reconnected) return;
    const t = this.#t(at);
    const missed = "missed while the watch reconnected";
    if (this.#online) {
      this.#entry({ t, kind: "disconnect", reason: `offline (${missed})` });
      this.#note(`${this.#out.yellow("○")} the device disconnected (${missed})`, true);
    }
    if (online) {
      this.#writeHeader(firmware, device.board);
      this.#entry({ t, kind: "connect", board: device.board, firmware });
      this.#note(`${this.#out.green("●")} the device connected (${missed}), firmware ${firmware}`, true);
    }
    this.#online = online;
    this.#firmware = device.firmwareVersion;
  }

  /** Milliseconds since the start on the server's clock, never going back. */
  #t(at: string): number {
    const t = Math.max(this.#lastT, Date.parse(at) - this.#start!);
    this.#lastT = Number.isFinite(t) ? t : this.#lastT;
    return this.#lastT;
  }

  #writeHeader(firmware: string, board: Device["board"]): void {
    if (this.#header) return;
    const device = this.#device!;
    this.#header = {
      format: recordingFormat,
      version: recordingVersion,
      device: { id: device.id, name: device.name, board, firmware },
      projectId: this.#projectId,
      recordedAt: new Date(this.#start!).toISOString(),
      deploymentVersion: this.#deploymentVersion,
    };
    fs.writeSync(this.#fd, `${JSON.stringify(this.#header)}\n${this.#waiting.join("")}`);
    this.#waiting = [];
  }

  #entry(entry: RecordingEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    if (this.#header) fs.writeSync(this.#fd, line);
    else this.#waiting.push(line);
    this.#entries++;
    this.#count();
  }

  #note(text: string, warning = false): void {
    if (!this.#progress && !warning) return;
    this.#clearCount();
    this.#out.info(`${text}${this.#entries > 0 ? this.#out.dim(` (${this.#entries} entries so far)`) : ""}`);
  }

  #count(): void {
    if (this.#out.json || !this.#progress) return;
    const text = `recording: ${this.#entries} entr${this.#entries === 1 ? "y" : "ies"}`;
    if (this.#out.interactive) {
      process.stderr.write(`\r\u001b[2K${this.#out.dim(text)}`);
      this.#drawn = true;
    } else if (this.#entries % countEvery === 0) this.#out.info(this.#out.dim(text));
  }

  #clearCount(): void {
    if (!this.#drawn) return;
    process.stderr.write("\r\u001b[2K");
    this.#drawn = false;
  }
}

/** The "recorded N entries in X s to FILE" line, and what the recording lacks. */
export function reportRecording(out: Output, summary: RecordingSummary): void {
  out.result(summary);
  if (!summary.written) {
    out.warn(`Nothing was recorded (the device watch never opened): ${summary.file} was not written`);
    return;
  }
  out.info(
    `${out.green("✔")} recorded ${summary.entries} entr${summary.entries === 1 ? "y" : "ies"} in ${summary.seconds} s to ${summary.file}`,
  );
  if (summary.apiCommands > 0)
    out.info(
      out.dim(
        `${summary.apiCommands} command${summary.apiCommands === 1 ? "" : "s"} sent by users (REST, MCP) ${summary.apiCommands === 1 ? "is" : "are"} not in the recording: it keeps what the script did`,
      ),
    );
  if (summary.incomplete)
    out.warn(
      `${summary.file} is incomplete: events were missed while recording (the watch fell behind or reconnected). sdk test replays it as it is; record again for a complete session.`,
    );
}
