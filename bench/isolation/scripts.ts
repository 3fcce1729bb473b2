/** The measured project's script and the hostile ones (each starts on its device's connect). */

/** A `tick` from the device becomes state "v" = its seq (the same as bench/scripts). */
export { tickScript } from "../scripts/project.ts";

const hostile = (body: string) => `import { DeviceScript } from "@sdk/device";

export default class Hostile extends DeviceScript {
  async onDeviceConnect() {
    ${body}
  }
}
`;

/** Hostile cases: what each does from its device's connect on. */
export const hostileScripts: Record<string, string> = {
  "busy-timers": hostile("for (let i = 0; i < 64; i++) setInterval(() => { for (;;) {} }, 10);"),
  "await-loop": hostile(
    "for (let i = 0; i < 64; i++) setInterval(async () => { for (;;) await null; }, 10);",
  ),
  "alloc-bomb": hostile(
    "setInterval(() => { const a: number[][] = []; for (;;) a.push(new Array(100000).fill(1)); }, 10);",
  ),
  "output-flood": hostile(
    `setInterval(() => {
      for (let i = 0; i < 2000; i++) {
        this.env.DEVICE.emitState(\`e\${i % 50}\`, i);
        console.log(\`flood \${i}\`);
      }
    }, 10);`,
  ),
};

/** The owner's corrective deploy: what "redeploy live" waits for. */
export const fixedScript = `import { DeviceScript } from "@sdk/device";

export default class Fixed extends DeviceScript {
  async onDeviceConnect() {
    this.env.DEVICE.emitState("fixed", Date.now());
  }
}
`;
