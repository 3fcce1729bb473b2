import type { DeviceFactory } from "@sdk/conformance";
import { deviceConformance } from "@sdk/conformance";
import { SimulatedDevice } from "../src/index.ts";

/** The simulator as a device under test: the hooks reach straight into its virtual hardware. */
const simulator: DeviceFactory = async ({ url, deviceId, secret, board, timing }) => {
  const device = new SimulatedDevice({
    server: url,
    deviceId,
    secret,
    board,
    reconnect: { baseMs: timing.backoffBaseMs, capMs: timing.backoffCapMs },
  });
  device.start();
  return {
    stop: () => device.stop(),
    setInput: async (pin, level) => device.setInput(pin, level),
    receiveUart: async (uart, bytes) => device.receiveUart(uart, bytes),
    readPin: async (pin) => {
      const { level, pwm } = device.pin(pin);
      return { level, pwm };
    },
    readPixels: async (pin) => device.pixels(pin) ?? [],
    attachI2c: async (bus, address, bytes) =>
      device.i2c(bus).attach(address, {
        write() {},
        read: (length) => Array.from({ length }, (_, i) => bytes[i] ?? 0),
      }),
  };
};

deviceConformance("simulator", simulator);
