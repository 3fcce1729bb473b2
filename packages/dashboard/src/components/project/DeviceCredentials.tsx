import type { DeviceCredentials as Credentials } from "@sdk/protocol";
import { useEffect, useRef } from "react";
import { api } from "../../api.ts";
import { useLoad } from "../../hooks/useLoad.ts";
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
        <li data-testid="real-board-step">
          <strong>A real board:</strong> <RealBoardStep deviceId={credentials.deviceId} />
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

/**
 * Flashing is offered only when this server has firmware releases to flash (`sdk flash` writes
 * one); without them, the step says where releases come from.
 */
function RealBoardStep({ deviceId }: { deviceId: string }) {
  const releases = useLoad(() => api.listFirmware(), []);
  if (releases.status === "loading") return <>checking this server's firmware releases…</>;
  if (releases.status === "error")
    return (
      <>
        flash the sdk firmware (<code>sdk flash</code>) with this device's credentials; this page could not
        read the server's firmware releases.
      </>
    );
  if (releases.status === "ready" && releases.data.length > 0)
    return (
      <>
        put it in BOOTSEL mode (hold BOOTSEL while plugging in USB) and run{" "}
        <code>sdk flash --device {deviceId}</code>: it writes firmware {releases.data[0]!.version} with fresh
        credentials for this device and your Wi-Fi (2.4 GHz), and waits until the board is online. See the{" "}
        <a href="/docs/firmware" target="_blank" rel="noreferrer">
          firmware guide
        </a>
        .
      </>
    );
  return (
    <>
      this server has no firmware releases to flash yet. An admin adds them (<code>FIRMWARE_DIR</code>, or
      uploading a build); see the{" "}
      <a href="/docs/firmware" target="_blank" rel="noreferrer">
        firmware guide
      </a>
      . Until then, try the simulated board below.
    </>
  );
}
