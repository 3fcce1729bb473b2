import { type Board, type EntityConfig, haEntityIdPattern } from "@sdk/protocol";
import type { Topics } from "./topics.ts";

/** What a discovery config is built from: the device, its project's live entities, the server. */
export interface DiscoveryInput {
  projectId: string;
  deviceId: string;
  deviceName: string;
  board: Board;
  firmwareVersion: string | null;
  entities: EntityConfig[];
  /** The server's version (the `origin` block). */
  serverVersion: string;
  /** PUBLIC_URL: the device's dashboard page becomes the device's configuration_url. */
  publicUrl: string | null;
}

type Json = Record<string, unknown>;

const models: Record<Board, string> = { pico_w: "Pico W", pico2_w: "Pico 2 W" };

/** Home Assistant's own slug rules, roughly: lowercase letters, digits and single underscores. */
export function slug(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

/** The entities Home Assistant can take: ids its topics allow (16A refuses the others at build time). */
export const publishable = (entities: EntityConfig[]) => entities.filter((e) => haEntityIdPattern.test(e.id));

/** Stable across renames: built from ids only. */
export const uniqueIdOf = (projectId: string, deviceId: string, entityId: string) =>
  `sdk_${projectId}_${deviceId}_${entityId}`;

export const defaultEntityIdOf = (kind: string, deviceName: string, deviceId: string, entityId: string) =>
  `${kind}.${slug(deviceName) || slug(deviceId)}_${slug(entityId) || "entity"}`;

/** The colour modes a JSON-schema light supports, from `rgb` and `brightness` in ha.entities. */
export function colorModeOf(entity: EntityConfig): "rgb" | "brightness" | "onoff" {
  if (entity.rgb) return "rgb";
  return entity.brightness ? "brightness" : "onoff";
}

function deviceBlock(input: DiscoveryInput): Json {
  const device: Json = {
    identifiers: [`sdk_${input.deviceId}`],
    name: input.deviceName,
    manufacturer: "Raspberry Pi",
    model: models[input.board],
  };
  if (input.firmwareVersion) device.sw_version = input.firmwareVersion;
  if (input.publicUrl)
    device.configuration_url = `${input.publicUrl}/projects/${encodeURIComponent(input.projectId)}/devices/${encodeURIComponent(input.deviceId)}`;
  return device;
}

function originBlock(input: DiscoveryInput): Json {
  return { name: "sdk", sw_version: input.serverVersion };
}

function availabilityOf(input: DiscoveryInput, topics: Topics): Json {
  return {
    availability: [
      { topic: topics.serverStatus },
      { topic: topics.deviceAvailability(input.projectId, input.deviceId) },
    ],
    availability_mode: "all",
  };
}

/**
 * The entity's name as Home Assistant shows it after the device name: Home Assistant prefixes the
 * device name itself and, since 2024.2, no longer strips it ("Greenhouse Greenhouse temp"), so a
 * leading device name is cut here; a name that is only the device name makes the entity the
 * device's main feature (`null`).
 */
export function entityNameOf(entityName: string, deviceName: string): string | null {
  const device = deviceName.trim().toLocaleLowerCase();
  const name = entityName.trim();
  if (device === "" || !name.toLocaleLowerCase().startsWith(device)) return name;
  const rest = name.slice(device.length);
  if (rest.trim() === "") return null;
  return /^[\s\-:–]/.test(rest) ? rest.replace(/^[\s\-:–]+/, "") : name;
}

/** One entity's component config (platform-specific keys, no device/origin/availability). */
export function componentOf(input: DiscoveryInput, entity: EntityConfig, topics: Topics): Json {
  const { projectId, deviceId } = input;
  const component: Json = {
    platform: entity.kind,
    unique_id: uniqueIdOf(projectId, deviceId, entity.id),
    default_entity_id: defaultEntityIdOf(entity.kind, input.deviceName, deviceId, entity.id),
    name: entityNameOf(entity.name, input.deviceName),
    state_topic: topics.state(projectId, deviceId, entity.id),
    qos: 1,
  };
  if (entity.icon) component.icon = entity.icon;
  switch (entity.kind) {
    case "sensor":
      if (entity.unit) component.unit_of_measurement = entity.unit;
      if (entity.deviceClass) component.device_class = entity.deviceClass;
      if (entity.stateClass) component.state_class = entity.stateClass;
      if (entity.displayPrecision !== undefined)
        component.suggested_display_precision = entity.displayPrecision;
      break;
    case "binary_sensor":
      if (entity.deviceClass) component.device_class = entity.deviceClass;
      break;
    case "switch":
      component.command_topic = topics.command(projectId, deviceId, entity.id);
      if (entity.deviceClass) component.device_class = entity.deviceClass;
      break;
    case "light":
      component.schema = "json";
      component.command_topic = topics.command(projectId, deviceId, entity.id);
      component.supported_color_modes = [colorModeOf(entity)];
      component.brightness = entity.brightness === true;
      break;
  }
  return component;
}

/**
 * The device-based discovery config (`<prefix>/device/<deviceId>/config`). Entities in `removed`
 * (ids → platform) are sent as `{platform}` only: Home Assistant's documented removal form.
 */
export function deviceConfig(
  input: DiscoveryInput,
  topics: Topics,
  removed: Map<string, string> = new Map(),
): Json {
  const components: Json = {};
  for (const [id, platform] of removed) components[id] = { platform };
  for (const entity of publishable(input.entities))
    components[entity.id] = componentOf(input, entity, topics);
  return {
    device: deviceBlock(input),
    origin: originBlock(input),
    ...availabilityOf(input, topics),
    qos: 1,
    components,
  };
}

/** Single-component discovery: one config per entity (Home Assistant before 2024.11), by topic. */
export function componentConfigs(input: DiscoveryInput, topics: Topics): Map<string, Json> {
  const configs = new Map<string, Json>();
  for (const entity of publishable(input.entities)) {
    const { platform: _platform, ...component } = componentOf(input, entity, topics);
    configs.set(topics.componentConfig(entity.kind, input.deviceId, entity.id), {
      ...component,
      device: deviceBlock(input),
      origin: originBlock(input),
      ...availabilityOf(input, topics),
    });
  }
  return configs;
}
