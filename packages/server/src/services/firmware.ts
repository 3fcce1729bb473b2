import { createHash } from "node:crypto";
import {
  type Board,
  boardIds,
  compareFirmwareVersions,
  type FirmwareRelease,
  isFirmwareVersion,
} from "@sdk/protocol";
import { checkReleaseUf2, Uf2Error } from "@sdk/protocol/uf2";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { FirmwareRow } from "../repositories/firmware.ts";
import type { Repositories } from "../repositories/index.ts";
import type { FirmwareFiles } from "../storage/firmware-files.ts";
import type { Principal } from "./auth.ts";

/** Newest first, by semver precedence. */
const newestFirst = (a: string, b: string) => compareFirmwareVersions(b, a) ?? 0;

function parseRef(version: string, board: string): { version: string; board: Board } {
  if (!isFirmwareVersion(version)) {
    throw new AppError(
      "invalid_request",
      `Invalid request: version must be a semantic version like 1.2.3 (got "${version.slice(0, 64)}")`,
      { fields: [{ path: "version", message: "must be a semantic version like 1.2.3" }] },
    );
  }
  if (!(boardIds as string[]).includes(board)) {
    throw new AppError("invalid_request", `Invalid request: board must be one of ${boardIds.join(", ")}`, {
      fields: [{ path: "board", message: `must be one of ${boardIds.join(", ")}` }],
    });
  }
  return { version, board: board as Board };
}

function releasesOf(rows: FirmwareRow[]): FirmwareRelease[] {
  const versions = [...new Set(rows.map((r) => r.version))].sort(newestFirst);
  return versions.map((version, i) => ({
    version,
    newest: i === 0,
    boards: rows
      .filter((r) => r.version === version)
      .sort((a, b) => boardIds.indexOf(a.board) - boardIds.indexOf(b.board))
      .map((r) => ({ board: r.board, bytes: r.bytes, sha256: r.sha256 })),
  }));
}

/** What storing one UF2 did: `stored`, `unchanged` (the same bytes were there), or a refusal. */
export type StoreOutcome =
  | { kind: "stored" | "unchanged"; row: FirmwareRow }
  | { kind: "invalid"; reason: string }
  | { kind: "exists"; row: FirmwareRow };

/**
 * Firmware releases: a version plus one UF2 per board, stored under `DATA_DIR/firmware/` with a row
 * each. Releases never change once stored; the same bytes stored again are a no-op.
 *
 * In a cluster (`shared`) every UF2 stored is also written to the database (`firmwareImages`), so
 * a release uploaded through one instance downloads through any: an instance without the file
 * reads it from there (and keeps a copy under its DATA_DIR). Each instance still imports its own
 * FIRMWARE_DIR at boot, and then also puts in the database the files of its DATA_DIR that are not
 * there yet (releases uploaded before the server became a cluster).
 */
