import { randomBytes } from "node:crypto";
import type { EntityConfig, HomeAssistantStatus } from "@sdk/protocol";
import type { IPublishPacket, MqttClient } from "mqtt";
import type { Extension } from "../../app.ts";
import { AppError } from "../../errors.ts";
import type { Unsubscribe } from "../../events/bus.ts";
import type { LiveEntities } from "../../services/home-assistant.ts";
import { clusterMqtt, followElsewhere } from "./cluster.ts";
import { decodeCommand } from "./commands.ts";
import { connectBroker } from "./connection.ts";
import { type Wanted, wantedOf } from "./desired.ts";
import { componentConfigs, defaultEntityIdOf, deviceConfig, uniqueIdOf } from "./discovery.ts";
import { encodeState } from "./states.ts";
import { topicsFor } from "./topics.ts";

const publishTimeoutMs = 10_000;
const syncTimeoutMs = 5_000;
/** A deploy waits at most this long for its entities to reach the broker. */
const deployWaitMs = 5_000;
/** A device deletion waits at most this long for its configs to be cleared (a later sync catches up). */
const deleteWaitMs = 2_000;
/** After Home Assistant's birth message: a random delay in this range, as its docs advise. */
const birthDelayMs = [500, 2_500] as const;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Home Assistant over MQTT discovery (docs/home-assistant.md): publishes each device of a project
 * whose live deployment declares `ha.entities`, its availability and states, and hands switch and
 * light commands to the device's script as `ha_command` messages. The server works the same while
 * the broker is away; on every (re)connect the bridge compares what the broker retains with what
 * it should and publishes the difference.
 */
