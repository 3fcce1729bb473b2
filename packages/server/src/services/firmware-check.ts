// TEMPORARY: a stand-in for `checkReleaseUf2` and `Uf2Error` from `@sdk/protocol/uf2` (issue 14,
// part A), with the same signature. When merging, delete this file and import both from
// "@sdk/protocol/uf2" in services/firmware.ts (the only user). It checks the UF2 framing, the
// family id and the addresses, and never reads binary info (`version` is always null).
import { createHash } from "node:crypto";
import type { Board } from "@sdk/protocol";

export class Uf2Error extends Error {}

const blockBytes = 512;
const maxPayload = 476;
const magics = { start0: 0x0a324655, start1: 0x9e5d5157, end: 0x0ab16f30 } as const;
const flagNotMainFlash = 0x1;
const flagFamilyId = 0x2000;
/** RP2350-E10 workaround blocks (picotool puts one first): "absolute" family, never written. */
const absoluteFamily = 0xe48bff57;
const flashBase = 0x10000000;
const boardFlash: Record<Board, { familyId: number; flashBytes: number }> = {
  pico_w: { familyId: 0xe48bff56, flashBytes: 2 * 1024 * 1024 },
  pico2_w: { familyId: 0xe48bff59, flashBytes: 4 * 1024 * 1024 },
};

const hex = (n: number) => `0x${n.toString(16).padStart(8, "0")}`;

export function checkReleaseUf2(
  bytes: Uint8Array,
  board: Board,
): { version: string | null; board: Board; bytes: number; sha256: string; imageEnd: number } {
  if (bytes.length === 0 || bytes.length % blockBytes !== 0) {
    throw new Uf2Error(`not a UF2 file: ${bytes.length} bytes is not a whole number of 512-byte blocks`);
  }
  const { familyId, flashBytes } = boardFlash[board];
  const configSector = flashBase + flashBytes - 2 * 4096;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let imageEnd = 0;
  for (let n = 0; n < bytes.length / blockBytes; n++) {
    const at = n * blockBytes;
    const word = (offset: number) => view.getUint32(at + offset, true);
    if (word(0) !== magics.start0 || word(4) !== magics.start1 || word(508) !== magics.end) {
      throw new Uf2Error(`not a UF2 file: bad magic number in block ${n}`);
    }
    const [flags, target, size, family] = [word(8), word(12), word(16), word(28)];
    if (flags & flagNotMainFlash) continue;
    if (!(flags & flagFamilyId)) throw new Uf2Error(`block ${n} has no family id`);
    if (family === absoluteFamily) continue;
    if (family !== familyId) {
      throw new Uf2Error(
        `block ${n} has family id ${hex(family)}, not ${hex(familyId)} as ${board} needs: built for another chip?`,
      );
    }
    if (size === 0 || size > maxPayload) throw new Uf2Error(`block ${n} has a payload of ${size} bytes`);
    if (target < flashBase || target + size > configSector) {
      throw new Uf2Error(
        `block ${n} writes at ${hex(target)}: outside flash below the config sector (${hex(flashBase)}–${hex(configSector)})`,
      );
    }
    imageEnd = Math.max(imageEnd, target + size);
  }
  if (imageEnd === 0) throw new Uf2Error(`no block of the file writes ${board} flash`);
  return {
    version: null,
    board,
    bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    imageEnd,
  };
}
