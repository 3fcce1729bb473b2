// A UF2 file for tests of the firmware release endpoints (issue 14, part B). Part A's
// `syntheticRelease` (firmware-release.ts) writes real binary info; this one only has to pass the
// server's checks, or fail them in chosen ways. The lead unifies the two when merging.
import type { Board } from "@sdk/protocol";

const families: Record<Board, number> = { pico_w: 0xe48bff56, pico2_w: 0xe48bff59 };
const flashBytes: Record<Board, number> = { pico_w: 2 * 1024 * 1024, pico2_w: 4 * 1024 * 1024 };

export interface FakeUf2Options {
  board: Board;
  /** Image bytes written from the start of flash (default 4 KiB: 16 blocks). */
  imageBytes?: number;
  /** Overrides the family id of every image block. */
  familyId?: number;
  /** Adds a block that writes at this address (e.g. the config sector). */
  extraBlockAt?: number;
  /** Fills the image with this byte (to make files with different hashes). */
  fill?: number;
}

/** The first flash address of the config sector: flash size − 2 × 4 KiB. */
export const fakeConfigSector = (board: Board) => 0x10000000 + flashBytes[board] - 2 * 4096;

/** A UF2 file like picotool writes (256-byte payloads, family id flag); pico2_w gets the RP2350-E10 absolute block first. */
export function fakeReleaseUf2(options: FakeUf2Options): Uint8Array {
  const { board, imageBytes = 4096, fill = 0xa5 } = options;
  const family = options.familyId ?? families[board];
  const blocks: { addr: number; family: number }[] = [];
  if (board === "pico2_w") blocks.push({ addr: 0x10ffff00, family: 0xe48bff57 });
  for (let at = 0; at < imageBytes; at += 256) blocks.push({ addr: 0x10000000 + at, family });
  if (options.extraBlockAt !== undefined) blocks.push({ addr: options.extraBlockAt, family });
  const out = new Uint8Array(blocks.length * 512);
  const view = new DataView(out.buffer);
  blocks.forEach((block, n) => {
    const at = n * 512;
    const absolute = block.family === 0xe48bff57;
    view.setUint32(at, 0x0a324655, true);
    view.setUint32(at + 4, 0x9e5d5157, true);
    view.setUint32(at + 8, 0x2000, true);
    view.setUint32(at + 12, block.addr, true);
    view.setUint32(at + 16, 256, true);
    view.setUint32(at + 20, absolute ? 0 : n - (board === "pico2_w" ? 1 : 0), true);
    view.setUint32(at + 24, absolute ? 1 : blocks.length - (board === "pico2_w" ? 1 : 0), true);
    view.setUint32(at + 28, block.family, true);
    out.fill(absolute ? 0xef : fill, at + 32, at + 32 + 256);
    view.setUint32(at + 508, 0x0ab16f30, true);
  });
  return out;
}