export const homeAssistantBridge: Extension = ({ bus, services, config, logger, version }) => {
  const settings = config.homeAssistant!;
  const topics = topicsFor(settings.baseTopic, settings.discoveryPrefix);
  const broker = settings.broker;
  const source = services.homeAssistant;
  const server = { version, publicUrl: config.publicUrl };
  const shared = clusterMqtt(config.cluster, topics);

  let client: MqttClient | undefined;
  let synced = false;
  let unsubscribe: Unsubscribe[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  let birthTimer: NodeJS.Timeout | undefined;
  let warnedDown = false;
  /** Devices to publish, by id. */
  const wanted = new Map<string, Wanted>();
  const online = new Map<string, boolean>();
  /** What the broker holds on the bridge's retained topics (as replayed at connect, then as published). */
  const retained = new Map<string, string>();
  /** Config topics the owner deleted in Home Assistant's UI: published again by a deploy only. */
  const deletedInHa = new Set<string>();
  /** Config topics a deploy asked for, not yet on the broker (so not mistaken for a UI delete). */
  const pending = new Set<string>();
  const syncTopic = `${settings.baseTopic}/bridge-sync/${randomBytes(6).toString("hex")}`;
  let syncDone: (() => void) | undefined;

  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = queue.then(fn);
    queue = result.catch((err: unknown) => logger.error({ err }, "Home Assistant bridge: task failed"));
    return result;
  };
  const deviceLog = (w: { projectId: string; deviceId: string }, message: string) =>
    void services.deviceLogs.append(
      { projectId: w.projectId, deviceId: w.deviceId },
      "warn",
      "system",
      message,
    );

  /** Publishes (QoS 1) unless the broker already holds exactly this retained payload. */
  async function publish(topic: string, payload: string, opts: { retain?: boolean; force?: boolean } = {}) {
    const retain = opts.retain ?? true;
    if (retain && !opts.force && (retained.get(topic) ?? "") === payload) return;
    if (!client?.connected || !synced) return; // the next sync catches up
    if (retain) {
      if (payload === "") retained.delete(topic);
      else retained.set(topic, payload);
    }
    await within(
      client.publishAsync(topic, payload, { qos: 1, retain, properties: shared.publishProperties }),
      publishTimeoutMs,
      `publishing ${topic}`,
    );
  }

  const configTopicsOf = (w: Wanted) =>
    settings.discovery === "device"
      ? [topics.deviceConfig(w.deviceId)]
      : w.entities.map((e) => topics.componentConfig(e.kind, w.deviceId, e.id));

  /** The device's discovery config(s); gone entities in the documented removal form first. */
  async function publishConfig(w: Wanted) {
    if (settings.discovery === "device") {
      const topic = topics.deviceConfig(w.deviceId);
      if (deletedInHa.has(topic)) return;
      const before = parse(retained.get(topic));
      const gone = new Map<string, string>();
      const current = new Set(w.entities.map((e) => e.id));
      for (const [id, c] of Object.entries(
        (before?.components ?? {}) as Record<string, Record<string, unknown>>,
      ))
        if (!current.has(id) && Object.keys(c).length > 1) gone.set(id, String(c.platform));
      if (gone.size > 0) await publish(topic, JSON.stringify(deviceConfig(w.input, topics, gone)));
      const json = JSON.stringify(deviceConfig(w.input, topics));
      await publish(topic, json);
      if (retained.get(topic) === json) pending.delete(topic);
      return;
    }
    const configs = componentConfigs(w.input, topics);
    for (const topic of retained.keys())
      if (
        topics.parseConfig(topic)?.entityId &&
        topics.parseConfig(topic)?.deviceId === w.deviceId &&
        !configs.has(topic) &&
        ours(retained.get(topic))
      )
        await publish(topic, "");
    for (const [topic, body] of configs) {
      if (deletedInHa.has(topic)) continue;
      const json = JSON.stringify(body);
      await publish(topic, json);
      if (retained.get(topic) === json) pending.delete(topic);
    }
  }

  async function publishStates(w: Wanted, force = false) {
    const declared = new Set(w.entities.map((e) => e.id));
    for (const topic of [...retained.keys()]) {
      const own = topics.parse(topic);
      if (own?.deviceId === w.deviceId && own.rest[1] === "state" && !declared.has(own.rest[0]!))
        await publish(topic, "");
    }
    const latest = await source.latestStates(w.deviceId);
    for (const entity of w.entities) {
      if (!latest.has(entity.id)) continue;
      const encoded = encodeState(entity, latest.get(entity.id));
      if ("payload" in encoded)
        await publish(topics.state(w.projectId, w.deviceId, entity.id), encoded.payload, { force });
    }
  }

  const availabilityOf = (w: Wanted) => (online.get(w.deviceId) ? "online" : "offline");

  /** The config topics a device's marker names (see Topics.discoveryMarker). */
  const markedOf = (projectId: string, deviceId: string): string[] => {
    const list = parseJson(retained.get(topics.discoveryMarker(projectId, deviceId)));
    return Array.isArray(list) ? list.filter((t): t is string => typeof t === "string") : [];
  };

  /** Clears config topics a marker names that are not the current ones (another mode or prefix). */
  async function clearMarkedExcept(projectId: string, deviceId: string, keep: string[]) {
    for (const topic of markedOf(projectId, deviceId))
      if (!keep.includes(topic)) await publish(topic, "", { force: true });
  }

  async function publishDevice(w: Wanted) {
    const current = configTopicsOf(w);
    await clearMarkedExcept(w.projectId, w.deviceId, current);
    await publishConfig(w);
    await publish(topics.discoveryMarker(w.projectId, w.deviceId), JSON.stringify(current));
    await publish(topics.deviceAvailability(w.projectId, w.deviceId), availabilityOf(w));
    await publishStates(w);
  }

  /** Clears every retained topic of a device (deleted, or its project no longer publishes entities). */
  async function clearDevice(projectId: string, deviceId: string) {
    wanted.delete(deviceId);
    await clearMarkedExcept(projectId, deviceId, []);
    for (const topic of [...retained.keys()]) {
      const config = topics.parseConfig(topic);
      const own = topics.parse(topic);
      if (config?.deviceId === deviceId || (own?.deviceId === deviceId && own.projectId === projectId))
        await publish(topic, "");
    }
    for (const set of [deletedInHa, pending])
      for (const topic of [...set]) if (topics.parseConfig(topic)?.deviceId === deviceId) set.delete(topic);
  }

  /** Deployments whose left-out entities were already logged: once per deploy, not per sync. */
  const loggedDropped = new Set<string>();
  async function logDropped(live: LiveEntities) {
    if (live.dropped.length === 0 || loggedDropped.has(live.deploymentId)) return;
    loggedDropped.add(live.deploymentId);
    const list = live.dropped.map((d) => `"${d.id}" (${d.problems})`).join(", ");
    for (const device of await source.devicesOf(live.projectId))
      deviceLog(
        { projectId: live.projectId, deviceId: device.id },
        `Home Assistant: entities of the live deployment not published (rename or fix them in sdk.ts and deploy): ${list}`,
      );
  }

  /** Re-reads a project's devices and entities and publishes the difference. */
  async function refreshProject(projectId: string, deployed: boolean) {
    const live = await source.liveEntities(projectId);
    if (live) await logDropped(live);
    const next = await wantedOf(source, projectId, live?.entities ?? [], server);
    const ids = new Set(next.wanted.map((w) => w.deviceId));
    for (const w of [...wanted.values()])
      if (w.projectId === projectId && !ids.has(w.deviceId)) await clearDevice(projectId, w.deviceId);
    for (const w of next.wanted) {
      if (!online.has(w.deviceId)) online.set(w.deviceId, next.online.get(w.deviceId) ?? false);
      wanted.set(w.deviceId, w);
      if (deployed)
        for (const topic of configTopicsOf(w)) {
          deletedInHa.delete(topic);
          pending.add(topic);
        }
      await publishDevice(w);
    }
  }

  async function loadAll() {
    wanted.clear();
    for (const live of await source.liveProjects()) {
      await logDropped(live);
      const next = await wantedOf(source, live.projectId, live.entities, server);
      for (const w of next.wanted) {
        wanted.set(w.deviceId, w);
        if (!online.has(w.deviceId)) online.set(w.deviceId, next.online.get(w.deviceId) ?? false);
      }
    }
  }

  const ours = (payload: string | undefined) => {
    const config = parse(payload);
    const availability = config?.availability as Array<{ topic?: string }> | undefined;
    return (
      (config?.origin as { name?: string } | undefined)?.name === "sdk" &&
      availability?.[0]?.topic === topics.serverStatus
    );
  };

  /** After a (re)connect: learn what the broker retains, then publish only what differs. */
  async function sync(c: MqttClient) {
    synced = false;
    retained.clear();
    // Only the configs of the current form: the other form's are cleared through the markers.
    const configFilter =
      settings.discovery === "device" ? topics.deviceConfigFilter : topics.componentConfigFilter;
    const otherFilter =
      settings.discovery === "device" ? topics.componentConfigFilter : topics.deviceConfigFilter;
    await c.unsubscribeAsync(otherFilter).catch(() => {});
    const mirrored = shared.retainedOptions;
    const subscribed = c.subscribeAsync({
      [configFilter]: mirrored,
      [topics.availabilityFilter]: mirrored,
      [topics.markerFilter]: mirrored,
      [topics.stateFilter]: mirrored,
      [topics.haStatus]: { qos: 1 },
      [shared.commandFilter]: { qos: 1 },
      [syncTopic]: { qos: 1 },
      // Another instance's last will (or stop) says the server is offline: it is not.
      ...(shared.clustered ? { [topics.serverStatus]: { qos: 1, nl: true } } : {}),
    });
    await within(subscribed, syncTimeoutMs, "subscribing");
    // The broker sends the retained messages of a subscription before anything published after it.
    await within(
      new Promise<void>((resolve) => {
        syncDone = resolve;
        c.publishAsync(syncTopic, "sync", { qos: 1 }).catch((err: unknown) =>
          logger.warn({ err }, "Home Assistant bridge: could not publish the sync marker"),
        );
      }),
      syncTimeoutMs,
      "reading what the broker retains",
    ).catch((err: unknown) =>
      logger.warn({ err }, "Home Assistant bridge: retained messages may be incomplete"),
    );
    syncDone = undefined;
    await within(
      c.publishAsync(topics.serverStatus, "online", {
        qos: 1,
        retain: true,
        properties: shared.publishProperties,
      }),
      publishTimeoutMs,
      `publishing ${topics.serverStatus}`,
    );
    await loadAll();
    synced = true;
    // Ghosts: configs, availability and states of devices no longer published.
    for (const [topic, payload] of [...retained]) {
      const config = topics.parseConfig(topic);
      if (config) {
        const w = wanted.get(config.deviceId);
        const rightForm = settings.discovery === "device" ? !config.entityId : Boolean(config.entityId);
        if (ours(payload) && (!w || !rightForm)) await publish(topic, "");
        continue;
      }
      const own = topics.parse(topic);
      const w = own && wanted.get(own.deviceId);
      if (own?.rest[0] === "discovery" && (!w || w.projectId !== own.projectId))
        await clearMarkedExcept(own.projectId, own.deviceId, []);
      const entityGone = own?.rest[1] === "state" && !w?.entities.some((e) => e.id === own.rest[0]);
      if (own && (!w || w.projectId !== own.projectId || entityGone)) await publish(topic, "");
    }
    for (const w of wanted.values()) {
      // A config the marker says was published but the broker no longer holds: deleted in Home
      // Assistant's UI meanwhile. A topic the marker does not name (new mode or prefix) is just new.
      const marked = markedOf(w.projectId, w.deviceId);
      for (const topic of configTopicsOf(w))
        if (marked.includes(topic) && !retained.has(topic) && !pending.has(topic)) deletedInHa.add(topic);
      await publishDevice(w);
    }
    logger.info(`Home Assistant bridge: connected to ${broker}, ${wanted.size} devices published`);
  }

  /** Home Assistant (re)started: availability and last states again, retained configs stay. */
  async function republish() {
    if (!client?.connected || !synced) return;
    await publish(topics.serverStatus, "online", { force: true });
    for (const w of wanted.values()) {
      await publish(topics.deviceAvailability(w.projectId, w.deviceId), availabilityOf(w), { force: true });
      await publishStates(w, true);
    }
  }

  function onCommand(topic: string, payload: string, packet: IPublishPacket) {
    const at = topics.parse(topic);
    if (at?.rest.length !== 2) return;
    const w = wanted.get(at.deviceId);
    // The topic names the project: a device of another project is never reached through it.
    if (!w || w.projectId !== at.projectId) {
      logger.warn(
        `Home Assistant bridge: a command on ${topic} names no published device of that project; dropped`,
      );
      return;
    }
    const entityId = at.rest[0]!;
    if (packet.retain) {
      deviceLog(
        w,
        `Home Assistant: a retained command for "${entityId}" was dropped (commands are never retained)`,
      );
      return;
    }
    const entity = w.entities.find((e) => e.id === entityId);
    if (!entity || (entity.kind !== "switch" && entity.kind !== "light")) {
      deviceLog(
        w,
        `Home Assistant: a command for "${entityId}" was dropped: ha.entities declares no switch or light with that id`,
      );
      return;
    }
    const command = decodeCommand(entity, payload);
    if ("error" in command) {
      deviceLog(w, `Home Assistant: command dropped: ${command.error}`);
      return;
    }
    const dropped = (error: unknown) => {
      if (!(error instanceof AppError)) {
        // Thrown in the MQTT client's message listener it would end the process: logged, dropped.
        logger.error({ err: error }, `Home Assistant bridge: a command on ${topic} failed; dropped`);
        return;
      }
      const why = error.code === "device_offline" ? "the device is offline" : "no script runs for it";
      deviceLog(w, `Home Assistant: a command for "${entityId}" was dropped: ${why}`);
    };
    try {
      // On the instance serving the device, wherever it is (a cluster routes it there).
      const delivered: unknown = services.scripts.deliver(
        { projectId: w.projectId, deviceId: w.deviceId },
        { ...command },
      );
      if (delivered instanceof Promise) delivered.catch(dropped);
    } catch (error) {
      dropped(error);
    }
  }

  function onMessage(topic: string, buffer: Buffer, packet: IPublishPacket) {
    const payload = buffer.toString("utf8");
    if (topic === syncTopic) return syncDone?.();
    if (topic === topics.serverStatus) {
      if (payload === "offline") void serial(() => publish(topics.serverStatus, "online", { force: true }));
      return;
    }
    if (topic === topics.haStatus) {
      if (payload !== "online") return;
      clearTimeout(birthTimer);
      const [low, high] = birthDelayMs;
      birthTimer = setTimeout(() => void serial(republish), low + Math.random() * (high - low));
      return;
    }
    const config = topics.parseConfig(topic);
    if (config) {
      if (packet.retain && payload !== "") {
        if (ours(payload)) retained.set(topic, payload); // other integrations' configs are not kept
      } else if (payload === "" && retained.has(topic)) {
        // Only Home Assistant publishes here besides the bridges (our own messages are not
        // echoed; another instance's say so): a UI delete.
        retained.delete(topic);
        if (wanted.has(config.deviceId) && !shared.fromBridge(packet)) {
          deletedInHa.add(topic);
          logger.info(
            `Home Assistant bridge: ${topic} was deleted in Home Assistant; the next deploy publishes it again`,
          );
        }
      }
      return;
    }
    const own = topics.parse(topic);
    if (!own) return;
    if (own.rest.length === 2 && own.rest[1] === "set") return onCommand(topic, payload, packet);
    if (packet.retain && payload !== "") retained.set(topic, payload);
    else if (payload === "" && packet.retain && shared.fromBridge(packet)) retained.delete(topic); // another instance cleared it
  }

  const entitiesOf = (w: Wanted): HomeAssistantStatus["devices"][number]["entities"] =>
    w.entities.map((e: EntityConfig) => ({
      id: e.id,
      kind: e.kind,
      name: e.name,
      uniqueId: uniqueIdOf(w.projectId, w.deviceId, e.id),
      defaultEntityId: defaultEntityIdOf(e.kind, w.input.deviceName, w.deviceId, e.id),
    }));

  const publishedNow = (w: Wanted) =>
    settings.discovery === "device"
      ? retained.get(topics.deviceConfig(w.deviceId)) === JSON.stringify(deviceConfig(w.input, topics))
      : [...componentConfigs(w.input, topics)].every(([t, body]) => retained.get(t) === JSON.stringify(body));

  return {
    name: "home assistant",
    async start() {
      await loadAll();
      // In a cluster every instance keeps the same devices and entities (a command may reach any),
      // and hears where the devices of the others are; each publishes its own devices' events.
      const everywhere = { everywhere: shared.clustered };
      unsubscribe = [
        ...(shared.clustered ? followElsewhere(bus, online, wanted) : []),
        // Each task looks the device and entity up when it runs, not when the event fired: a
        // deploy's refresh queued in between may have removed them.
        bus.subscribe("device.connected", ({ deviceId, firmware }) => {
          online.set(deviceId, true);
          if (!wanted.has(deviceId)) return;
          return serial(async () => {
            const w = wanted.get(deviceId);
            if (!w) return;
            w.input = { ...w.input, firmwareVersion: firmware };
            await publishDevice(w);
          }).catch(() => {});
        }),
        bus.subscribe("device.disconnected", ({ deviceId }) => {
          online.set(deviceId, false);
          if (!wanted.has(deviceId)) return;
          void serial(async () => {
            const w = wanted.get(deviceId);
            if (w && !online.get(deviceId))
              await publish(topics.deviceAvailability(w.projectId, w.deviceId), "offline");
          });
        }),
        bus.subscribe("device.state", ({ deviceId, entityId, value }) => {
          if (!wanted.get(deviceId)?.entities.some((e) => e.id === entityId)) return; // undeclared: stays on the server
          void serial(async () => {
            const w = wanted.get(deviceId);
            const entity = w?.entities.find((e) => e.id === entityId);
            if (!w || !entity) return;
            const encoded = encodeState(entity, value);
            if ("error" in encoded)
              return deviceLog(w, `Home Assistant: state not published: ${encoded.error}`);
            await publish(topics.state(w.projectId, w.deviceId, entity.id), encoded.payload);
          });
        }),
        bus.subscribe(
          "deployment.activated",
          ({ projectId }) =>
            within(
              serial(() => refreshProject(projectId, true)),
              deployWaitMs,
              "publishing to Home Assistant",
            ).catch((err: unknown) =>
              logger.warn({ err }, "Home Assistant bridge: the deploy's entities are not published yet"),
            ),
          everywhere,
        ),
        bus.subscribe(
          "device.created",
          ({ projectId }) => void serial(() => refreshProject(projectId, false)),
          everywhere,
        ),
        bus.subscribe(
          "device.renamed",
          ({ projectId }) => void serial(() => refreshProject(projectId, false)),
          everywhere,
        ),
        // A deletion waits for its configs to be cleared only while the bridge is connected, and
        // briefly; a later sync clears them otherwise.
        bus.subscribe(
          "device.deleted",
          ({ projectId, deviceId }) => {
            online.delete(deviceId);
            const cleared = serial(() => clearDevice(projectId, deviceId));
            if (!client?.connected || !synced) return void cleared.catch(() => {});
            return within(cleared, deleteWaitMs, "clearing the device's Home Assistant configs").catch(
              (err: unknown) =>
                logger.warn(
                  { err },
                  "Home Assistant bridge: the deleted device's configs are not cleared yet",
                ),
            );
          },
          everywhere,
        ),
      ];
      const c = connectBroker(settings.mqttUrl, topics.serverStatus);
      client = c;
      c.on("connect", () => {
        warnedDown = false;
        void serial(() => sync(c));
      });
      c.on("close", () => {
        synced = false;
      });
      c.on("error", (error) => {
        if (typeof (error as { code?: unknown }).code === "number") {
          logger.error(
            `Home Assistant bridge: the MQTT broker ${broker} refused the connection (${error.message}); check the user name and password in MQTT_URL and restart the server`,
          );
          return;
        }
        if (warnedDown) return;
        warnedDown = true;
        logger.warn(
          `Home Assistant bridge: cannot reach the MQTT broker ${broker} (${error.message}); the server runs on and retries with backoff`,
        );
      });
      c.on("offline", () => {
        if (warnedDown) return;
        warnedDown = true;
        logger.warn(`Home Assistant bridge: the MQTT broker ${broker} is unreachable; retrying with backoff`);
      });
      c.on("message", onMessage);
      source.attach({
        connected: () => Boolean(client?.connected && synced),
        devices: async (projectId) =>
          [...wanted.values()]
            .filter((w) => w.projectId === projectId)
            .map((w) => ({
              deviceId: w.deviceId,
              name: w.input.deviceName,
              online: online.get(w.deviceId) ?? false,
              published: publishedNow(w),
              deletedInHomeAssistant: configTopicsOf(w).some((t) => deletedInHa.has(t)),
              entities: entitiesOf(w),
            })),
      });
    },
    async stop() {
      source.attach(null);
      clearTimeout(birthTimer);
      for (const off of unsubscribe.splice(0)) off();
      const c = client;
      client = undefined;
      if (!c) return;
      if (c.connected) {
        await within(
          c.publishAsync(topics.serverStatus, "offline", { qos: 1, retain: true }),
          2_000,
          "saying offline",
        ).catch(() => {});
        await within(c.endAsync(), 2_000, "closing the MQTT connection").catch(() => c.end(true));
      } else c.end(true);
    },
  };
};

function parseJson(payload: string | undefined): unknown {
  if (!payload) return null;
  try {
    return JSON.parse(payload);
  } catch {
    return null;
  }
}

function parse(payload: string | undefined): Record<string, unknown> | null {
  const value = parseJson(payload);
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
