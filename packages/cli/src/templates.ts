import fs from "node:fs";
import { projectTsconfig } from "@sdk/build";
import { recordingsDir } from "@sdk/protocol";
import { adc, type Board, boards } from "@sdk/protocol/hardware";
import { exampleRecording } from "./example-recording.ts";

/** This CLI's version: the CI workflow installs the same one, so CI replays as this machine does. */
const cliVersion: string = JSON.parse(
  fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"),
).version;

/** The files `sdk init` writes. Each is a function of the project's name, board and id. */
export interface TemplateInput {
  name: string;
  board: Board;
  projectId: string | null;
  host: string | null;
}

/** "`GP0`–`GP22`, `GP26`–`GP28`": ascending pin numbers as runs. */
function pinRuns(pins: readonly number[], quote = ""): string {
  const runs: string[] = [];
  for (let i = 0; i < pins.length; i++) {
    const start = pins[i]!;
    while (pins[i + 1] === pins[i]! + 1) i++;
    const gp = (n: number) => `${quote}GP${n}${quote}`;
    runs.push(start === pins[i] ? gp(start) : `${gp(start)}–${gp(pins[i]!)}`);
  }
  return runs.join(", ");
}

const guidance = (
  t: TemplateInput,
) => `This is an sdk device project: a TypeScript class that runs on the sdk server (${t.host ?? "see ~/.sdk/credentials.json"}) once per connected ${boards[t.board].name}, not on the board itself.

- The script is \`src/index.ts\`: \`export default class … extends DeviceScript\` with \`onDeviceConnect()\`, \`onMessage(msg)\`, \`onDeviceDisconnect()\`.
- Drive the board with \`this.env.DEVICE\`: pinMode, gpioWrite/gpioRead/gpioToggle, watchPin (→ \`gpio_change\` messages), pwm, adcRead (${pinRuns(boards[t.board].adcPins)}, 0–${adc.maxVolts} V), readTemperature, i2cConfigure/i2cWrite/i2cRead/i2cScan, spiConfigure/spiTransfer, uartConfigure/uartWrite (→ \`uart_rx\`), ws2812Write, send, emitState(entityId, value).
- Pins are GPIO numbers (${pinRuns(boards[t.board].gpios, "`")}), not physical pin numbers; the onboard LED is \`OnboardLED\`.
- Bad arguments throw \`SdkError\` (code \`invalid_argument\`) synchronously; device failures reject with \`device_error\`, \`device_timeout\` or \`device_offline\`.
- There is no Node.js: no \`process\`, \`require\`, \`fetch\`, files or network. Only JavaScript built-ins, \`console\` and timers. Every handler has a short deadline (100 ms by default): no long loops.
- Project settings and Home Assistant entities are in \`sdk.ts\` (\`defineConfig\`): \`ha.entities\` of kind sensor, binary_sensor, switch or light, fed by \`emitState(id, value)\`. Switch and light commands from Home Assistant arrive in \`onMessage\`: check them with \`isHaCommand(msg)\` and confirm with \`emitState\`.
- Env vars: \`sdk env set NAME value\`, read as \`this.env.NAME\` (strings).

Commands: \`sdk build\` (type-check + bundle; errors as file:line:column), \`sdk deploy\`, \`sdk dev\` (local server + simulated board, redeploys on save), \`sdk test\` (replays the recorded sessions in \`test/recordings/\` against the script; \`--update\` accepts a change), \`sdk status\`, \`sdk logs --tail\`. Add \`--json\` for machine-readable output.
The sdk MCP server (\`.mcp.json\`) gives an agent the same: list_projects, list_devices, get_device, get_logs, build, deploy, send_message.`;

