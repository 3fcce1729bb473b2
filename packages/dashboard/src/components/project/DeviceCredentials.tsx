import type { DeviceCredentials as Credentials } from "@sdk/protocol";
import { useEffect, useRef } from "react";
import { SecretValue } from "../SecretValue.tsx";

/**
 * The address a board (or the simulator) is given. The firmware's rule: `host:port` means plain
 * ws://, a bare host means TLS on 443, so port 80 must be written out and HTTPS on another port
 * needs a full URL.
 */
function boardServerAddress(where: Pick<Location, "protocol" | "hostname" | "port" | "host">): string {
  if (where.protocol === "https:") return where.port ? `https://${where.host}` : where.hostname;
  return where.port ? where.host : `${where.hostname}:80`;
}

/** New device credentials: shown once, with what to do next. */
export function DeviceCredentials({
  deviceName,
  credentials,
  rotated,
  onDone,
}: {
  deviceName: string;
  credentials: Credentials;
  rotated: boolean;
  onDone: () => void;
}) {
  const server = boardServerAddress(location);
  const heading = useRef<HTMLHeadingElement>(null);
  // Move focus here: the secret is the one thing to act on now.
  useEffect(() => heading.current?.focus(), []);
  const simulator = `node packages/simulator/src/cli.ts --server ${server} --device ${credentials.deviceId} --secret ${credentials.secret}`;
  return (
    <section className="card callout" aria-labelledby="credentials-title" data-testid="device-credentials">
      <h3 id="credentials-title" ref={heading} tabIndex={-1}>
        {rotated ? "New credentials" : "Credentials"} for “{deviceName}”
      </h3>
      <p className="callout-warning">
        <strong>Save the secret now: it is shown only this once.</strong> If it is lost, issue new
        credentials.
        {rotated && " The old secret no longer works: the board stays offline until it has the new one."}
      </p>
      <SecretValue label="Device id" value={credentials.deviceId} testId="device-id" />
      <SecretValue label="Device secret" value={credentials.secret} testId="device-secret" />
      <SecretValue label="Server address" value={server} />
      <h4>What next</h4>
      <ol className="steps">
        <li>
          <strong>A real board:</strong> flash the sdk firmware to the Pico W / Pico 2 W and give it your
          Wi-Fi (2.4 GHz), the server address, the device id and the secret. See the{" "}
          <a href="/docs/protocol" target="_blank" rel="noreferrer">
            device protocol
          </a>{" "}
          for how a board connects.
        </li>
        <li>
          <strong>No board at hand?</strong> Run the simulated board from the sdk repository:
          <SecretValue label="Simulator command" value={simulator} />
        </li>
        <li>When it connects, the device shows as Online in the list below.</li>
      </ol>
      <button type="button" className="button-primary" onClick={onDone}>
        I have saved the secret
      </button>
    </section>
  );
}
