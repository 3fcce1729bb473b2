import type { EntityConfig } from "@sdk/protocol";
import type { HomeAssistantService } from "../../services/home-assistant.ts";
import { type DiscoveryInput, publishable } from "./discovery.ts";

/** A device the bridge should publish: of a project whose live deployment declares entities. */
export interface Wanted {
  projectId: string;
  deviceId: string;
  entities: EntityConfig[];
  input: DiscoveryInput;
}

/** Builds what the bridge should publish for one project's devices (none without entities). */
export async function wantedOf(
  source: HomeAssistantService,
  projectId: string,
  entities: EntityConfig[],
  server: { version: string; publicUrl: string | null },
): Promise<{ wanted: Wanted[]; online: Map<string, boolean> }> {
  const usable = publishable(entities);
  const devices = usable.length > 0 ? await source.devicesOf(projectId) : [];
  return {
    online: new Map(devices.map((d) => [d.id, d.status === "online"])),
    wanted: devices.map((d) => ({
      projectId,
      deviceId: d.id,
      entities: usable,
      input: {
        projectId,
        deviceId: d.id,
        deviceName: d.name,
        board: d.board,
        firmwareVersion: d.firmwareVersion,
        entities: usable,
        serverVersion: server.version,
        publicUrl: server.publicUrl,
      },
    })),
  };
}
