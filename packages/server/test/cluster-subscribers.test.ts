// Subscribers that must act on every instance of a cluster (docs/scaling.md): the buses of two or
// three instances in one process, with the contract's delivery rule (helpers/cluster-buses.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { AppError } from "../src/errors.ts";
import type { Revocation } from "../src/events/map.ts";
import type { Principal } from "../src/services/auth.ts";
import { devicePinsService } from "../src/services/device-pins.ts";
import type { DeviceStateService } from "../src/services/device-state.ts";
import type { DevicesService } from "../src/services/devices.ts";
import { type ProjectEvent, watchService } from "../src/services/watch.ts";
import { TestClock } from "./helpers/clock.ts";
import { clusterBuses } from "./helpers/cluster-buses.ts";

const principal = {
  user: { id: "usr_1", role: "member" },
  via: "token",
  credentialId: "tok_1",
} as unknown as Principal;
const device = { projectId: "prj_1", deviceId: "dev_1" };

test("watch sockets on one instance close for revocations and deletions made through another", async () => {
  const { buses, delivered } = clusterBuses(3);
  const [a, b, c] = buses as [(typeof buses)[0], (typeof buses)[0], (typeof buses)[0]];
  let projectGone = false;
  const devices = {
    list: async () => {
      if (projectGone) throw new AppError("not_found");
      return [];
    },
  } as unknown as DevicesService;
  const watchOn = (bus: typeof a) => watchService({ devices, state: {} as DeviceStateService, bus });

  const revoked: Revocation[] = [];
  watchOn(c).onRevoked((r) => void revoked.push(r));
  await b.publish("credential.revoked", { kind: "credential", credentialId: "tok_1" });
  await delivered();
  assert.deepEqual(
    revoked,
    [{ kind: "credential", credentialId: "tok_1" }],
    "a token revoked through B, heard on C",
  );

  const events: ProjectEvent[] = [];
  const off = watchOn(c).subscribeProject(principal, "prj_1", (e) => void events.push(e));
  await a.publish("project.deleted", { actorId: "usr_1", projectId: "prj_1" });
  await delivered();
  assert.deepEqual(events, [{ type: "project.deleted", payload: { actorId: "usr_1", projectId: "prj_1" } }]);
  off();

  const ended: ProjectEvent[] = [];
  watchOn(c).subscribeProject(principal, "prj_1", (e) => void ended.push(e));
  projectGone = true;
  await b.publish("user.deleted", {
    actorId: "usr_admin",
    userId: "usr_1",
    email: "a@example.com",
    projects: 1,
  });
  await delivered();
  assert.deepEqual(
    ended.map((e) => e.type),
    ["project.deleted"],
    "a user deleted through B (their projects with them) ends the project watch on C",
  );
});

test("device pins: every instance answers what the instance serving the device knows", async () => {
  const { buses, delivered } = clusterBuses(2);
  const [a, b] = buses as [(typeof buses)[0], (typeof buses)[0]];
  const clock = new TestClock();
  const repos = { devices: { find: async () => ({ board: "pico_w" }) } } as never;
  // A serves the device; B does not.
  const onA = devicePinsService({ repos, bus: a, clock, connected: () => true });
  const onB = devicePinsService({ repos, bus: b, clock, connected: () => false });
  onA.start();
  onB.start();
  const connected = { ...device, at: clock.now(), board: "pico_w" as const, firmware: "1.0.0" };
  await a.publish("device.connected", connected);
  await delivered();

  onA.recordCommand(device, "gpio_write", { pin: "LED", value: 1 }, null);
  await a.publish("device.message", { ...device, message: { type: "gpio_change", pin: 15, value: 0 } });
  await delivered();
  const shown = async (service: typeof onA) =>
    (await service.get(principal, device)).map(({ updatedAt: _, ...p }) => p);
  assert.deepEqual(await shown(onB), await shown(onA), "B answers what A knows");
  assert.deepEqual(
    (await shown(onB)).map((p) => [p.pin, p.level]),
    [
      ["LED", 1],
      [15, 0],
    ],
  );

  // The device reconnects (to either instance): what was known is dropped everywhere.
  await a.publish("device.disconnected", { ...device, at: clock.now(), reason: "closed" });
  await delivered();
  assert.deepEqual(await onB.get(principal, device), []);
  onA.recordCommand(device, "gpio_write", { pin: 2, value: 1 }, null);
  await delivered();
  assert.equal((await onB.get(principal, device)).length, 1);
  await b.publish("device.connected", connected);
  await delivered();
  assert.deepEqual(await onA.get(principal, device), [], "a connect on B drops what A knew");
  assert.deepEqual(await onB.get(principal, device), []);
  onA.stop();
  onB.stop();
});
