import { parseArgs } from "node:util";
import { type Board, deviceSocketUrl } from "@sdk/protocol";

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

interface CliDevice {
  deviceId: string;
  secret: string;
  board: Board;
}

export type CliCommand =
  | { kind: "help" }
  | { kind: "run"; server: string; url: string; devices: CliDevice[]; firmware?: string; quiet: boolean };

export const usage = `sdk-sim: simulated Raspberry Pi Pico W / Pico 2 W boards for an sdk server

Each simulated board connects to the server's device socket (/v1/device) with its device id and
secret, says hello, and answers the server's commands from virtual hardware (GPIO, onboard LED,
PWM, ADC, temperature, I2C sensors, SPI and UART loopback, WS2812). It reconnects with backoff.

Usage:
  sdk-sim --server <address> --device <id> --secret <secret> [--board pico_w|pico2_w]
  sdk-sim --server <address> --credentials <file.json> [--count N]

Options:
  --server <address>    host:port        → ws://host:port/v1/device
                        host             → wss://host/v1/device (TLS, port 443)
                        http(s)://… or ws(s)://… URLs are used as given
  --device <id>         the device id shown when the device was added
  --secret <secret>     the device secret (shown only once, when the device was added)
  --board <board>       pico_w (default) or pico2_w; with --credentials, for entries without one
  --credentials <file>  a JSON array of {"deviceId": "...", "secret": "...", "board": "pico_w"}
  --count <N>           with --credentials: run only the first N devices (default: all)
  --firmware <string>   the firmware string sent in hello (default sim-<version>)
  --quiet               print connection changes only, not commands and events
  -h, --help            show this text

Output: one line per connection change ("connected", "disconnected 1006", "retrying in 1.2 s",
"auth failed: Invalid device credentials"), and unless --quiet each command received with its
answer and each event sent.

Exit status: 0 after SIGINT or SIGTERM closed every connection (close code 1000); 2 on usage
errors (bad options, unreadable or invalid credentials file).
`;

const boardNames: readonly Board[] = ["pico_w", "pico2_w"];

function board(value: unknown, where: string): Board {
  if (typeof value !== "string" || !boardNames.includes(value as Board)) {
    throw new UsageError(`${where}: board must be pico_w or pico2_w, got ${JSON.stringify(value)}`);
  }
  return value as Board;
}

/** Parses the command line; `readFile` reads the credentials file. Throws UsageError. */
export function parseCli(argv: readonly string[], readFile: (path: string) => string): CliCommand {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        server: { type: "string" },
        device: { type: "string" },
        secret: { type: "string" },
        board: { type: "string" },
        credentials: { type: "string" },
        count: { type: "string" },
        firmware: { type: "string" },
        quiet: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return { kind: "help" };

  const server = values.server as string | undefined;
  if (!server) throw new UsageError("--server is required");
  let url: string;
  try {
    url = deviceSocketUrl(server);
  } catch (error) {
    const why = error instanceof TypeError && !/Invalid URL/.test(error.message) ? `: ${error.message}` : "";
    throw new UsageError(`--server: cannot make a URL of ${JSON.stringify(server)}${why}`);
  }
  const defaultBoard = values.board === undefined ? "pico_w" : board(values.board, "--board");
  const firmware = values.firmware as string | undefined;
  if (firmware !== undefined && (firmware.length < 1 || firmware.length > 64)) {
    throw new UsageError("--firmware must be 1–64 characters");
  }
  const single = values.device !== undefined || values.secret !== undefined;
  const file = values.credentials as string | undefined;
  if (single && file !== undefined)
    throw new UsageError("use either --device/--secret or --credentials, not both");
  if (!single && file === undefined)
    throw new UsageError("give --device and --secret, or --credentials <file>");
  if (values.count !== undefined && file === undefined) throw new UsageError("--count needs --credentials");

  let devices: CliDevice[];
  if (file === undefined) {
    if (!values.device) throw new UsageError("--device is required with --secret");
    if (!values.secret) throw new UsageError("--secret is required with --device");
    if ((values.device as string).includes(":"))
      throw new UsageError('--device: a device id cannot contain ":"');
    devices = [{ deviceId: values.device as string, secret: values.secret as string, board: defaultBoard }];
  } else {
    devices = loadCredentials(file, readFile, defaultBoard);
    if (values.count !== undefined) {
      const count = Number(values.count);
      if (!/^\d+$/.test(values.count as string) || count < 1) {
        throw new UsageError(`--count must be a positive integer, got ${JSON.stringify(values.count)}`);
      }
      if (count > devices.length) {
        throw new UsageError(`--count ${count}: ${file} holds only ${devices.length} device(s)`);
      }
      devices = devices.slice(0, count);
    }
  }
  return {
    kind: "run",
    server,
    url,
    devices,
    ...(firmware ? { firmware } : {}),
    quiet: values.quiet === true,
  };
}

function loadCredentials(file: string, readFile: (path: string) => string, defaultBoard: Board): CliDevice[] {
  let text: string;
  try {
    text = readFile(file);
  } catch (error) {
    throw new UsageError(`--credentials: cannot read ${file}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--credentials: ${file} is not valid JSON`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new UsageError(
      `--credentials: ${file} must hold a non-empty JSON array of {deviceId, secret, board?}`,
    );
  }
  return parsed.map((entry: unknown, i) => {
    const where = `--credentials: entry ${i}`;
    const e = entry as Record<string, unknown> | null;
    if (typeof e !== "object" || e === null) throw new UsageError(`${where} is not an object`);
    if (typeof e.deviceId !== "string" || e.deviceId === "" || e.deviceId.includes(":")) {
      throw new UsageError(`${where}: deviceId must be a non-empty string without ":"`);
    }
    if (typeof e.secret !== "string" || e.secret === "")
      throw new UsageError(`${where}: secret must be a non-empty string`);
    return {
      deviceId: e.deviceId,
      secret: e.secret,
      board: e.board === undefined ? defaultBoard : board(e.board, where),
    };
  });
}