export function firmwareService(deps: {
  repos: Pick<Repositories, "firmware">;
  files: FirmwareFiles;
  bus: EventBus;
  clock: Clock;
  /** One instance of a cluster: UF2s go to the database as well. */
  shared?: boolean;
}) {
  const { repos, files, bus, clock } = deps;
  const share = async (version: string, board: Board, bytes: Uint8Array) => {
    if (deps.shared) await repos.firmware.putImage(version, board, Buffer.from(bytes).toString("base64"));
  };

  /**
   * The file under DATA_DIR, else (another instance stored it) the database's copy, kept here once
   * it matches the release's sha256. A copy that does not is never served: it is removed from the
   * database (an instance holding the file shares it again at boot, as does an upload of the same
   * UF2) and the request fails with a 500 the server log records.
   */
  async function read(row: FirmwareRow): Promise<Uint8Array | undefined> {
    const { version, board } = row;
    const local = await files.read(version, board);
    if (local) return local;
    const uf2 = await repos.firmware.image(version, board);
    if (uf2 === undefined) return undefined;
    const bytes = new Uint8Array(Buffer.from(uf2, "base64"));
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (sha256 !== row.sha256) {
      await repos.firmware.dropImage(version, board, uf2);
      throw new AppError(
        "internal_error",
        `The database's copy of firmware ${version} for ${board} is damaged (sha256 ${sha256.slice(0, 12)}…, the release's is ${row.sha256.slice(0, 12)}…), so it is not served; it was removed: upload the same UF2 again, or restart an instance that holds it under DATA_DIR/firmware`,
      );
    }
    await files.write(version, board, bytes);
    return bytes;
  }

  async function store(
    version: string,
    board: Board,
    bytes: Uint8Array,
    source: FirmwareRow["source"],
  ): Promise<StoreOutcome> {
    let check: ReturnType<typeof checkReleaseUf2>;
    try {
      check = checkReleaseUf2(bytes, board);
    } catch (error) {
      if (error instanceof Uf2Error) return { kind: "invalid", reason: error.message };
      throw error;
    }
    if (check.version !== null && check.version !== version) {
      return {
        kind: "invalid",
        reason: `the image says it is version ${check.version}, not ${version}`,
      };
    }
    const existing = await repos.firmware.find(version, board);
    if (existing) {
      if (existing.sha256 !== check.sha256) return { kind: "exists", row: existing };
      // The row is there; put the file back if someone removed it.
      if (!(await files.read(version, board))) await files.write(version, board, bytes);
      await share(version, board, bytes);
      return { kind: "unchanged", row: existing };
    }
    await files.write(version, board, bytes);
    const row: FirmwareRow = {
      version,
      board,
      bytes: check.bytes,
      sha256: check.sha256,
      source,
      createdAt: clock.now(),
    };
    await repos.firmware.insert(row, deps.shared ? Buffer.from(bytes).toString("base64") : undefined);
    return { kind: "stored", row };
  }

  async function release(version: string): Promise<FirmwareRelease> {
    const releases = releasesOf(await repos.firmware.list());
    return releases.find((r) => r.version === version)!;
  }

  return {
    list: async (): Promise<FirmwareRelease[]> => releasesOf(await repos.firmware.list()),

    /** The newest release's version, `null` when there is none. */
    async newestVersion(): Promise<string | null> {
      return (await repos.firmware.versions()).sort(newestFirst)[0] ?? null;
    },

    async download(
      versionParam: string,
      boardParam: string,
    ): Promise<{ bytes: Uint8Array; filename: string }> {
      const { version, board } = parseRef(versionParam, boardParam);
      const row = await repos.firmware.find(version, board);
      const bytes = row ? await read(row) : undefined;
      if (!bytes) throw new AppError("not_found", `No firmware release ${version} for ${board}`);
      return { bytes, filename: `sdk-${version}-${board}.uf2` };
    },

    /** An admin's own build (the route checked the role). */
    async upload(
      principal: Principal,
      versionParam: string,
      boardParam: string,
      bytes: Uint8Array,
    ): Promise<FirmwareRelease> {
      const { version, board } = parseRef(versionParam, boardParam);
      const outcome = await store(version, board, bytes, "upload");
      if (outcome.kind === "invalid") {
        throw new AppError("invalid_firmware", `Invalid firmware image for ${board}: ${outcome.reason}`);
      }
      if (outcome.kind === "exists") {
        throw new AppError(
          "firmware_exists",
          `Firmware ${version} already has a different UF2 for ${board} (sha256 ${outcome.row.sha256.slice(0, 12)}…); give your build a new version`,
        );
      }
      if (outcome.kind === "stored") {
        await bus.publish("firmware.uploaded", {
          actorId: principal.user.id,
          version,
          board,
          sha256: outcome.row.sha256,
        });
      }
      return release(version);
    },

    /** For the bundle import at boot. */
    storeBundled: (version: string, board: Board, bytes: Uint8Array) =>
      store(version, board, bytes, "bundle"),

    /**
     * At boot, in a cluster: the release files of this DATA_DIR the database has no copy of (from
     * before the cluster) are put there. Returns how many.
     */
    async shareStored(): Promise<number> {
      if (!deps.shared) return 0;
      let shared = 0;
      for (const { version, board } of await repos.firmware.withoutImage()) {
        const bytes = await files.read(version, board);
        if (!bytes) continue;
        await share(version, board, bytes);
        shared++;
      }
      return shared;
    },
  };
}
export type FirmwareService = ReturnType<typeof firmwareService>;
