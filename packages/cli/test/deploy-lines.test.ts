// What `sdk deploy` prints about Home Assistant for each state the server's status reports.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { HomeAssistantStatus } from "@sdk/protocol";
import { homeAssistantLines } from "../src/commands/deploy.ts";

const device = (name: string, more: Partial<HomeAssistantStatus["devices"][number]>) => ({
  deviceId: `dev_${name.toLowerCase()}`,
  name,
  online: true,
  published: true,
  deletedInHomeAssistant: false,
  entities: [
    {
      id: "pump",
      kind: "switch" as const,
      name: "Pump",
      uniqueId: `sdk_prj_x_dev_${name}_pump`,
      defaultEntityId: `switch.${name.toLowerCase()}_pump`,
    },
  ],
  ...more,
});

const status = (devices: HomeAssistantStatus["devices"], connected = true): HomeAssistantStatus => ({
  enabled: true,
  connected,
  broker: "127.0.0.1:1883",
  mode: "device",
  discoveryPrefix: "homeassistant",
  baseTopic: "sdk",
  devices,
});

test("sdk deploy lists published entities, and says which devices are pending or deleted in Home Assistant", () => {
  const lines = homeAssistantLines(
    status([
      device("Shed", {}),
      device("Barn", { published: false }),
      device("Cellar", { published: false, deletedInHomeAssistant: true }),
    ]),
    1,
  );
  assert.deepEqual(lines, [
    "Home Assistant (127.0.0.1:1883):",
    "  Shed: switch.shed_pump",
    "  Barn: pending, not on the broker yet: switch.barn_pump",
    "  Cellar: deleted in Home Assistant's UI, not published (the next deploy publishes switch.cellar_pump again)",
  ]);
  assert.deepEqual(homeAssistantLines(status([device("Shed", { published: false })], false), 1), [
    "Home Assistant (127.0.0.1:1883, not connected: published once the broker answers):",
    "  Shed: pending, not on the broker yet: switch.shed_pump",
  ]);
  assert.deepEqual(homeAssistantLines(status([]), 0), [], "nothing declared, nothing said");
});
