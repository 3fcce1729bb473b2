import { createHash } from "node:crypto";
import type { Board } from "./hardware.ts";

/**
 * UF2 files for the boards: reading a release (the blocks, its binary info), checking it, and
 * composing the file `sdk flash` writes (the release image plus the config block), following
 * ../shared/FIRMWARE.md §1–§5. Node only (node:crypto): import it as "@sdk/protocol/uf2"; the
 * package's index, which the dashboard bundles, does not export it.
 *
 * Block layout (512 bytes, little-endian u32s): magicStart0, magicStart1, flags, targetAddr,
 * payloadSize, blockNo, numBlocks, familyId (with flag 0x2000), data[476], magicEnd.
 */

const blockBytes = 512;
const pageBytes = 256;
const sectorBytes = 4096;
const pagesPerSector = sectorBytes / pageBytes;
const dataOffset = 32;
const dataRoom = 476;
const magicStart0 = 0x0a324655;
const magicStart1 = 0x9e5d5157;
const magicEnd = 0x0ab16f30;
const xipBase = 0x10000000;

/** Block flags (uf2.h). */
export const uf2Flags = { notMainFlash: 0x1, familyIdPresent: 0x2000, extensionTags: 0x8000 } as const;

/** Family ids of the RP chips (uf2families.json, pico-sdk uf2.h). */
export const uf2Families = {
  rp2040: 0xe48bff56,
  absolute: 0xe48bff57,
  data: 0xe48bff58,
  rp2350ArmS: 0xe48bff59,
  rp2350Riscv: 0xe48bff5a,
  rp2350ArmNs: 0xe48bff5b,
} as const;

/** Where picotool's RP2350-E10 workaround block ("absolute block", family ABSOLUTE) writes. */
export const e10BlockAddress = 0x10ffff00;

export const boardFlash: Record<Board, { familyId: number; flashBytes: number; bootselBoardId: string }> = {
  pico_w: { familyId: uf2Families.rp2040, flashBytes: 2 * 1024 * 1024, bootselBoardId: "RPI-RP2" },
  pico2_w: { familyId: uf2Families.rp2350ArmS, flashBytes: 4 * 1024 * 1024, bootselBoardId: "RP2350" },
};

/** The flash address of the config sector: flash size − 2 × 4096 (the last sector is left to RP2350-E10). */
export function configSectorAddress(board: Board): number {
  return xipBase + boardFlash[board].flashBytes - 2 * sectorBytes;
}

/** A UF2 file that cannot be used; the message says exactly what is wrong. */
export class Uf2Error extends Error {
  override name = "Uf2Error";
}

export interface Uf2Block {
  flags: number;
  targetAddr: number;
  payloadSize: number;
  blockNo: number;
  numBlocks: number;
  /** The family id (with flag 0x2000), else the file size field. */
  familyId: number;
  /** payloadSize bytes. */
  data: Uint8Array;
}

const hex = (n: number) => `0x${(n >>> 0).toString(16).padStart(8, "0")}`;

