// The rules of `ha.entities` and of `ha_command` messages as plain data, without zod: defineConfig
// (the device library, bundled into scripts) and the server's manifest schema both check with
// `entityProblems`, the Home Assistant bridge and `isHaCommand` with `haCommandProblem`.
// Re-exported by hardware.ts; it uses hardware.ts's names only inside functions (an import cycle
// that is safe because nothing here reads them while the modules load).
import {
  type EntityKind,
  entityIdPattern,
  entityKinds,
  entityLimits,
  haEntityIdPattern,
  stateClasses,
} from "./hardware.ts";

// Home Assistant's sensor device classes and the units each accepts, exact spelling, from
// homeassistant/components/sensor/const.py DEVICE_CLASS_UNITS and the Unit* enums of
// homeassistant/const.py (home-assistant/core; sensor/const.py at commit 00eb6680fbf6, a 2025
// version; see also HOME_ASSISTANT.md §6). Since Home Assistant 2025.7 an MQTT sensor whose unit is
// not in its class's set is rejected ("The unit of measurement `X` is not valid together with
// device class `Y`", mqtt/sensor.py validate_sensor_state_and_device_class_config). `null` in a
// set: the sensor may have no unit. A class whose set lacks `null` needs a unit: without one Home
// Assistant warns that `None` is not a valid unit for the class.
const volume = ["ft³", "CCF", "m³", "L", "mL", "gal", "fl. oz."];
const energy = [
  "J",
  "kJ",
  "MJ",
  "GJ",
  "mWh",
  "Wh",
  "kWh",
  "MWh",
  "GWh",
  "TWh",
  "cal",
  "kcal",
  "Mcal",
  "Gcal",
];
const pressure = ["Pa", "hPa", "kPa", "bar", "cbar", "mbar", "mmHg", "inHg", "psi"];
const speed = ["Beaufort", "ft/s", "in/s", "m/s", "km/h", "kn", "mph", "mm/s"];
const volumetricFlux = ["in/d", "in/h", "mm/d", "mm/h"];
const temperature = ["°C", "°F", "K"];
const microgramsPerCubicMeter = ["µg/m³"];

export const sensorDeviceClassUnits: { readonly [deviceClass: string]: readonly (string | null)[] } = {
  apparent_power: ["VA"],
  aqi: [null],
  area: ["m²", "cm²", "km²", "mm²", "in²", "ft²", "yd²", "mi²", "ac", "ha"],
  atmospheric_pressure: pressure,
  battery: ["%"],
  blood_glucose_concentration: ["mg/dL", "mmol/L"],
  carbon_monoxide: ["ppm"],
  carbon_dioxide: ["ppm"],
  conductivity: ["S/cm", "µS/cm", "mS/cm"],
  current: ["mA", "A"],
  data_rate: [
    "bit/s",
    "kbit/s",
    "Mbit/s",
    "Gbit/s",
    "B/s",
    "kB/s",
    "MB/s",
    "GB/s",
    "KiB/s",
    "MiB/s",
    "GiB/s",
  ],
  data_size: [
    ...["bit", "kbit", "Mbit", "Gbit", "B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"],
    ...["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"],
  ],
  distance: ["mm", "cm", "m", "km", "in", "ft", "yd", "mi", "nmi"],
  duration: ["d", "h", "min", "s", "ms"],
  energy,
  energy_distance: ["kWh/100km", "mi/kWh", "km/kWh"],
  energy_storage: energy,
  frequency: ["Hz", "kHz", "MHz", "GHz"],
  gas: ["CCF", "ft³", "m³"],
  humidity: ["%"],
  illuminance: ["lx"],
  irradiance: ["W/m²", "BTU/(h⋅ft²)"],
  moisture: ["%"],
  nitrogen_dioxide: microgramsPerCubicMeter,
  nitrogen_monoxide: microgramsPerCubicMeter,
  nitrous_oxide: microgramsPerCubicMeter,
  ozone: microgramsPerCubicMeter,
  ph: [null],
  pm1: microgramsPerCubicMeter,
  pm10: microgramsPerCubicMeter,
  pm25: microgramsPerCubicMeter,
  power_factor: ["%", null],
  power: ["W", "kW", "MW", "GW", "TW"],
  precipitation: ["in", "mm", "cm"],
  precipitation_intensity: volumetricFlux,
  pressure,
  reactive_power: ["var"],
  signal_strength: ["dB", "dBm"],
  sound_pressure: ["dB", "dBA"],
  speed: [...speed, ...volumetricFlux],
  sulphur_dioxide: microgramsPerCubicMeter,
  temperature,
  temperature_delta: temperature,
  volatile_organic_compounds: microgramsPerCubicMeter,
  volatile_organic_compounds_parts: ["ppb", "ppm"],
  voltage: ["µV", "mV", "V", "kV", "MV"],
  volume,
  volume_flow_rate: ["m³/h", "m³/s", "ft³/min", "L/h", "L/min", "L/s", "gal/min", "mL/s"],
  volume_storage: volume,
  water: ["CCF", "ft³", "m³", "gal", "L"],
  weight: ["g", "kg", "mg", "µg", "oz", "lb", "st"],
  wind_direction: ["°"],
  wind_speed: speed,
};

