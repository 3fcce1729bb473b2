import { SdkClient } from "@sdk/client";
/** What a device connects with (`Authorization: Basic base64(deviceId:secret)`). */
export interface Credentials {
  deviceId: string;
  secret: string;
}

export interface Provisioned {
  client: SdkClient;
  /** The first user's API token (for the REST API and watch sockets). */
  token: string;
  projectId: string;
  devices: Credentials[];
}

/** Registers the first user, creates a project and `count` devices through the REST API. */
export async function provision(
  baseUrl: string,
  count: number,
  inFlight: number,
  log: (line: string) => void,
): Promise<Provisioned> {
  const anonymous = new SdkClient({ baseUrl });
  const auth = await anonymous.api.register({
    body: { email: "bench@example.com", password: "bench-password-0123", issueToken: true },
  });
  if (!auth.token) throw new Error("register did not return an API token");
  const client = new SdkClient({ baseUrl, token: auth.token.token });
  const project = await client.api.createProject({ body: { name: "bench" } });

  const devices: Credentials[] = new Array(count);
  const started = performance.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const created = await client.api.createDevice({
        params: { projectId: project.id },
        body: { name: `bench-${String(i + 1).padStart(5, "0")}`, board: "pico_w" },
      });
      devices[i] = created.credentials;
      done++;
      if (done % 1000 === 0 || done === count) {
        const rate = Math.round(done / ((performance.now() - started) / 1000));
        log(`  created ${done}/${count} devices (${rate}/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
  return { client, token: auth.token.token, projectId: project.id, devices };
}

/** Devices the server reports as online (its REST API, from the presence it stored). */
export async function countOnline(fleet: Provisioned): Promise<number> {
  const devices = await fleet.client.api.listDevices({ params: { projectId: fleet.projectId } });
  return devices.filter((d) => d.status === "online").length;
}
