import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { AppError } from "../../src/errors.ts";
import type { CommandRouter, RoutedRequest } from "../../src/link/command-router.ts";
import type { DeviceRegistry } from "../../src/link/registry.ts";
import { fakeConnection, type RegistryFixture } from "./device-registry.contract.ts";
import { acrossInstances } from "./instances.ts";

/**
 * The routers under test, one per instance, each with its instance's registry. Routed requests
 * that get no answer time out well before the test does (the fixture sets the wait).
 */
export interface RouterFixture extends RegistryFixture {
  routers: CommandRouter[];
}

export type RouterFactory = (t: TestContext) => Promise<RouterFixture | null>;

/**
 * What each instance does with the requests for its devices, as the device link does: a device it
 * does not serve is offline; `fail` is refused with an AppError; `hang` never answers.
 */
function serveAll(f: RouterFixture): void {
  f.routers.forEach((router, i) => {
    const registry = f.registries[i] as DeviceRegistry;
    router.serve(async (device, request) => {
      if (!registry.get(device.deviceId)) throw new AppError("device_offline");
      if (request.kind === "command" && request.type === "fail")
        throw new AppError("invalid_argument", "gpio_write: GP99 is not a GPIO of this board");
      if (request.kind === "command" && request.type === "hang") return new Promise(() => {});
      if (request.kind === "command" && request.type === "crash") throw new Error("not an AppError");
      return { servedBy: registry.instanceId, device, request };
    });
  });
}

const command = (type: string): RoutedRequest => ({
  kind: "command",
  type,
  args: { pin: 25 },
  source: "api",
});

async function rejects(promise: Promise<unknown>, code: string, message?: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof AppError, `an AppError, not ${error}`);
    assert.equal(error.code, code);
    if (message !== undefined) assert.equal(error.message, message);
    return true;
  });
}

/** The CommandRouter contract (link/command-router.ts), run against each implementation. */
export function commandRouterContract(
  name: string,
  create: RouterFactory,
  options: { instances: 1 | 2 },
): void {
  const across = acrossInstances(options);
  const fixture = async (t: TestContext) => {
    const f = await create(t);
    if (f) serveAll(f);
    return f;
  };

  test(`${name} router: a device this instance serves: the request runs here, its answer and errors as they are`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [router] = f.routers as [CommandRouter];
    const [registry] = f.registries as [DeviceRegistry];
    const device = await f.device();
    registry.register(fakeConnection(device));
    await f.online(device.deviceId, registry.instanceId);
    const message: RoutedRequest = { kind: "message", message: { type: "hello", n: 1 } };
    assert.deepEqual(await router.send(device, command("gpio_write")), {
      servedBy: registry.instanceId,
      device,
      request: command("gpio_write"),
    });
    assert.deepEqual(await router.send(device, message), {
      servedBy: registry.instanceId,
      device,
      request: message,
    });
    await rejects(
      router.send(device, command("fail")),
      "invalid_argument",
      "gpio_write: GP99 is not a GPIO of this board",
    );
  });

  test(`${name} router: a device no instance serves is offline`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const device = await f.device();
    for (const router of f.routers)
      await rejects(router.send(device, command("gpio_write")), "device_offline");
  });

  across(
    `${name} router: a device on another instance: the request runs there and the answer comes back`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [, b] = f.routers as [CommandRouter, CommandRouter];
      const [ra] = f.registries as [DeviceRegistry, DeviceRegistry];
      const device = await f.device();
      ra.register(fakeConnection(device));
      await f.online(device.deviceId, ra.instanceId);
      await f.settle();
      for (const request of [
        command("gpio_write"),
        { kind: "raw", message: { type: "ws2812_write", pixels: [[255, 0, 0]] } } as const,
        { kind: "message", message: { type: "custom", nested: { a: [1, "two", null] } } } as const,
      ]) {
        assert.deepEqual(await b.send(device, request), { servedBy: ra.instanceId, device, request });
      }
    },
  );

  across(
    `${name} router: an AppError on the owner reaches the caller with its code and message`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [, b] = f.routers as [CommandRouter, CommandRouter];
      const [ra] = f.registries as [DeviceRegistry, DeviceRegistry];
      const device = await f.device();
      ra.register(fakeConnection(device));
      await f.online(device.deviceId, ra.instanceId);
      await f.settle();
      await rejects(
        b.send(device, command("fail")),
        "invalid_argument",
        "gpio_write: GP99 is not a GPIO of this board",
      );
      await rejects(b.send(device, command("crash")), "internal_error");
    },
  );

  across(
    `${name} router: the owner is gone (its row still says online): handled here, device_offline`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [, b] = f.routers as [CommandRouter, CommandRouter];
      const device = await f.device();
      await f.online(device.deviceId, "i-gone");
      await rejects(b.send(device, command("gpio_write")), "device_offline");
    },
  );

  across(`${name} router: the owner does not answer in time: device_timeout`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [, b] = f.routers as [CommandRouter, CommandRouter];
    const [ra] = f.registries as [DeviceRegistry, DeviceRegistry];
    const device = await f.device();
    ra.register(fakeConnection(device));
    await f.online(device.deviceId, ra.instanceId);
    await f.settle();
    await rejects(b.send(device, command("hang")), "device_timeout");
  });
}