/**
 * Sensor device classes with no unit table: `monetary` takes any ISO 4217 currency code; `date`
 * and `timestamp` are not numeric, so they take no unit, state class or display precision.
 * (`enum` is left out: it needs an `options` list, which `ha.entities` does not offer.)
 */
const sensorDeviceClassesWithoutUnits = ["date", "monetary", "timestamp"] as const;
const nonNumericSensorClasses: readonly string[] = ["date", "timestamp"];

/** Every sensor device class `ha.entities` accepts. */
export const sensorDeviceClasses: readonly string[] = [
  ...Object.keys(sensorDeviceClassUnits),
  ...sensorDeviceClassesWithoutUnits,
].sort();

/**
 * Home Assistant's binary sensor device classes (BinarySensorDeviceClass in home-assistant/core
 * homeassistant/components/binary_sensor/__init__.py, commit 027590d94dd8).
 */
export const binarySensorDeviceClasses = [
  "battery",
  "battery_charging",
  "carbon_monoxide",
  "cold",
  "connectivity",
  "door",
  "garage_door",
  "gas",
  "heat",
  "light",
  "lock",
  "moisture",
  "motion",
  "moving",
  "occupancy",
  "opening",
  "plug",
  "power",
  "presence",
  "problem",
  "running",
  "safety",
  "smoke",
  "sound",
  "tamper",
  "update",
  "vibration",
  "window",
] as const;

/** The fields every entity has, and the extra fields each kind takes. */
export const entityCommonFields = ["id", "kind", "name", "icon"] as const;
export const entityKindFields: { readonly [K in EntityKind]: readonly string[] } = {
  sensor: ["unit", "deviceClass", "stateClass", "displayPrecision"],
  binary_sensor: ["deviceClass"],
  switch: [],
  light: ["brightness", "rgb"],
};

/** Decimals a sensor may ask Home Assistant to show (`suggested_display_precision`). */
export const displayPrecisionRange = { min: 0, max: 10 } as const;

/** Home Assistant icons are `prefix:name`, e.g. `mdi:thermometer`. */
const haIconPattern = /^[a-z0-9_-]+:[a-z0-9_-]+$/;

/** One thing wrong with an entity: the field (empty for the entity itself) and what is wrong. */
export interface EntityProblem {
  field: string;
  message: string;
}

const show = (value: unknown) => (typeof value === "string" ? JSON.stringify(value) : String(value));
const quoted = (list: readonly (string | null)[]) =>
  list
    .filter((u) => u !== null)
    .map((u) => JSON.stringify(u))
    .join(", ");
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function idProblem(id: unknown): string | null {
  if (typeof id === "string" && haEntityIdPattern.test(id)) return null;
  if (typeof id === "string" && entityIdPattern.test(id)) {
    const suggestion = id.replaceAll(".", "_");
    return `${JSON.stringify(id)} contains ".", which Home Assistant's MQTT discovery topics and unique ids do not allow: rename it, e.g. to ${JSON.stringify(suggestion)}, here and in the script's emitState calls`;
  }
  return `must be 1–64 letters, digits, _ or - (got ${show(id)})`;
}

