import type { LogEntry, LogLevel } from "@sdk/protocol";

/** Where a command's results go: one JSON document, or text for people (colour only on a terminal). */
export class Output {
  readonly json: boolean;
  readonly color: boolean;
  readonly interactive: boolean;
  #spinner: { timer: NodeJS.Timeout; text: string } | undefined;

  constructor(options: { json: boolean; env?: Record<string, string | undefined> }) {
    const env = options.env ?? process.env;
    this.json = options.json;
    this.interactive = Boolean(process.stderr.isTTY) && !this.json;
    this.color = Boolean(process.stdout.isTTY) && !env.NO_COLOR && env.TERM !== "dumb";
  }

  paint(code: number, text: string): string {
    return this.color ? `\u001b[${code}m${text}\u001b[0m` : text;
  }
  bold = (t: string) => this.paint(1, t);
  dim = (t: string) => this.paint(2, t);
  red = (t: string) => this.paint(31, t);
  green = (t: string) => this.paint(32, t);
  yellow = (t: string) => this.paint(33, t);
  cyan = (t: string) => this.paint(36, t);

  /** Human output: a line on stdout. Silent in JSON mode. */
  line(text = ""): void {
    if (!this.json) {
      this.stopSpinner();
      process.stdout.write(`${text}\n`);
    }
  }

  /** A log entry as one line: time, the device when several are shown, level, source, message. */
  logEntry(entry: LogEntry, deviceId?: string): void {
    const paint: Record<LogLevel, (t: string) => string> = {
      debug: this.dim,
      info: (t) => t,
      warn: this.yellow,
      error: this.red,
    };
    const level = paint[entry.level](entry.level.padEnd(5));
    const device = deviceId ? `${this.cyan(deviceId)} ` : "";
    this.line(
      `${this.dim(localTime(entry.at))} ${device}${level} ${this.dim(`[${entry.source}]`)} ${entry.message}`,
    );
  }

  /** The one JSON document of a command (`--json` / `SDK_OUTPUT=json`). */
  result(value: unknown): void {
    if (this.json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One NDJSON line, flushed at once (`logs --tail --json`). */
  ndjson(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Progress and notices: stderr, so stdout stays clean for results. */
  info(text: string): void {
    this.stopSpinner();
    process.stderr.write(`${text}\n`);
  }

  warn(text: string): void {
    this.info(this.yellow(text));
  }

  /** A spinner on a terminal; a plain progress line otherwise (never in JSON mode). */
  step(text: string): void {
    if (this.json) return;
    if (!this.interactive) {
      process.stderr.write(`${text}…\n`);
      return;
    }
    this.stopSpinner();
    const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    let i = 0;
    const draw = () => process.stderr.write(`\r${this.cyan(frames[i++ % frames.length]!)} ${text}…`);
    draw();
    this.#spinner = { timer: setInterval(draw, 80), text };
  }

  stopSpinner(): void {
    if (!this.#spinner) return;
    clearInterval(this.#spinner.timer);
    process.stderr.write("\r\u001b[2K");
    this.#spinner = undefined;
  }

  /** Aligned columns. */
  table(headers: string[], rows: string[][]): void {
    if (this.json) return;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: measuring text without colour codes
    const visible = (s: string) => s.replace(/\u001b\[\d+m/g, "").length;
    const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? ""))));
    const fmt = (cells: string[]) =>
      cells.map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat(widths[i]! - visible(c)))).join("  ");
    this.line(this.dim(fmt(headers)));
    for (const row of rows) this.line(fmt(row));
  }
}

/** A time in the user's local time zone, e.g. "2026-11-21 23:05:12". */
export function localTime(iso: string | null | undefined): string {
  if (!iso) return "never";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
