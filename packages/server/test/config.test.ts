import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig } from "../src/config.ts";

test("defaults: port 8080 on all interfaces, SQLite under ./data, registration open", () => {
  const config = loadConfig({}, "/srv/sdk", false);
  assert.equal(config.port, 8080);
  assert.equal(config.host, "0.0.0.0");
  assert.equal(config.dataDir, "/srv/sdk/data");
  assert.equal(config.databaseUrl, null);
  assert.equal(config.allowRegistration, true);
  assert.equal(config.publicUrl, null);
  assert.equal(config.logLevel, "info");
  assert.equal(config.logFormat, "json", "not a terminal: JSON logs");
  assert.equal(loadConfig({}, "/", true).logFormat, "pretty");
  assert.deepEqual(config.rateLimit, { maxAttempts: 10, windowSeconds: 300 });
  assert.equal(config.sessionMaxAgeDays, 30);
  assert.equal(config.trustProxy, false);
  assert.equal(config.sqliteCommitThread, "auto", "the group commit's thread chosen by the disk's speed");
  assert.equal(loadConfig({ SQLITE_COMMIT_THREAD: "on" }, "/").sqliteCommitThread, "on");
});

test("values are parsed and normalised", () => {
  const config = loadConfig(
    {
      PORT: "9000",
      DATA_DIR: "/data",
      DATABASE_URL: "postgres://u@db/sdk",
      ALLOW_REGISTRATION: "false",
      PUBLIC_URL: "https://pi.local/",
      LOG_LEVEL: "DEBUG",
      RATE_LIMIT_MAX_ATTEMPTS: "5",
      RATE_LIMIT_WINDOW_SECONDS: "60",
    },
    "/",
  );
  assert.equal(config.port, 9000);
  assert.equal(config.dataDir, "/data");
  assert.equal(config.databaseUrl, "postgres://u@db/sdk");
  assert.equal(config.allowRegistration, false);
  assert.equal(config.publicUrl, "https://pi.local");
  assert.equal(config.logLevel, "debug");
  assert.deepEqual(config.rateLimit, { maxAttempts: 5, windowSeconds: 60 });
});

test("an invalid value is one clear message naming the variable and what it accepts", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: "http" }, /^PORT must be a whole number from 0 to 65535 \(got "http"\)$/],
    [{ PORT: "-1" }, /^PORT must be/],
    [{ PORT: "8080.5" }, /^PORT must be/],
    [{ ALLOW_REGISTRATION: "maybe" }, /^ALLOW_REGISTRATION must be true or false/],
    [{ LOG_LEVEL: "loud" }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    [{ DATABASE_URL: "mysql://x" }, /^DATABASE_URL must be a postgres:\/\/ URL/],
    [{ PUBLIC_URL: "pi.local" }, /^PUBLIC_URL must be an http:\/\/ or https:\/\/ URL/],
    [{ RATE_LIMIT_WINDOW_SECONDS: "0" }, /^RATE_LIMIT_WINDOW_SECONDS must be a whole number from 1/],
    [{ HOST: "a b" }, /^HOST must be/],
    [{ SQLITE_COMMIT_THREAD: "yes" }, /^SQLITE_COMMIT_THREAD must be one of auto, on, off \(got "yes"\)$/],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => loadConfig(env, "/"),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
    );
  }
});

test("mDNS: on by default as 'sdk on <host>'; MDNS=false turns it off; MDNS_NAME is checked", () => {
  assert.deepEqual(loadConfig({}, "/", false, "pi.example.com").mdns, { enabled: true, name: "sdk on pi" });
  assert.deepEqual(loadConfig({ MDNS: "false", MDNS_NAME: "Garage" }, "/").mdns, {
    enabled: false,
    name: "Garage",
  });
  assert.equal(Buffer.byteLength(loadConfig({}, "/", false, "h".repeat(80)).mdns.name), 63);
  // Cut by code points: an emoji (a surrogate pair, 4 bytes) is kept whole or left out.
  const emoji = loadConfig({}, "/", false, `${"h".repeat(53)}🌱`).mdns.name;
  assert.equal(emoji, `sdk on ${"h".repeat(53)}`);
  assert.equal(loadConfig({}, "/", false, `${"h".repeat(52)}🌱`).mdns.name, `sdk on ${"h".repeat(52)}🌱`);
  for (const [env, message] of [
    [{ MDNS: "sometimes" }, /^MDNS must be true or false/],
    [{ MDNS_NAME: "x".repeat(64) }, /^MDNS_NAME must be 1 to 63 bytes without control characters/],
    [{ MDNS_NAME: "a\u0007b" }, /^MDNS_NAME must be 1 to 63 bytes/],
  ] as const) {
    assert.throws(
      () => loadConfig(env, "/"),
      (e: unknown) => e instanceof ConfigError && message.test(e.message),
    );
  }
});

