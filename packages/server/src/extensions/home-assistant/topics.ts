/** Where the bridge publishes and listens, from MQTT_BASE_TOPIC and HA_DISCOVERY_PREFIX. */
export interface Topics {
  /** Retained `online`; the last will sets `offline`. */
  serverStatus: string;
  /** Home Assistant's birth and will messages. */
  haStatus: string;
  deviceAvailability(projectId: string, deviceId: string): string;
  /**
   * Retained: the config topics last published for the device (a JSON list). A config topic the
   * marker names but the broker no longer holds was deleted in Home Assistant's UI; one it does
   * not name (after a switch of HA_DISCOVERY or HA_DISCOVERY_PREFIX) is simply not published yet.
   */
  discoveryMarker(projectId: string, deviceId: string): string;
  state(projectId: string, deviceId: string, entityId: string): string;
  command(projectId: string, deviceId: string, entityId: string): string;
  /** Device-based discovery (Home Assistant 2024.11+). */
  deviceConfig(deviceId: string): string;
  /** Single-component discovery, one topic per entity. */
  componentConfig(platform: string, deviceId: string, entityId: string): string;
  /** Subscriptions: every command, availability and state topic of the bridge. */
  commandFilter: string;
  availabilityFilter: string;
  markerFilter: string;
  stateFilter: string;
  deviceConfigFilter: string;
  componentConfigFilter: string;
  /** The parts of a topic under the base; null for any other topic. */
  parse(topic: string): { projectId: string; deviceId: string; rest: string[] } | null;
  /** The device id of a discovery topic of either form; null for any other topic. */
  parseConfig(topic: string): { deviceId: string; platform?: string; entityId?: string } | null;
}

export function topicsFor(baseTopic: string, discoveryPrefix: string): Topics {
  const base = baseTopic;
  const prefix = discoveryPrefix;
  const baseDepth = base.split("/").length;
  const prefixDepth = prefix.split("/").length;
  return {
    serverStatus: `${base}/status`,
    haStatus: `${prefix}/status`,
    deviceAvailability: (p, d) => `${base}/${p}/${d}/availability`,
    discoveryMarker: (p, d) => `${base}/${p}/${d}/discovery`,
    state: (p, d, e) => `${base}/${p}/${d}/${e}/state`,
    command: (p, d, e) => `${base}/${p}/${d}/${e}/set`,
    deviceConfig: (d) => `${prefix}/device/${d}/config`,
    componentConfig: (platform, d, e) => `${prefix}/${platform}/${d}/${e}/config`,
    commandFilter: `${base}/+/+/+/set`,
    availabilityFilter: `${base}/+/+/availability`,
    markerFilter: `${base}/+/+/discovery`,
    stateFilter: `${base}/+/+/+/state`,
    deviceConfigFilter: `${prefix}/device/+/config`,
    componentConfigFilter: `${prefix}/+/+/+/config`,
    parse(topic) {
      const levels = topic.split("/");
      if (levels.slice(0, baseDepth).join("/") !== base) return null;
      const [projectId, deviceId, ...rest] = levels.slice(baseDepth);
      return projectId && deviceId ? { projectId, deviceId, rest } : null;
    },
    parseConfig(topic) {
      const levels = topic.split("/");
      if (levels.slice(0, prefixDepth).join("/") !== prefix || levels.at(-1) !== "config") return null;
      const parts = levels.slice(prefixDepth, -1);
      if (parts.length === 2 && parts[0] === "device") return { deviceId: parts[1]! };
      if (parts.length === 3 && parts[0] !== "device")
        return { platform: parts[0]!, deviceId: parts[1]!, entityId: parts[2]! };
      return null;
    },
  };
}