export const templates: Record<string, (t: TemplateInput) => string> = {
  "AGENTS.md": (t) => `# ${t.name}\n\n${guidance(t)}\n`,
  ".cursor/rules/sdk.mdc": (t) =>
    `---\ndescription: How to write and ship this sdk device script\nglobs: ["src/**/*.ts", "sdk.ts"]\nalwaysApply: true\n---\n\n${guidance(t)}\n`,
  ".mcp.json": () =>
    `${JSON.stringify({ mcpServers: { sdk: { command: "sdk-mcp", args: [] } } }, null, 2)}\n`,
  "README.md": (t) => `# ${t.name}

A device script for ${boards[t.board].name} boards, run by an sdk server.

\`npm install -g @sdk/cli\` installs the \`sdk\` command; \`npm install -g @sdk/mcp\` installs
\`sdk-mcp\`, the MCP server \`.mcp.json\` starts for AI agents. Nothing needs installing in this
directory: \`sdk init\`, \`sdk build\` and \`sdk dev\` write the library's types into \`.sdk/types\`
(not committed). After cloning, run \`sdk build\` once so your editor finds \`@sdk/device\`.

\`\`\`sh
sdk build          # type-check and bundle (also refreshes .sdk/types)
sdk dev            # a local server and a simulated board; redeploys on save
sdk test           # replay test/recordings/*.jsonl against the script (also in CI)
sdk deploy         # build and ship to ${t.host ?? "your server"}
sdk logs --tail
\`\`\`

\`test/recordings/\` holds recorded device sessions (\`sdk record --device dev_… FILE\`, \`sdk dev --record FILE\`);
\`sdk test\` replays them on a virtual clock and shows where the script now behaves differently.
\`.github/workflows/sdk-test.yml\` runs it on every push.

Edit \`src/index.ts\`. Settings and Home Assistant entities live in \`sdk.ts\`.
`,
  "sdk.ts": (t) => `import { defineConfig } from "@sdk/device";

export default defineConfig({
${t.projectId ? `  project: "${t.projectId}",\n` : '  // project: "prj_…", // link a server project (sdk init does this when you are logged in)\n'}  board: "${t.board}",
  entry: "src/index.ts",
  ha: {
    entities: [
      { id: "button", kind: "binary_sensor", name: "Button" },
      { id: "led", kind: "switch", name: "LED" },
      { id: "temperature", kind: "sensor", name: "Temperature", unit: "°C", deviceClass: "temperature", stateClass: "measurement", displayPrecision: 1 },
    ],
  },
});
`,
  "src/index.ts": () => `import { DeviceScript, GP15, isHaCommand, OnboardLED } from "@sdk/device";

/**
 * Reports a button on GP15 (true while pressed) and the chip temperature; the onboard LED is a
 * switch that Home Assistant (or a message with type "ha_command") turns on and off.
 */
export default class Main extends DeviceScript {
  async onDeviceConnect() {
    console.log("connected:", this.deviceId);
    await this.env.DEVICE.pinMode(GP15, "input", "up");
    await this.env.DEVICE.watchPin(GP15, "both", 20);
    await this.env.DEVICE.gpioWrite(OnboardLED, 0);
    this.env.DEVICE.emitState("led", false);
    setInterval(async () => {
      const celsius = await this.env.DEVICE.readTemperature();
      this.env.DEVICE.emitState("temperature", Math.round(celsius * 10) / 10);
    }, 10_000);
  }

  async onMessage(msg) {
    if (msg.type === "gpio_change") this.env.DEVICE.emitState("button", msg.value === 0);
    if (isHaCommand(msg) && msg.entityId === "led") {
      const on = msg.state === "ON";
      await this.env.DEVICE.gpioWrite(OnboardLED, on);
      this.env.DEVICE.emitState("led", on); // confirms the new state to Home Assistant
    }
  }
}
`,
  "package.json": (t) =>
    `${JSON.stringify(
      {
        name:
          t.name
            .toLowerCase()
            .replace(/[^a-z0-9-]+/g, "-")
            .replace(/^-+|-+$/g, "") || "device-script",
        private: true,
        type: "module",
        scripts: {
          build: "sdk build",
          deploy: "sdk deploy",
          dev: "sdk dev",
          test: "sdk test",
          logs: "sdk logs --tail",
        },
      },
      null,
      2,
    )}\n`,
  "tsconfig.json": () => `${JSON.stringify(projectTsconfig(), null, 2)}\n`,
  ".gitignore": () => ".sdk/\nnode_modules/\n",
  [`${recordingsDir}/example.jsonl`]: exampleRecording,
  ".github/workflows/sdk-test.yml":
    () => `# Replays test/recordings/*.jsonl against the script on every push: no server or board needed.
name: sdk test
on: [push, pull_request]
jobs:
  sdk-test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 24
      - run: npm install -g @sdk/cli@${cliVersion}
      - run: sdk test
`,
};
