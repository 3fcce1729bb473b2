import {
  type Board,
  type CreatedDevice,
  type Device,
  type DeviceCredentials,
  idPrefixes,
} from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newId } from "../lib/ids.ts";
import { hashSecret, newSecret } from "../lib/tokens.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import type { FirmwareService } from "./firmware.ts";
import { projectNotFound } from "./projects.ts";
import { deviceView } from "./views.ts";

const deviceNotFound = () => new AppError("not_found", "No such device");

/** Devices of a project, and the credentials a board uses to connect (stored only as a hash). */
export function devicesService(deps: {
  repos: Pick<Repositories, "projects" | "devices">;
  bus: EventBus;
  clock: Clock;
  firmware: Pick<FirmwareService, "newestVersion">;
}) {
  const { repos, bus, clock, firmware } = deps;

  async function visibleProject(principal: Principal, projectId: string) {
    if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
  }

  return {
    async list(principal: Principal, projectId: string): Promise<Device[]> {
      await visibleProject(principal, projectId);
      const newest = await firmware.newestVersion();
      return (await repos.devices.list(viewerOf(principal), projectId)).map((row) => deviceView(row, newest));
    },

    async get(principal: Principal, projectId: string, deviceId: string): Promise<Device> {
      const row = await repos.devices.find(viewerOf(principal), projectId, deviceId);
      if (!row) {
        await visibleProject(principal, projectId);
        throw deviceNotFound();
      }
      return deviceView(row, await firmware.newestVersion());
    },

    async create(
      principal: Principal,
      projectId: string,
      input: { name: string; board: Board },
    ): Promise<CreatedDevice> {
      await visibleProject(principal, projectId);
      const now = clock.now();
      const secret = newSecret("dsk");
      const row = {
        id: newId(idPrefixes.device),
        projectId,
        name: input.name,
        board: input.board,
        secretHash: hashSecret(secret),
        lastSeenAt: null,
        firmwareVersion: null,
        createdAt: now,
        updatedAt: now,
      };
      await repos.devices.insert(row);
      await bus.publish("device.created", {
        actorId: principal.user.id,
        projectId,
        deviceId: row.id,
        name: input.name,
        board: input.board,
      });
      const { secretHash: _, ...device } = row;
      return {
        device: deviceView({ ...device, status: "offline" }, null),
        credentials: { deviceId: row.id, secret },
      };
    },

    async rename(principal: Principal, projectId: string, deviceId: string, name: string): Promise<Device> {
      const row = await repos.devices.rename(viewerOf(principal), projectId, deviceId, name, clock.now());
      if (!row) throw deviceNotFound();
      await bus.publish("device.renamed", { actorId: principal.user.id, projectId, deviceId, name });
      return deviceView(row, await firmware.newestVersion());
    },

    async delete(principal: Principal, projectId: string, deviceId: string): Promise<void> {
      if (!(await repos.devices.delete(viewerOf(principal), projectId, deviceId))) throw deviceNotFound();
      await bus.publish("device.deleted", {
        actorId: principal.user.id,
        projectId,
        deviceId,
        cause: "device",
      });
    },

    /** Issues a new secret; the old one stops working at once. */
    async rotateCredentials(
      principal: Principal,
      projectId: string,
      deviceId: string,
    ): Promise<DeviceCredentials> {
      const secret = newSecret("dsk");
      if (
        !(await repos.devices.setSecretHash(
          viewerOf(principal),
          projectId,
          deviceId,
          hashSecret(secret),
          clock.now(),
        ))
      ) {
        throw deviceNotFound();
      }
      await bus.publish("device.credentials_rotated", { actorId: principal.user.id, projectId, deviceId });
      return { deviceId, secret };
    },
  };
}
export type DevicesService = ReturnType<typeof devicesService>;