function sensorProblems(e: Record<string, unknown>): EntityProblem[] {
  const problems: EntityProblem[] = [];
  const { unit, deviceClass, stateClass, displayPrecision } = e;
  if (
    unit !== undefined &&
    (typeof unit !== "string" || unit.trim() === "" || unit.length > entityLimits.textMaxLength)
  )
    problems.push({
      field: "unit",
      message: `must be a non-blank string of at most ${entityLimits.textMaxLength} characters (leave it out for none)`,
    });
  if (stateClass !== undefined && !(stateClasses as readonly unknown[]).includes(stateClass))
    problems.push({
      field: "stateClass",
      message: `must be one of ${stateClasses.join(", ")} (got ${show(stateClass)})`,
    });
  if (
    displayPrecision !== undefined &&
    !(
      typeof displayPrecision === "number" &&
      Number.isInteger(displayPrecision) &&
      displayPrecision >= displayPrecisionRange.min &&
      displayPrecision <= displayPrecisionRange.max
    )
  )
    problems.push({
      field: "displayPrecision",
      message: `must be a whole number of decimals from ${displayPrecisionRange.min} to ${displayPrecisionRange.max} (got ${show(displayPrecision)})`,
    });
  if (deviceClass === undefined) return problems;
  if (typeof deviceClass !== "string" || !sensorDeviceClasses.includes(deviceClass)) {
    const hint =
      deviceClass === "enum"
        ? "enum sensors need a list of options, which ha.entities does not offer: leave deviceClass out"
        : (binarySensorDeviceClasses as readonly unknown[]).includes(deviceClass)
          ? `${show(deviceClass)} is a binary_sensor class: an on/off value is kind "binary_sensor"`
          : `one of Home Assistant's sensor device classes: ${sensorDeviceClasses.join(", ")}`;
    problems.push({
      field: "deviceClass",
      message: `is not a sensor device class (got ${show(deviceClass)}); ${hint}`,
    });
    return problems;
  }
  if (nonNumericSensorClasses.includes(deviceClass)) {
    for (const field of ["unit", "stateClass", "displayPrecision"] as const)
      if (e[field] !== undefined)
        problems.push({
          field,
          message: `cannot be set on a ${deviceClass} sensor: its value is not a number (Home Assistant refuses it)`,
        });
    return problems;
  }
  const allowed = sensorDeviceClassUnits[deviceClass];
  if (!allowed || (typeof unit !== "string" && unit !== undefined)) return problems;
  const given = unit ?? null;
  if (allowed.includes(given)) return problems;
  const choices = allowed.includes(null) ? `${quoted(allowed)} or none` : quoted(allowed);
  problems.push({
    field: "unit",
    message:
      given === null
        ? `is needed with deviceClass ${JSON.stringify(deviceClass)}: one of ${choices} (exact spelling)`
        : allowed.every((u) => u === null)
          ? `must be left out with deviceClass ${JSON.stringify(deviceClass)}: Home Assistant rejects a ${deviceClass} sensor with a unit (got ${JSON.stringify(given)})`
          : `${JSON.stringify(given)} is not valid with deviceClass ${JSON.stringify(deviceClass)}: Home Assistant (2025.7 and later) rejects the entity; use one of ${choices} (exact spelling)`,
  });
  return problems;
}

/**
 * Everything wrong with one `ha.entities` entry: the id rule of Home Assistant's discovery (no
 * `.`), the kind, the name, the fields of its kind only, and a sensor's unit against its device
 * class. Empty when the entity is valid. Never throws; each caller raises its own error.
 */