/** The blocks of a UF2 file, in file order. Throws Uf2Error on a bad size or magic. */
export function parseUf2(bytes: Uint8Array): Uf2Block[] {
  if (bytes.length === 0) throw new Uf2Error("the UF2 file is empty");
  if (bytes.length % blockBytes !== 0) {
    throw new Uf2Error(
      `the UF2 file is ${bytes.length} bytes, not a multiple of ${blockBytes} (truncated?): block ${Math.floor(bytes.length / blockBytes)} is cut short`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const blocks: Uf2Block[] = [];
  for (let i = 0; i < bytes.length / blockBytes; i++) {
    const at = i * blockBytes;
    const word = (offset: number) => view.getUint32(at + offset, true);
    const where = `block ${i} (byte ${at})`;
    if (word(0) !== magicStart0 || word(4) !== magicStart1 || word(508) !== magicEnd) {
      throw new Uf2Error(
        `${where}: bad UF2 magic (${hex(word(0))} ${hex(word(4))} … ${hex(word(508))}, expected ${hex(magicStart0)} ${hex(magicStart1)} … ${hex(magicEnd)})`,
      );
    }
    const payloadSize = word(16);
    if (payloadSize > dataRoom)
      throw new Uf2Error(`${where}: payload size ${payloadSize} is more than ${dataRoom}`);
    blocks.push({
      flags: word(8),
      targetAddr: word(12),
      payloadSize,
      blockNo: word(20),
      numBlocks: word(24),
      familyId: word(28),
      data: bytes.slice(at + dataOffset, at + dataOffset + payloadSize),
    });
  }
  return blocks;
}

/** One 512-byte block: the header fields, the payload, zeros to the end magic. */
function encodeBlock(block: Uf2Block): Uint8Array {
  if (block.data.length > dataRoom) throw new Uf2Error(`a UF2 payload holds at most ${dataRoom} bytes`);
  const out = new Uint8Array(blockBytes);
  const view = new DataView(out.buffer);
  const words = [
    magicStart0,
    magicStart1,
    block.flags,
    block.targetAddr,
    block.payloadSize,
    block.blockNo,
    block.numBlocks,
    block.familyId,
  ];
  words.forEach((w, i) => {
    view.setUint32(i * 4, w >>> 0, true);
  });
  out.set(block.data, dataOffset);
  view.setUint32(508, magicEnd, true);
  return out;
}

/** The blocks as a UF2 file, fields as given (nothing renumbered or checked). */
export function encodeUf2(blocks: readonly Uf2Block[]): Uint8Array {
  const out = new Uint8Array(blocks.length * blockBytes);
  blocks.forEach((b, i) => {
    out.set(encodeBlock(b), i * blockBytes);
  });
  return out;
}

const hasFamily = (b: Uf2Block) => (b.flags & uf2Flags.familyIdPresent) !== 0;

/** picotool's RP2350-E10 block: family ABSOLUTE at 0x10FFFF00 (a 2-block transfer of its own that never completes). */
function isE10Block(b: Uf2Block): boolean {
  return hasFamily(b) && b.familyId === uf2Families.absolute && b.targetAddr === e10BlockAddress;
}

/** The board family's main-flash blocks. */
function imageBlocks(blocks: readonly Uf2Block[], board: Board): Uf2Block[] {
  const family = boardFlash[board].familyId;
  return blocks.filter((b) => hasFamily(b) && b.familyId === family && !(b.flags & uf2Flags.notMainFlash));
}

// ---------------------------------------------------------------- binary info

const binaryInfo = {
  markerStart: 0x7188ebf2,
  markerEnd: 0xe71aa390,
  typeIdAndInt: 5,
  typeIdAndString: 6,
  tagRaspberryPi: 0x5052,
  idProgramName: 0x02031c86,
  idProgramVersion: 0x11a9bc3a,
  idBoard: 0xb63cffbb,
  idBinaryEnd: 0x68f465de,
} as const;

/** What a release says about itself in its binary info (pico/binary_info), as picotool info shows it. */
export interface BinaryInfo {
  name?: string;
  version?: string;
  board?: string;
  /** `__flash_binary_end`: the address just past the image. */
  binaryEnd?: number;
}

/** Reads the flash image that the board family's pages describe. */
class FlashImage {
  readonly #pages = new Map<number, Uint8Array>();
  #copyTable: { src: number; dstStart: number; dstEnd: number }[] = [];

  constructor(blocks: readonly Uf2Block[]) {
    for (const b of blocks) {
      if (b.payloadSize !== pageBytes || b.targetAddr % pageBytes !== 0) continue;
      if (!this.#pages.has(b.targetAddr)) this.#pages.set(b.targetAddr, b.data);
    }
  }

  byte(addr: number): number | undefined {
    const mapped = this.#flashAddress(addr);
    if (mapped === undefined) return undefined;
    return this.#pages.get(mapped - (mapped % pageBytes))?.[mapped % pageBytes];
  }

  u16(addr: number): number | undefined {
    const b = [0, 1].map((i) => this.byte(addr + i));
    return b.some((x) => x === undefined) ? undefined : b[0]! | (b[1]! << 8);
  }

  u32(addr: number): number | undefined {
    const b = [0, 1, 2, 3].map((i) => this.byte(addr + i));
    return b.some((x) => x === undefined)
      ? undefined
      : (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }

  /** A NUL-terminated UTF-8 string (at most 512 bytes), or undefined if it is not all in the image. */
  string(addr: number): string | undefined {
    const out: number[] = [];
    for (let i = 0; i < 512; i++) {
      const b = this.byte(addr + i);
      if (b === undefined) return undefined;
      if (b === 0) return new TextDecoder().decode(Uint8Array.from(out));
      out.push(b);
    }
    return undefined;
  }

  /** `{src, dst_start, dst_end}` triples ended by src = 0: where data copied to RAM at boot lives in flash. */
  readCopyTable(addr: number): void {
    const table: { src: number; dstStart: number; dstEnd: number }[] = [];
    for (let i = 0; i < 64; i++) {
      const src = this.u32(addr + i * 12);
      if (!src) break;
      const dstStart = this.u32(addr + i * 12 + 4);
      const dstEnd = this.u32(addr + i * 12 + 8);
      if (dstStart === undefined || dstEnd === undefined) break;
      table.push({ src, dstStart, dstEnd });
    }
    this.#copyTable = table;
  }

  #flashAddress(addr: number): number | undefined {
    if (addr >= xipBase && addr < xipBase + 0x1000000) return addr;
    const copy = this.#copyTable.find((c) => addr >= c.dstStart && addr < c.dstEnd);
    return copy ? copy.src + (addr - copy.dstStart) : undefined;
  }
}

/** Where picotool looks for the binary info header: RP2040 skips the 256-byte boot2. */
const headerScan: Record<Board, { from: number; words: number }> = {
  pico_w: { from: xipBase + 0x100, words: 64 },
  pico2_w: { from: xipBase, words: 256 },
};

/** The program name, version, board and binary end a release's binary info declares ({} when it has none). */
export function readBinaryInfo(bytes: Uint8Array, board: Board): BinaryInfo {
  const image = new FlashImage(imageBlocks(parseUf2(bytes), board));
  const { from, words } = headerScan[board];
  let header: number | undefined;
  for (let i = 0; i < words && header === undefined; i++) {
    const at = from + i * 4;
    if (image.u32(at) === binaryInfo.markerStart && image.u32(at + 16) === binaryInfo.markerEnd) header = at;
  }
  if (header === undefined) return {};
  const start = image.u32(header + 4);
  const end = image.u32(header + 8);
  const copyTable = image.u32(header + 12);
  if (start === undefined || end === undefined || end < start || end - start > 4 * 4096) return {};
  if (copyTable) image.readCopyTable(copyTable);

  const info: BinaryInfo = {};
  const strings: Partial<Record<number, "name" | "version" | "board">> = {
    [binaryInfo.idProgramName]: "name",
    [binaryInfo.idProgramVersion]: "version",
    [binaryInfo.idBoard]: "board",
  };
  for (let p = start; p + 4 <= end; p += 4) {
    const entry = image.u32(p);
    if (entry === undefined) continue;
    const type = image.u16(entry);
    const tag = image.u16(entry + 2);
    const id = image.u32(entry + 4);
    const value = image.u32(entry + 8);
    if (tag !== binaryInfo.tagRaspberryPi || id === undefined || value === undefined) continue;
    if (type === binaryInfo.typeIdAndString) {
      const key = strings[id];
      if (key && info[key] === undefined) {
        const text = image.string(value);
        if (text !== undefined) info[key] = text;
      }
    } else if (
      type === binaryInfo.typeIdAndInt &&
      id === binaryInfo.idBinaryEnd &&
      info.binaryEnd === undefined
    ) {
      info.binaryEnd = value;
    }
  }
  return info;
}

// ---------------------------------------------------------------- release check

export interface ReleaseCheck {
  /** From the binary info; null when the image declares none. */
  version: string | null;
  board: Board;
  /** The file's size. */
  bytes: number;
  /** SHA-256 of the file, lowercase hex. */
  sha256: string;
  /** The address just past the image's last page (always ≤ configSectorAddress(board)). */
  imageEnd: number;
}

/**
 * Checks that a file is a release image for the board: UF2 magics and 512-byte blocks, payload
 * 256, the board's family (flag 0x2000) on every block but picotool's RP2350-E10 block, one
 * numBlocks with blockNos 0..N−1 all present, every page 256-aligned, in flash and below the
 * config sector. Throws Uf2Error saying what is wrong.
 */
export function checkReleaseUf2(bytes: Uint8Array, board: Board): ReleaseCheck {
  const blocks = parseUf2(bytes);
  const { familyId } = boardFlash[board];
  const config = configSectorAddress(board);
  let numBlocks: number | undefined;
  const seenBlockNo = new Set<number>();
  const seenAddr = new Set<number>();
  let imageEnd = xipBase;
  blocks.forEach((b, i) => {
    const where = `block ${i}`;
    if (isE10Block(b)) return;
    if (!hasFamily(b)) throw new Uf2Error(`${where}: no family id (flag 0x2000 is not set)`);
    if (b.familyId !== familyId) {
      throw new Uf2Error(`${where}: family ${hex(b.familyId)} is not ${board}'s (${hex(familyId)})`);
    }
    if (b.flags & uf2Flags.notMainFlash) throw new Uf2Error(`${where}: flagged "not main flash"`);
    if (b.payloadSize !== pageBytes) {
      throw new Uf2Error(`${where}: payload size ${b.payloadSize}, the bootroms accept only ${pageBytes}`);
    }
    numBlocks ??= b.numBlocks;
    if (b.numBlocks !== numBlocks) {
      throw new Uf2Error(
        `${where}: numBlocks ${b.numBlocks} differs from ${numBlocks} in the blocks before it`,
      );
    }
    if (b.blockNo >= b.numBlocks)
      throw new Uf2Error(`${where}: blockNo ${b.blockNo} is not below numBlocks ${numBlocks}`);
    if (seenBlockNo.has(b.blockNo)) throw new Uf2Error(`${where}: blockNo ${b.blockNo} appears twice`);
    seenBlockNo.add(b.blockNo);
    if (b.targetAddr % pageBytes !== 0) {
      throw new Uf2Error(`${where}: target address ${hex(b.targetAddr)} is not 256-aligned`);
    }
    if (b.targetAddr < xipBase || b.targetAddr >= xipBase + boardFlash[board].flashBytes) {
      throw new Uf2Error(
        `${where}: target address ${hex(b.targetAddr)} is not in ${board}'s flash (${hex(xipBase)}–${hex(xipBase + boardFlash[board].flashBytes)})`,
      );
    }
    if (b.targetAddr + pageBytes > config) {
      throw new Uf2Error(
        `${where}: target address ${hex(b.targetAddr)} is not below the config sector at ${hex(config)} (an image must end before it)`,
      );
    }
    if (seenAddr.has(b.targetAddr))
      throw new Uf2Error(`${where}: target address ${hex(b.targetAddr)} appears twice`);
    seenAddr.add(b.targetAddr);
    imageEnd = Math.max(imageEnd, b.targetAddr + pageBytes);
  });
  if (numBlocks === undefined)
    throw new Uf2Error(`the file holds no ${board} blocks (family ${hex(familyId)})`);
  if (seenBlockNo.size !== numBlocks) {
    throw new Uf2Error(`the file holds ${seenBlockNo.size} of its ${numBlocks} blocks`);
  }
  const info = readBinaryInfo(bytes, board);
  if (info.binaryEnd !== undefined && info.binaryEnd > config) {
    throw new Uf2Error(
      `the binary info's binary end ${hex(info.binaryEnd)} reaches the config sector at ${hex(config)}`,
    );
  }
  return {
    version: info.version ?? null,
    board,
    bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    imageEnd,
  };
}

// ---------------------------------------------------------------- the file `sdk flash` writes

/**
 * The release image plus the config block as one UF2 both bootroms write correctly
 * (FIRMWARE.md §2.5): picotool's E10 block (if any) first and unchanged; then the image's pages
 * in address order, each touched 4 KiB sector completed with 0xFF pages; then the 16 config
 * pages at configSectorAddress(board). Every block but the E10 one is numbered 0..N−1 of N, with
 * flags 0x2000, the board's family and payload 256, so each group of 16 blockNos is one whole
 * sector (RP2040-E14: the first block of a group erases its own sector).
 */
export function composeFlashUf2(release: Uint8Array, board: Board, configBlock: Uint8Array): Uint8Array {
  if (configBlock.length !== sectorBytes) {
    throw new Uf2Error(`the config block is ${configBlock.length} bytes, not one ${sectorBytes}-byte sector`);
  }
  checkReleaseUf2(release, board);
  const blocks = parseUf2(release);
  const e10 = blocks.findIndex(isE10Block);
  const pages = new Map(imageBlocks(blocks, board).map((b) => [b.targetAddr, b.data]));
  const sectors = [...new Set([...pages.keys()].map((a) => a - (a % sectorBytes)))].sort((a, b) => a - b);
  const config = configSectorAddress(board);
  if (sectors.length > 0 && sectors.at(-1)! + sectorBytes > config) {
    throw new Uf2Error(`the image's last sector reaches the config sector at ${hex(config)}`);
  }

  const payloads: { addr: number; data: Uint8Array }[] = [];
  for (const sector of sectors) {
    for (let p = 0; p < pagesPerSector; p++) {
      const addr = sector + p * pageBytes;
      payloads.push({ addr, data: pages.get(addr) ?? new Uint8Array(pageBytes).fill(0xff) });
    }
  }
  for (let p = 0; p < pagesPerSector; p++) {
    payloads.push({
      addr: config + p * pageBytes,
      data: configBlock.subarray(p * pageBytes, (p + 1) * pageBytes),
    });
  }

  const { familyId } = boardFlash[board];
  const composed = payloads.map(
    ({ addr, data }, blockNo): Uf2Block => ({
      flags: uf2Flags.familyIdPresent,
      targetAddr: addr,
      payloadSize: pageBytes,
      blockNo,
      numBlocks: payloads.length,
      familyId,
      data,
    }),
  );
  const head = e10 >= 0 ? release.subarray(e10 * blockBytes, (e10 + 1) * blockBytes) : new Uint8Array(0);
  const out = new Uint8Array(head.length + composed.length * blockBytes);
  out.set(head, 0);
  out.set(encodeUf2(composed), head.length);
  return out;
}

/** The 4096 bytes a UF2 writes to the board's config sector. Throws Uf2Error when any of its 16 pages is missing. */
export function extractConfigSector(uf2: Uint8Array, board: Board): Uint8Array {
  const config = configSectorAddress(board);
  const out = new Uint8Array(sectorBytes);
  const found = new Set<number>();
  for (const b of imageBlocks(parseUf2(uf2), board)) {
    const offset = b.targetAddr - config;
    if (offset < 0 || offset >= sectorBytes || b.payloadSize !== pageBytes || offset % pageBytes !== 0)
      continue;
    if (found.has(offset)) continue;
    found.add(offset);
    out.set(b.data, offset);
  }
  if (found.size !== pagesPerSector) {
    const missing = Array.from({ length: pagesPerSector }, (_, p) => p * pageBytes).filter(
      (o) => !found.has(o),
    );
    throw new Uf2Error(
      `the UF2 has ${found.size} of the config sector's ${pagesPerSector} pages at ${hex(config)} (missing: ${missing.map((o) => hex(config + o)).join(", ")})`,
    );
  }
  return out;
}
