import type { IPublishPacket } from "mqtt";
import type { ClusterConfig } from "../../config.ts";
import type { EventBus, Unsubscribe } from "../../events/bus.ts";
import type { Wanted } from "./desired.ts";
import type { Topics } from "./topics.ts";

/** The MQTT v5 user property every message of the bridge carries: which server instance sent it. */
const senderProperty = "sdk-bridge";

/**
 * How the bridge of one instance shares the broker with the others of a cluster (docs/scaling.md,
 * docs/home-assistant.md). Each instance publishes the availability and states of the devices it
 * serves (their events are published on it only) and every instance keeps the discovery configs
 * right (the same payloads: publishing one twice changes nothing). So that every instance knows
 * what the broker holds, retained topics are read "retain as published" and each message says it
 * came from a bridge: another instance clearing a config is not a delete in Home Assistant's UI.
 * A Home Assistant command reaches one instance only: an MQTT v5 shared subscription.
 */
export function clusterMqtt(cluster: ClusterConfig | null, topics: Topics) {
  return {
    clustered: cluster !== null,
    /** Options of each publish. */
    publishProperties: { userProperties: { [senderProperty]: cluster?.instanceId ?? "local" } },
    /** One subscriber of the group gets each command. */
    commandFilter: cluster
      ? `$share/${cluster.name}-home-assistant/${topics.commandFilter}`
      : topics.commandFilter,
    /** The retained topics the bridge mirrors (its own messages are not echoed back). */
    retainedOptions: cluster ? { qos: 1 as const, nl: true, rap: true } : { qos: 1 as const, nl: true },
    /** Published by a bridge (this server's other instances), not by Home Assistant. */
    fromBridge: (packet: IPublishPacket) => packet.properties?.userProperties?.[senderProperty] !== undefined,
  };
}

/**
 * A cluster's devices served by other instances: what this one publishes for them (at a sync, a
 * deploy) says where they are and their firmware; their own instance publishes their availability
 * and states.
 */
export function followElsewhere(
  bus: EventBus,
  online: Map<string, boolean>,
  wanted: Map<string, Wanted>,
): Unsubscribe[] {
  return [
    bus.subscribe(
      "device.connected",
      ({ deviceId, firmware }) => {
        online.set(deviceId, true);
        const w = wanted.get(deviceId);
        if (w) w.input = { ...w.input, firmwareVersion: firmware };
      },
      { everywhere: true },
    ),
    bus.subscribe("device.disconnected", ({ deviceId }) => void online.set(deviceId, false), {
      everywhere: true,
    }),
  ];
}
