// deploy/compose.cluster.yaml and its proxy config (deploy/cluster/nginx.conf), read as compose and
// nginx would: three sdk instances of the single-server file's image, each a cluster instance the
// server's own config accepts (NATS_URL, a postgres:// DATABASE_URL, the shared key file, its own
// INSTANCE_ID and data volume), NATS with JetStream, PostgreSQL, and a proxy on 8080 that sends
// every path (WebSockets included, with the upgrade) to all three, without sticky sessions.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadConfig } from "@sdk/server/config";
import { parse } from "yaml";

const deploy = fileURLToPath(new URL("../deploy/", import.meta.url));
const read = (file: string) => fs.readFileSync(path.join(deploy, file), "utf8");

interface Service {
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  secrets?: (string | { source: string; target?: string })[];
}
interface Compose {
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string }>;
  volumes?: Record<string, unknown>;
}

// `merge: true`: the `<<` keys of the shared blocks, as compose reads them.
const cluster = parse(read("compose.cluster.yaml"), { merge: true }) as Compose;
const single = parse(read("compose.yaml"), { merge: true }) as Compose;
const instances = Object.entries(cluster.services).filter(([, s]) => s.environment?.NATS_URL);

test("compose.cluster.yaml: three sdk instances of the same image as compose.yaml", () => {
  assert.deepEqual(
    instances.map(([name]) => name),
    ["sdk1", "sdk2", "sdk3"],
  );
  for (const [name, service] of instances) {
    assert.equal(service.image, single.services.sdk?.image, `${name} runs the image compose.yaml runs`);
    assert.equal(service.ports, undefined, `${name} is reached through the proxy only`);
  }
});

test("compose.cluster.yaml: each instance is a cluster instance the server's config accepts", () => {
  const ids = new Set<string>();
  const volumes = new Set<string>();
  for (const [name, service] of instances) {
    const env = service.environment ?? {};
    for (const key of ["NATS_URL", "DATABASE_URL", "SECRET_KEY_FILE", "INSTANCE_ID"])
      assert.ok(env[key], `${name} sets ${key}`);
    assert.match(env.DATABASE_URL!, /^postgres:\/\/[^@]+@postgres:5432\//, `${name}: the postgres service`);
    assert.match(env.NATS_URL!, /^nats:\/\/nats:4222$/, `${name}: the nats service`);
    const config = loadConfig(env, "/data", false, name);
    assert.ok(config.cluster, `${name} runs as a cluster instance`);
    assert.equal(config.cluster.instanceId, env.INSTANCE_ID);
    ids.add(config.cluster.instanceId);

    // The key file is the shared secret, mounted read-only where SECRET_KEY_FILE points.
    const secret = service.secrets?.map((s) => (typeof s === "string" ? { source: s } : s));
    assert.ok(
      secret?.some((s) => `/run/secrets/${s.target ?? s.source}` === config.secretKeyFile),
      `${name}: SECRET_KEY_FILE is its compose secret (${config.secretKeyFile})`,
    );
    const data = service.volumes?.find((v) => v.endsWith(":/data"));
    assert.ok(data, `${name} has a data volume at /data`);
    volumes.add(data.split(":")[0]!);
  }
  assert.equal(ids.size, instances.length, "distinct INSTANCE_IDs");
  assert.equal(volumes.size, instances.length, "each instance its own data volume");
  const sources = new Set(
    instances.flatMap(([, s]) => (s.secrets ?? []).map((x) => (typeof x === "string" ? x : x.source))),
  );
  assert.equal(sources.size, 1, "one key for every instance");
  assert.ok(cluster.secrets?.[[...sources][0]!]?.file, "the key comes from a file the operator creates");
});

test("compose.cluster.yaml: PostgreSQL, and NATS with JetStream", () => {
  assert.match(cluster.services.postgres?.image ?? "", /^postgres:/);
  const nats = cluster.services.nats;
  assert.match(nats?.image ?? "", /^nats:/);
  const command = Array.isArray(nats?.command) ? nats.command : String(nats?.command).split(/\s+/);
  assert.ok(command.includes("-js") || command.includes("--jetstream"), "JetStream is enabled");
});

test("the proxy: port 8080, every path to every instance, WebSocket upgrades, no sticky sessions", () => {
  const proxy = cluster.services.proxy;
  assert.ok(proxy, "a proxy service");
  assert.ok(proxy.ports?.includes("8080:8080"), "published on 8080");
  const mount = proxy.volumes?.find((v) => v.includes("nginx.conf"));
  assert.ok(mount, "its config is mounted");
  assert.equal(path.normalize(mount.split(":")[0]!), path.normalize("./cluster/nginx.conf"));
  const conf = read("cluster/nginx.conf").replace(/#.*$/gm, "");

  const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(conf);
  assert.ok(upstream, "an upstream block");
  const [, name, body] = upstream;
  const servers = [...body!.matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`);
  assert.deepEqual(
    servers,
    instances.map(([n]) => `${n}:8080`),
    "every instance, on the server's port",
  );
  assert.doesNotMatch(body!, /\b(ip_hash|hash|sticky)\b/, "no sticky sessions");

  const location = /location\s+\/\s*\{([^}]*)\}/.exec(conf)?.[1];
  assert.ok(location, "location / (the API, the dashboard, /v1/device and the watch sockets)");
  assert.match(location, new RegExp(`proxy_pass\\s+http://${name};`));
  assert.match(location, /proxy_http_version\s+1\.1;/, "HTTP/1.1: upgrades need it");
  assert.match(location, /proxy_set_header\s+Upgrade\s+\$http_upgrade;/);
  assert.match(location, /proxy_set_header\s+Connection\s+\$connection_upgrade;/);
  assert.match(conf, /map\s+\$http_upgrade\s+\$connection_upgrade\s*\{[^}]*default\s+upgrade;/);
  assert.match(location, /proxy_set_header\s+X-Forwarded-For\s/, "client addresses for the rate limits");
  const timeout = /proxy_read_timeout\s+(\d+)(s|m|h)?;/.exec(location);
  assert.ok(timeout, "a read timeout for idle WebSockets");
  const seconds = Number(timeout[1]) * ({ s: 1, m: 60, h: 3600 }[timeout[2] ?? "s"] ?? 1);
  assert.ok(seconds > 2 * 15, "longer than two heartbeats (HEARTBEAT_SECONDS 15)");
  for (const [n, s] of instances) assert.equal(s.environment?.TRUST_PROXY, "true", `${n} trusts the proxy`);
});