test("the Home Assistant bridge: off without MQTT_URL; defaults; refused values never echo a password", () => {
  assert.equal(loadConfig({}, "/").homeAssistant, null);
  assert.deepEqual(loadConfig({ MQTT_URL: "mqtt://u:p@broker:1883" }, "/").homeAssistant, {
    mqttUrl: "mqtt://u:p@broker:1883",
    broker: "broker:1883",
    baseTopic: "sdk",
    discoveryPrefix: "homeassistant",
    discovery: "device",
  });
  const custom = loadConfig(
    {
      MQTT_URL: "mqtts://b",
      MQTT_BASE_TOPIC: "home/sdk",
      HA_DISCOVERY_PREFIX: "ha",
      HA_DISCOVERY: "component",
    },
    "/",
  ).homeAssistant;
  assert.equal(custom?.baseTopic, "home/sdk");
  assert.equal(custom?.broker, "b:8883", "the default port of mqtts");
  assert.equal(custom?.discovery, "component");
  assert.throws(
    () => loadConfig({ MQTT_URL: "http://u:secret@b" }, "/"),
    (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /MQTT_URL must be an mqtt:\/\//);
      assert.doesNotMatch(e.message, /secret/);
      return true;
    },
  );
  assert.throws(
    () => loadConfig({ MQTT_URL: "mqtt://b", MQTT_BASE_TOPIC: "sdk/#" }, "/"),
    /MQTT_BASE_TOPIC must be/,
  );
  assert.throws(
    () => loadConfig({ MQTT_URL: "mqtt://b", HA_DISCOVERY_PREFIX: "/ha" }, "/"),
    /HA_DISCOVERY_PREFIX/,
  );
  assert.throws(
    () => loadConfig({ MQTT_URL: "mqtt://b", HA_DISCOVERY: "both" }, "/"),
    /HA_DISCOVERY must be one of/,
  );
});

test("MQTT_BASE_TOPIC and HA_DISCOVERY_PREFIX must not share a topic tree", () => {
  // Equal: the server's own `online` on <base>/status would be Home Assistant's birth message.
  for (const [base, prefix] of [
    ["same", "same"],
    ["homeassistant/sdk", "homeassistant"],
    ["sdk", "sdk/ha"],
  ])
    assert.throws(
      () => loadConfig({ MQTT_URL: "mqtt://b", MQTT_BASE_TOPIC: base, HA_DISCOVERY_PREFIX: prefix }, "/"),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(
          e.message,
          /MQTT_BASE_TOPIC \("[^"]+"\) and HA_DISCOVERY_PREFIX \("[^"]+"\) must be separate topic trees/,
        );
        return true;
      },
      `${base} / ${prefix}`,
    );
  const ok = loadConfig({ MQTT_URL: "mqtt://b", MQTT_BASE_TOPIC: "sdk", HA_DISCOVERY_PREFIX: "sdk-ha" }, "/");
  assert.equal(ok.homeAssistant?.discoveryPrefix, "sdk-ha", "a shared beginning of a level is no collision");
});

test("cluster: NATS_URL makes an instance of a cluster, with PostgreSQL; its other variables are checked", () => {
  const postgres = { DATABASE_URL: "postgres://u@db/sdk" };
  assert.equal(loadConfig({}, "/").cluster, null, "one process by default");
  const cluster = loadConfig(
    { ...postgres, NATS_URL: "nats://app:s3cret@nats-1:4333, tls://nats-2" },
    "/",
  ).cluster;
  assert.ok(cluster);
  assert.equal(cluster.natsServer, "nats-1:4333", "for logs: no credentials");
  assert.equal(cluster.name, "sdk");
  assert.match(cluster.instanceId, /^i-[0-9a-f]{8}$/);
  assert.equal(cluster.leaseSeconds, 10);
  const named = loadConfig(
    {
      ...postgres,
      NATS_URL: "nats://nats",
      CLUSTER_NAME: "prod-eu",
      INSTANCE_ID: "web_2",
      CLUSTER_LEASE_SECONDS: "30",
    },
    "/",
  ).cluster;
  assert.deepEqual(
    {
      name: named?.name,
      instanceId: named?.instanceId,
      leaseSeconds: named?.leaseSeconds,
      server: named?.natsServer,
    },
    { name: "prod-eu", instanceId: "web_2", leaseSeconds: 30, server: "nats:4222" },
  );
  for (const [env, message] of [
    [{ NATS_URL: "nats://nats" }, /NATS_URL needs DATABASE_URL=postgres/],
    [{ ...postgres, NATS_URL: "http://nats" }, /NATS_URL must be nats:\/\/ or tls:\/\//],
    [{ ...postgres, NATS_URL: "nats://nats", CLUSTER_NAME: "a.b" }, /CLUSTER_NAME must be/],
    [{ ...postgres, NATS_URL: "nats://nats", INSTANCE_ID: "web 2" }, /INSTANCE_ID must be/],
    [{ ...postgres, NATS_URL: "nats://nats", CLUSTER_LEASE_SECONDS: "1" }, /CLUSTER_LEASE_SECONDS/],
  ] as const) {
    assert.throws(
      () => loadConfig(env, "/"),
      (e: Error) => e instanceof ConfigError && message.test(e.message),
    );
  }
});

test("SECRET_KEY_FILE: the key's file, by default in DATA_DIR", () => {
  assert.equal(loadConfig({}, "/srv/sdk").secretKeyFile, "/srv/sdk/data/secret.key");
  assert.equal(loadConfig({ DATA_DIR: "/data" }, "/").secretKeyFile, "/data/secret.key");
  assert.equal(
    loadConfig({ SECRET_KEY_FILE: "keys/sdk.key" }, "/etc/sdk").secretKeyFile,
    "/etc/sdk/keys/sdk.key",
  );
});
