// A firmware release UF2 like picotool writes for the sdk firmware, with no toolchain: a
// deterministic filler image carrying a real binary-info header, entries and strings where a
// pico-sdk 2.2.0 build puts them, and (pico2_w) picotool's RP2350-E10 block first.
import type { Board } from "@sdk/protocol";
import {
  boardFlash,
  e10BlockAddress,
  encodeUf2,
  type Uf2Block,
  uf2Families,
  uf2Flags,
} from "@sdk/protocol/uf2";

const xipBase = 0x10000000;
const pageBytes = 256;
/** Where the binary info header sits in the built sdk firmware (picotool info, FIRMWARE.md §5). */
const headerAddress: Record<Board, number> = { pico_w: 0x100001d4, pico2_w: 0x10000124 };
/** Where .data is copied to at boot (the copy table's one row). */
const ramBase = 0x20000110;

export interface SyntheticReleaseOptions {
  board: Board;
  version: string;
  /** The image's size from the start of flash (`__flash_binary_end` − 0x10000000). */
  imageBytes?: number;
}

/** A filler byte stream that differs per board, version and address (xorshift32). */
function filler(seedText: string, length: number): Uint8Array {
  let seed = 0x811c9dc5;
  for (const c of seedText) seed = Math.imul(seed ^ c.charCodeAt(0), 0x01000193) >>> 0;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    seed >>>= 0;
    out[i] = seed & 0xff;
  }
  return out;
}

/**
 * The release UF2 for a board: image pages from 0x10000000 to 0x10000000 + imageBytes (the
 * last page zero-padded, as picotool does), blockNos 0..N−1 of N in address order, family
 * RP2040 (pico_w) or RP2350 ARM-S (pico2_w, after the E10 block). Its binary info declares the
 * program name "sdk firmware", the version, the board, the SDK version and the binary end.
 */
export function syntheticRelease({
  board,
  version,
  imageBytes = 40_000,
}: SyntheticReleaseOptions): Uint8Array {
  const encoder = new TextEncoder();
  const image = filler(`${board}/${version}`, imageBytes);
  const view = new DataView(image.buffer);
  const put32 = (addr: number, value: number) => view.setUint32(addr - xipBase, value >>> 0, true);

  // .rodata strings, then .data (its flash copy), then the .binary_info entries and their
  // pointer array, at the end of the image as in memmap_default.ld.
  const strings = ["sdk firmware", version, board, "2.2.0"].map((s) => encoder.encode(`${s}\0`));
  const entries = [
    { type: 6, id: 0x02031c86, string: 0 },
    { type: 6, id: 0x11a9bc3a, string: 1 },
    { type: 6, id: 0xb63cffbb, string: 2 },
    { type: 6, id: 0x5360b3ab, string: 3 },
    { type: 5, id: 0x68f465de, string: -1 },
  ];
  const dataBytes = 64;
  const stringBytes = strings.reduce((n, s) => n + s.length, 0);
  const tailBytes = Math.ceil(stringBytes / 4) * 4 + dataBytes + entries.length * (12 + 4) + 3 * 4 + 4;
  const imageEnd = xipBase + imageBytes;
  const firstPayload = headerAddress[board] + 5 * 4;
  let at = (imageEnd - tailBytes) & ~3;
  if (at < firstPayload + 256) {
    throw new Error(`syntheticRelease: imageBytes ${imageBytes} leaves no room for the binary info`);
  }

  const stringAddr: number[] = [];
  for (const s of strings) {
    stringAddr.push(at);
    image.set(s, at - xipBase);
    at += s.length;
  }
  at = Math.ceil(at / 4) * 4;
  const dataFlash = at;
  at += dataBytes;
  const entryAddr: number[] = [];
  for (const e of entries) {
    entryAddr.push(at);
    view.setUint16(at - xipBase, e.type, true);
    view.setUint16(at - xipBase + 2, 0x5052, true);
    put32(at + 4, e.id);
    put32(at + 8, e.string >= 0 ? stringAddr[e.string]! : imageEnd);
    at += 12;
  }
  const binaryInfoStart = at;
  for (const addr of entryAddr) {
    put32(at, addr);
    at += 4;
  }
  const binaryInfoEnd = at;
  const copyTable = at;
  put32(at, dataFlash);
  put32(at + 4, ramBase);
  put32(at + 8, ramBase + dataBytes);
  put32(at + 12, 0);

  const header = headerAddress[board];
  for (const [i, word] of [0x7188ebf2, binaryInfoStart, binaryInfoEnd, copyTable, 0xe71aa390].entries()) {
    put32(header + i * 4, word);
  }

  const { familyId } = boardFlash[board];
  const pages = Math.ceil(imageBytes / pageBytes);
  const blocks: Uf2Block[] = [];
  if (board === "pico2_w") {
    const data = new Uint8Array(pageBytes + 8).fill(0xef);
    new DataView(data.buffer).setUint32(pageBytes, 0x9957e304, true);
    data.fill(0, pageBytes + 4);
    blocks.push({
      flags: uf2Flags.familyIdPresent | uf2Flags.extensionTags,
      targetAddr: e10BlockAddress,
      payloadSize: pageBytes,
      blockNo: 0,
      numBlocks: 2,
      familyId: uf2Families.absolute,
      data,
    });
  }
  for (let p = 0; p < pages; p++) {
    const data = new Uint8Array(pageBytes);
    data.set(image.subarray(p * pageBytes, (p + 1) * pageBytes));
    blocks.push({
      flags: uf2Flags.familyIdPresent,
      targetAddr: xipBase + p * pageBytes,
      payloadSize: pageBytes,
      blockNo: p,
      numBlocks: pages,
      familyId,
      data,
    });
  }
  return encodeUf2(blocks);
}
