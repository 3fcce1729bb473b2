import { randomBytes } from "node:crypto";
import mqtt, { type MqttClient } from "mqtt";

const firstRetryMs = 1_000;
const maxRetryMs = 30_000;

/**
 * An MQTT 5 client that keeps reconnecting with exponential backoff (1 s doubling to 30 s, reset
 * once connected) and leaves `offline` retained on `willTopic` when it goes away uncleanly.
 * Credentials come from the URL (MQTT_URL) only.
 */
export function connectBroker(mqttUrl: string, willTopic: string): MqttClient {
  // The mqtt package splits the decoded user:password at its last ':'; a percent-encoded ':' in
  // the password would move into the user name. Decode each part here instead.
  const url = new URL(mqttUrl);
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  url.username = "";
  url.password = "";
  const client = mqtt.connect(url.toString(), {
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    protocolVersion: 5,
    clean: true,
    clientId: `sdk-server-${randomBytes(6).toString("hex")}`,
    connectTimeout: 10_000,
    reconnectPeriod: firstRetryMs,
    queueQoSZero: false,
    will: { topic: willTopic, payload: Buffer.from("offline"), qos: 1, retain: true },
  });
  let failures = 0;
  client.on("connect", () => {
    failures = 0;
  });
  client.on("close", () => {
    client.options.reconnectPeriod = Math.min(maxRetryMs, firstRetryMs * 2 ** failures);
    failures = Math.min(failures + 1, 10);
  });
  return client;
}
