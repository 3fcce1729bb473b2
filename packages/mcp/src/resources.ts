import fs from "node:fs";
import { docsDirUrl } from "@sdk/docs";
import { adc, allAdcPins, boards, errorCatalog, errorCodes, onboardLed } from "@sdk/protocol";

function readDoc(name: string, fallback: string): string {
  try {
    return fs.readFileSync(new URL(name, docsDirUrl), "utf8");
  } catch {
    return fallback;
  }
}

/** "GP26–GP28, 0–3.3 V, 12 bit" */
const adcSummary = `GP${allAdcPins[0]}–GP${allAdcPins.at(-1)}, 0–${adc.maxVolts} V, ${Math.log2(adc.maxRaw + 1)} bit`;

/** Reference material an agent can read before writing a script. */
export const resources = [
  {
    name: "device-api",
    uri: "sdk://reference/device-api",
    title: "Device script guide and DEVICE API",
    description:
      "How to write a device script: the DeviceScript class, every this.env.DEVICE method, errors, sandbox limits.",
    mimeType: "text/markdown",
    read: () => readDoc("scripts.md", "See the @sdk/device package's TSDoc."),
  },
  {
    name: "boards",
    uri: "sdk://reference/boards",
    title: "Boards and pins",
    description:
      "Pin tables of the Pico W and Pico 2 W: header GPIOs, ADC pins, I2C/SPI/UART pin options per bus.",
    mimeType: "application/json",
    read: () => JSON.stringify({ onboardLed, adc: adcSummary, boards }, null, 2),
  },
  {
    name: "errors",
    uri: "sdk://reference/errors",
    title: "Error codes",
    description: "Every error code the server and DEVICE calls use, with what it means.",
    mimeType: "text/markdown",
    read: () =>
      errorCodes
        .map(
          (code) =>
            `## ${code}\n\nHTTP ${errorCatalog[code].status}: ${errorCatalog[code].message}\n\n${errorCatalog[code].description}\n`,
        )
        .join("\n"),
  },
] as const;
