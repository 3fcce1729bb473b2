// The contract suites against the implementations of one process (the default).
import { InProcessEventBus } from "../src/events/bus.ts";
import { LocalCommandRouter } from "../src/link/command-router.ts";
import { LocalDeviceRegistry } from "../src/link/registry.ts";
import { commandRouterContract } from "./contracts/command-router.contract.ts";
import { deviceRegistryContract, type RegistryFixture } from "./contracts/device-registry.contract.ts";
import { eventBusContract } from "./contracts/event-bus.contract.ts";

/** One process is one instance: what travels between instances has nothing to test here. */
const one = { instances: 1 } as const;
let devices = 0;
/** One process keeps ownership in memory: nothing to write for presence, nothing travels. */
const registryFixture = (): RegistryFixture => ({
  registries: [new LocalDeviceRegistry()],
  device: async () => ({ projectId: "prj_1", deviceId: `dev_${++devices}` }),
  online: async () => {},
  offline: async () => {},
  settle: async () => {},
});

eventBusContract(
  "in-process",
  async () => {
    const errors: unknown[] = [];
    return { buses: [new InProcessEventBus((e) => errors.push(e))], errors, settle: async () => {} };
  },
  one,
);

deviceRegistryContract("in-process", async () => registryFixture(), one);

commandRouterContract(
  "in-process",
  async () => ({ ...registryFixture(), routers: [new LocalCommandRouter()] }),
  one,
);