export function entityProblems(entity: unknown): EntityProblem[] {
  if (!isRecord(entity)) return [{ field: "", message: "must be an object { id, kind, name, … }" }];
  const problems: EntityProblem[] = [];
  const idIssue = idProblem(entity.id);
  if (idIssue) problems.push({ field: "id", message: idIssue });
  const kind = entity.kind;
  if (!(entityKinds as readonly unknown[]).includes(kind)) {
    problems.push({ field: "kind", message: `must be one of ${entityKinds.join(", ")} (got ${show(kind)})` });
    return problems;
  }
  const { nameMaxLength, textMaxLength } = entityLimits;
  const name = entity.name;
  if (typeof name !== "string" || name.trim() === "" || name.length > nameMaxLength)
    problems.push({
      field: "name",
      message: `must be a non-empty string of at most ${nameMaxLength} characters`,
    });
  const icon = entity.icon;
  if (
    icon !== undefined &&
    (typeof icon !== "string" || icon.length > textMaxLength || !haIconPattern.test(icon))
  )
    problems.push({
      field: "icon",
      message: `must be a Home Assistant icon "prefix:name" such as "mdi:thermometer" (got ${show(icon)})`,
    });
  const own = entityKindFields[kind as EntityKind];
  for (const field of Object.keys(entity)) {
    if ((entityCommonFields as readonly string[]).includes(field) || own.includes(field)) continue;
    if (entity[field] === undefined) continue;
    const owners = entityKinds.filter((k) => entityKindFields[k].includes(field));
    const fields = [...entityCommonFields, ...own].join(", ");
    problems.push({
      field,
      message:
        owners.length > 0
          ? `does not belong to a ${kind}: only ${owners.join(" and ")} entities have ${field} (a ${kind} takes ${fields})`
          : `is not a field of ha.entities (a ${kind} takes ${fields})`,
    });
  }
  if (kind === "sensor") problems.push(...sensorProblems(entity));
  if (kind === "binary_sensor" && entity.deviceClass !== undefined) {
    if (!(binarySensorDeviceClasses as readonly unknown[]).includes(entity.deviceClass))
      problems.push({
        field: "deviceClass",
        message: `must be one of Home Assistant's binary sensor device classes: ${binarySensorDeviceClasses.join(", ")} (got ${show(entity.deviceClass)})`,
      });
  }
  if (kind === "light")
    for (const field of ["brightness", "rgb"] as const)
      if (entity[field] !== undefined && typeof entity[field] !== "boolean")
        problems.push({ field, message: `must be true or false (got ${show(entity[field])})` });
  return problems;
}

/** Problems with a whole `ha.entities` list: too many, repeated ids, and each entity's own (fields prefixed `[i].`). */
export function entitiesProblems(entities: unknown): EntityProblem[] {
  if (!Array.isArray(entities)) return [{ field: "", message: "must be an array" }];
  if (entities.length > entityLimits.perDeployment)
    return [{ field: "", message: `must list at most ${entityLimits.perDeployment} entities` }];
  const problems: EntityProblem[] = [];
  const seen = new Set<unknown>();
  entities.forEach((entity, i) => {
    for (const p of entityProblems(entity))
      problems.push({ field: p.field ? `[${i}].${p.field}` : `[${i}]`, message: p.message });
    const id = isRecord(entity) ? entity.id : undefined;
    if (typeof id === "string" && seen.has(id))
      problems.push({
        field: `[${i}].id`,
        message: `repeats ${JSON.stringify(id)}: each entity needs its own id`,
      });
    seen.add(id);
  });
  return problems;
}

const commandKinds = ["switch", "light"] as const;
/** A light's brightness or colour channel: an integer 0–255. */
export const isHaByte = (v: unknown): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 255;
/** A light's colour: { r, g, b } of integers 0–255. */
export const isHaColor = (v: unknown): v is { r: number; g: number; b: number } =>
  isRecord(v) && isHaByte(v.r) && isHaByte(v.g) && isHaByte(v.b);

/**
 * What is wrong with a message meant as an `ha_command` (null when it is one): type, an entity id
 * by Home Assistant's rule, kind switch or light, state ON or OFF, and for lights only an optional
 * `brightness` 0–255 and `color` {r, g, b} of 0–255 integers.
 */
export function haCommandProblem(message: unknown): string | null {
  if (!isRecord(message)) return "an ha_command must be an object";
  if (message.type !== "ha_command") return `type must be "ha_command" (got ${show(message.type)})`;
  if (typeof message.entityId !== "string" || !haEntityIdPattern.test(message.entityId))
    return `entityId must be an ha.entities id (got ${show(message.entityId)})`;
  if (!(commandKinds as readonly unknown[]).includes(message.kind))
    return `kind must be switch or light (got ${show(message.kind)})`;
  if (message.state !== "ON" && message.state !== "OFF")
    return `state must be "ON" or "OFF" (got ${show(message.state)})`;
  const { brightness, color } = message;
  if (message.kind === "switch" && (brightness !== undefined || color !== undefined))
    return "a switch command has no brightness or color";
  if (brightness !== undefined && !isHaByte(brightness))
    return `brightness must be an integer from 0 to 255 (got ${show(brightness)})`;
  if (color !== undefined) {
    if (!isHaColor(color))
      return `color must be { r, g, b } with integers from 0 to 255 (got ${JSON.stringify(color)})`;
  }
  return null;
}
