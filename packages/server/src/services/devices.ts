import {
  type Board,
  type CreatedDevice,
  type CreatedDevices,
  type Device,
  type DeviceCredentials,
  idPrefixes,
  tagLimits,
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
  repos: Pick<Repositories, "projects" | "devices" | "deviceTags">;
  bus: EventBus;
  clock: Clock;
  firmware: Pick<FirmwareService, "newestVersion">;
}) {
  const { repos, bus, clock, firmware } = deps;

  async function visibleProject(principal: Principal, projectId: string) {
    if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
  }

  /** A fresh device row with its secret (only the hash is stored). */
  function newDevice(projectId: string, input: { name: string; board: Board }) {
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
    return { row, secret };
  }

  function created(row: ReturnType<typeof newDevice>["row"], secret: string, tags: string[]): CreatedDevice {
    const { secretHash: _, ...device } = row;
    return {
      device: deviceView({ ...device, status: "offline" }, null, tags),
      credentials: { deviceId: row.id, secret },
    };
  }

  async function get(principal: Principal, projectId: string, deviceId: string): Promise<Device> {
    const viewer = viewerOf(principal);
    const row = await repos.devices.find(viewer, projectId, deviceId);
    if (!row) {
      await visibleProject(principal, projectId);
      throw deviceNotFound();
    }
    const tags = await repos.deviceTags.ofDevice(viewer, projectId, deviceId);
    return deviceView(row, await firmware.newestVersion(), tags);
  }

  /** Applies a change to a device's tags; publishes `device.tags_changed` when they changed. */
  async function changeTags(
    principal: Principal,
    projectId: string,
    deviceId: string,
    change: (current: string[]) => string[],
  ): Promise<Device> {
    const result = await repos.deviceTags.update(
      viewerOf(principal),
      projectId,
      deviceId,
      (current) => {
        const next = [...new Set(change(current))].sort();
        return next.length > tagLimits.perDevice ? null : next;
      },
      clock.now(),
    );
    if (!result) {
      await visibleProject(principal, projectId);
      throw deviceNotFound();
    }
    const { before, after } = result;
    if (after === null)
      throw new AppError(
        "invalid_request",
        `Invalid request: tags a device has at most ${tagLimits.perDevice} tags (it has ${before.length})`,
        { fields: [{ path: "tags", message: `a device has at most ${tagLimits.perDevice} tags` }] },
      );
    const added = after.filter((t) => !before.includes(t));
    const removed = before.filter((t) => !after.includes(t));
    if (added.length > 0 || removed.length > 0)
      await bus.publish("device.tags_changed", {
        actorId: principal.user.id,
        projectId,
        deviceId,
        tags: after,
        added,
        removed,
      });
    return get(principal, projectId, deviceId);
  }

  return {
    /** `tag`: only the devices with this tag. */
    async list(principal: Principal, projectId: string, tag?: string): Promise<Device[]> {
      await visibleProject(principal, projectId);
      const viewer = viewerOf(principal);
      const newest = await firmware.newestVersion();
      const [rows, tags] = await Promise.all([
        repos.devices.list(viewer, projectId, tag),
        repos.deviceTags.byDevice(viewer, projectId),
      ]);
      return rows.map((row) => deviceView(row, newest, tags.get(row.id) ?? []));
    },

    get,

    async create(
      principal: Principal,
      projectId: string,
      input: { name: string; board: Board },
    ): Promise<CreatedDevice> {
      await visibleProject(principal, projectId);
      const { row, secret } = newDevice(projectId, input);
      await repos.devices.insert(row);
      await bus.publish("device.created", {
        actorId: principal.user.id,
        projectId,
        deviceId: row.id,
        name: input.name,
        board: input.board,
      });
      return created(row, secret, []);
    },

    /** Bulk provisioning: every device is added, or (on any failure) none. */
    async createMany(
      principal: Principal,
      projectId: string,
      input: { name: string; board: Board; tags: string[] }[],
    ): Promise<CreatedDevices> {
      await visibleProject(principal, projectId);
      const made = input.map((entry) => ({ ...newDevice(projectId, entry), tags: entry.tags }));
      await repos.devices.insertMany(made.map(({ row, tags }) => ({ ...row, tags })));
      for (const { row, tags } of made)
        await bus.publish("device.created", {
          actorId: principal.user.id,
          projectId,
          deviceId: row.id,
          name: row.name,
          board: row.board,
          ...(tags.length > 0 ? { tags } : {}),
        });
      return { devices: made.map(({ row, secret, tags }) => created(row, secret, tags)) };
    },

    async rename(principal: Principal, projectId: string, deviceId: string, name: string): Promise<Device> {
      const row = await repos.devices.rename(viewerOf(principal), projectId, deviceId, name, clock.now());
      if (!row) throw deviceNotFound();
      await bus.publish("device.renamed", { actorId: principal.user.id, projectId, deviceId, name });
      const tags = await repos.deviceTags.ofDevice(viewerOf(principal), projectId, deviceId);
      return deviceView(row, await firmware.newestVersion(), tags);
    },

    setTags: (principal: Principal, projectId: string, deviceId: string, tags: string[]) =>
      changeTags(principal, projectId, deviceId, () => tags),
    addTags: (principal: Principal, projectId: string, deviceId: string, tags: string[]) =>
      changeTags(principal, projectId, deviceId, (current) => [...current, ...tags]),
    removeTag: (principal: Principal, projectId: string, deviceId: string, tag: string) =>
      changeTags(principal, projectId, deviceId, (current) => current.filter((t) => t !== tag)),

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
