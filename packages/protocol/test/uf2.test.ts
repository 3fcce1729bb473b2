// The UF2 module (uf2.ts): reading and checking releases, their binary info, and the file
// `sdk flash` composes, written through models of both bootroms built here from
// ../shared/FIRMWARE.md §2.1 (RP2040, tag b2) and §2.2–2.3 (RP2350, tag A2).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { syntheticRelease } from "@sdk/test-helpers";
import { type Board, boardIds, type DeviceConfig, encodeConfigBlock } from "../src/index.ts";
import {
  boardFlash,
  checkReleaseUf2,
  composeFlashUf2,
  configSectorAddress,
  e10BlockAddress,
  encodeUf2,
  extractConfigSector,
  parseUf2,
  readBinaryInfo,
  type Uf2Block,
  Uf2Error,
  uf2Families,
  uf2Flags,
} from "../src/uf2.ts";

const xipBase = 0x10000000;
const page = 256;
const sector = 4096;

const config = (secret: string): Uint8Array =>
  encodeConfigBlock({
    deviceId: "dev_abcdefghij234567klmn",
    secret,
    wifiSsid: "workshop",
    wifiPassphrase: "12345678",
    wifiCountry: "DE",
    server: "https://sdk.example.com",
  } satisfies DeviceConfig);

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const next = random(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A file's 512-byte sectors, as the OS hands them to the drive. */
const chunks = (uf2: Uint8Array) =>
  Array.from({ length: uf2.length / 512 }, (_, i) => uf2.subarray(i * 512, (i + 1) * 512));

const rewrite = (uf2: Uint8Array, change: (blocks: Uf2Block[]) => Uf2Block[] | undefined) => {
  const blocks = parseUf2(uf2);
  return encodeUf2(change(blocks) ?? blocks);
};

// ---------------------------------------------------------------- bootrom models

/** The fields the models read from a sector themselves (not through parseUf2, the code under test). */
type Header = Uf2Block;

/** The block's fields if all three magics match (else the ROM ignores the sector). */
function uf2Header(chunk: Uint8Array): Header | undefined {
  const v = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (v.getUint32(0, true) !== 0x0a324655 || v.getUint32(4, true) !== 0x9e5d5157) return undefined;
  if (v.getUint32(508, true) !== 0x0ab16f30) return undefined;
  const w = (o: number) => v.getUint32(o, true);
  return {
    flags: w(8),
    targetAddr: w(12),
    payloadSize: w(16),
    blockNo: w(20),
    numBlocks: w(24),
    familyId: w(28),
    data: chunk.subarray(32, 32 + page),
  };
}

/** One BOOTSEL session writing to a board's flash, which persists across sessions. */
interface Rom {
  write(chunk: Uint8Array): void;
  /** All numBlocks blocks of a transfer arrived: the board rebooted and the drive vanished. */
  readonly rebooted: boolean;
}

const erase = (flash: Uint8Array, offset: number) => {
  const start = offset - (offset % sector);
  flash.fill(0xff, start, start + sector);
};
/** NOR flash programming only clears bits: an unerased page ends up old AND new. */
const program = (flash: Uint8Array, offset: number, data: Uint8Array) => {
  for (let i = 0; i < page; i++) flash[offset + i]! &= data[i]!;
};

/** RP2040 bootrom b2: RP2040 family only; erase decided per group of 16 blockNos (RP2040-E14). */
function rp2040Rom(flash: Uint8Array): Rom {
  let numBlocks = -1;
  const received = new Set<number>();
  const erasedGroups = new Set<number>();
  let rebooted = false;
  const reset = (n: number) => {
    numBlocks = n;
    received.clear();
    erasedGroups.clear();
  };
  return {
    get rebooted() {
      return rebooted;
    },
    write(chunk) {
      if (rebooted) return;
      const b = uf2Header(chunk);
      if (!b || !(b.flags & uf2Flags.familyIdPresent) || b.familyId !== uf2Families.rp2040) return;
      if (b.flags & uf2Flags.notMainFlash || b.payloadSize !== page) return;
      if (b.blockNo >= b.numBlocks || b.targetAddr % page !== 0) return reset(-1);
      if (b.numBlocks !== numBlocks) reset(b.numBlocks);
      if (received.has(b.blockNo)) return;
      const offset = b.targetAddr - xipBase;
      if (offset < 0 || offset + page > flash.length) return reset(-1);
      const group = Math.floor((b.blockNo * page) / sector);
      if (!erasedGroups.has(group)) {
        erasedGroups.add(group);
        erase(flash, offset);
      }
      program(flash, offset, b.data);
      received.add(b.blockNo);
      if (received.size === numBlocks) rebooted = true;
    },
  };
}

/** RP2350 bootrom A2 with no partition table: ABSOLUTE, ARM_S and RISCV; erase per sector address. */
function rp2350Rom(flash: Uint8Array): Rom {
  const accepted: number[] = [uf2Families.absolute, uf2Families.rp2350ArmS, uf2Families.rp2350Riscv];
  let family = -1;
  let numBlocks = -1;
  const received = new Set<number>();
  const erasedSectors = new Set<number>();
  let rebooted = false;
  return {
    get rebooted() {
      return rebooted;
    },
    write(chunk) {
      if (rebooted) return;
      const b = uf2Header(chunk);
      if (!b || !(b.flags & uf2Flags.familyIdPresent) || !accepted.includes(b.familyId)) return;
      if (b.flags & uf2Flags.notMainFlash || b.payloadSize !== page) return;
      if (b.familyId !== family || b.numBlocks !== numBlocks) {
        family = b.familyId;
        numBlocks = b.numBlocks;
        received.clear();
        erasedSectors.clear();
      }
      if (b.blockNo >= numBlocks || received.has(b.blockNo) || b.targetAddr % page !== 0) return;
      // The chip ignores address bits above its size: 0x10FFFF00 lands in the last sector.
      const offset = (b.targetAddr - xipBase) & (flash.length - 1);
      const sectorStart = offset - (offset % sector);
      if (!erasedSectors.has(sectorStart)) {
        erasedSectors.add(sectorStart);
        erase(flash, offset);
      }
      program(flash, offset, b.data);
      received.add(b.blockNo);
      if (received.size === numBlocks) rebooted = true;
    },
  };
}

const roms: Record<Board, (flash: Uint8Array) => Rom> = { pico_w: rp2040Rom, pico2_w: rp2350Rom };

/** A board that ran some older firmware: its flash holds junk everywhere (so a missing erase shows). */
function usedFlash(board: Board): Uint8Array {
  const next = random(7);
  return Uint8Array.from({ length: boardFlash[board].flashBytes }, () => Math.floor(next() * 256));
}

/** Writes the sectors in this order in one BOOTSEL session; true when the board rebooted. */
function flashWith(board: Board, flash: Uint8Array, order: readonly Uint8Array[]): boolean {
  const rom = roms[board](flash);
  for (const chunk of order) rom.write(chunk);
  return rom.rebooted;
}

/** Orders an OS might write a file in: as is, and shuffled with some sectors written twice (E10 first, see below). */
function orders(uf2: Uint8Array): Uint8Array[][] {
  const all = chunks(uf2);
  const e10 = all.filter((c) => uf2Header(c)!.familyId === uf2Families.absolute);
  const rest = all.filter((c) => !e10.includes(c));
  const out = [all];
  for (const seed of [1, 2, 3]) out.push([...e10, ...shuffled(rest, seed)]);
  const twice = shuffled(rest, 4);
  out.push([...e10, ...twice.flatMap((c, i) => (i % 5 === 0 ? [c, c] : [c]))]);
  return out;
}

/** The release's image pages, by address. */
function releasePages(release: Uint8Array, board: Board): Map<number, Uint8Array> {
  return new Map(
    parseUf2(release)
      .filter((b) => b.familyId === boardFlash[board].familyId)
      .map((b) => [b.targetAddr, b.data]),
  );
}

function assertImage(flash: Uint8Array, release: Uint8Array, board: Board) {
  for (const [addr, data] of releasePages(release, board)) {
    const offset = addr - xipBase;
    assert.deepEqual(flash.subarray(offset, offset + page), data, `page ${addr.toString(16)}`);
  }
}

const configIn = (flash: Uint8Array, board: Board) => {
  const offset = configSectorAddress(board) - xipBase;
  return flash.slice(offset, offset + sector);
};

// ---------------------------------------------------------------- tests

describe("uf2: boards", () => {
  test("families, flash sizes and config sectors", () => {
    assert.deepEqual(boardFlash.pico_w, {
      familyId: 0xe48bff56,
      flashBytes: 2 * 1024 * 1024,
      bootselBoardId: "RPI-RP2",
    });
    assert.deepEqual(boardFlash.pico2_w, {
      familyId: 0xe48bff59,
      flashBytes: 4 * 1024 * 1024,
      bootselBoardId: "RP2350",
    });
    assert.equal(configSectorAddress("pico_w"), 0x101fe000);
    assert.equal(configSectorAddress("pico2_w"), 0x103fe000);
  });
});

describe("uf2: parse and check a release", () => {
  const release = syntheticRelease({ board: "pico_w", version: "1.2.3" });
  const throwsUf2 = (fn: () => unknown, message: RegExp) =>
    assert.throws(fn, (e: unknown) => e instanceof Uf2Error && message.test(e.message));

  test("the synthetic releases pass, and the check reports size, sha256, version and image end", () => {
    for (const board of boardIds) {
      for (const imageBytes of [40_000, 4096, 123_457]) {
        const bytes = syntheticRelease({ board, version: "2.0.0-rc.1", imageBytes });
        assert.deepEqual(checkReleaseUf2(bytes, board), {
          version: "2.0.0-rc.1",
          board,
          bytes: bytes.length,
          sha256: createHash("sha256").update(bytes).digest("hex"),
          imageEnd: xipBase + Math.ceil(imageBytes / page) * page,
        });
      }
    }
    const pico2 = parseUf2(syntheticRelease({ board: "pico2_w", version: "1.0.0" }));
    assert.equal(pico2[0]!.targetAddr, e10BlockAddress);
    assert.equal(pico2[0]!.familyId, uf2Families.absolute);
    assert.equal(pico2[0]!.numBlocks, 2);
  });

  test("a truncated file, an empty file and bad magics", () => {
    throwsUf2(
      () => parseUf2(release.subarray(0, release.length - 100)),
      /not a multiple of 512 \(truncated\?\)/,
    );
    throwsUf2(() => checkReleaseUf2(release.subarray(0, release.length - 1), "pico_w"), /truncated/);
    throwsUf2(() => parseUf2(new Uint8Array(0)), /empty/);
    for (const offset of [0, 4, 508]) {
      const bad = release.slice();
      bad[3 * 512 + offset]! ^= 0xff;
      throwsUf2(() => checkReleaseUf2(bad, "pico_w"), /^block 3 \(byte 1536\): bad UF2 magic/);
    }
  });

  test("the wrong family: the other board's release, or one foreign block", () => {
    throwsUf2(
      () => checkReleaseUf2(release, "pico2_w"),
      /block 0: family 0xe48bff56 is not pico2_w's \(0xe48bff59\)/,
    );
    const pico2 = syntheticRelease({ board: "pico2_w", version: "1.0.0" });
    throwsUf2(() => checkReleaseUf2(pico2, "pico_w"), /block 1: family 0xe48bff59 is not pico_w's/);
    const oneForeign = rewrite(release, (bs) => {
      bs[5]!.familyId = uf2Families.rp2350Riscv;
    });
    throwsUf2(() => checkReleaseUf2(oneForeign, "pico_w"), /block 5: family 0xe48bff5a/);
    const noFlag = rewrite(release, (bs) => {
      bs[2]!.flags = 0;
    });
    throwsUf2(() => checkReleaseUf2(noFlag, "pico_w"), /block 2: no family id/);
    const absoluteElsewhere = rewrite(pico2, (bs) => {
      bs[0]!.targetAddr = 0x103fe000;
    });
    throwsUf2(
      () => checkReleaseUf2(absoluteElsewhere, "pico2_w"),
      /block 0: family 0xe48bff57 is not pico2_w's/,
    );
  });

  test("an address in the config sector, the last sector, RAM, or not 256-aligned", () => {
    for (const [board, addr] of [
      ["pico_w", 0x101fe000],
      ["pico_w", 0x101fef00],
      ["pico_w", 0x101ff000],
      ["pico2_w", 0x103fe000],
      ["pico2_w", 0x103fff00],
    ] as const) {
      const bytes = rewrite(syntheticRelease({ board, version: "1.0.0" }), (bs) => {
        bs.at(-1)!.targetAddr = addr;
      });
      throwsUf2(
        () => checkReleaseUf2(bytes, board),
        /target address 0x[0-9a-f]+ is not below the config sector at 0x10[13]fe000/,
      );
    }
    const ram = rewrite(release, (bs) => {
      bs[1]!.targetAddr = 0x20000000;
    });
    throwsUf2(
      () => checkReleaseUf2(ram, "pico_w"),
      /block 1: target address 0x20000000 is not in pico_w's flash \(0x10000000–0x10200000\)/,
    );
    const unaligned = rewrite(release, (bs) => {
      bs[1]!.targetAddr += 4;
    });
    throwsUf2(
      () => checkReleaseUf2(unaligned, "pico_w"),
      /block 1: target address 0x10000104 is not 256-aligned/,
    );
  });

  test("mixed numBlocks, a missing block, a repeated blockNo, a payload that is not 256", () => {
    const mixed = rewrite(release, (bs) => {
      bs[10]!.numBlocks += 16;
    });
    throwsUf2(() => checkReleaseUf2(mixed, "pico_w"), /block 10: numBlocks 173 differs from 157/);
    const missing = rewrite(release, (bs) => bs.filter((_, i) => i !== 20));
    throwsUf2(() => checkReleaseUf2(missing, "pico_w"), /holds 156 of its 157 blocks/);
    const repeated = rewrite(release, (bs) => {
      bs[21]!.blockNo = 20;
    });
    throwsUf2(() => checkReleaseUf2(repeated, "pico_w"), /block 21: blockNo 20 appears twice/);
    const short = rewrite(release, (bs) => {
      bs[3] = { ...bs[3]!, payloadSize: 128, data: bs[3]!.data.subarray(0, 128) };
    });
    throwsUf2(() => checkReleaseUf2(short, "pico_w"), /block 3: payload size 128/);
  });
});

describe("uf2: binary info", () => {
  test("name, version, board and binary end round trip through a synthetic release", () => {
    for (const board of boardIds) {
      for (const [version, imageBytes] of [
        ["0.1.0", 40_000],
        ["10.20.30-beta.4+build.5", 300_001],
      ] as const) {
        const bytes = syntheticRelease({ board, version, imageBytes });
        assert.deepEqual(readBinaryInfo(bytes, board), {
          name: "sdk firmware",
          version,
          board,
          binaryEnd: xipBase + imageBytes,
        });
        // The file sdk flash writes still carries it.
        assert.equal(readBinaryInfo(composeFlashUf2(bytes, board, config("s")), board).version, version);
      }
    }
  });

  test("an image without binary info: no version, still a valid release", () => {
    const bytes = rewrite(syntheticRelease({ board: "pico_w", version: "1.0.0" }), (bs) => {
      for (const b of bs) b.data = new Uint8Array(page);
    });
    assert.deepEqual(readBinaryInfo(bytes, "pico_w"), {});
    assert.equal(checkReleaseUf2(bytes, "pico_w").version, null);
  });

  test("pointers into RAM are read through the copy table", () => {
    // Header at 0x10000100; entry pointers at 0x10000200 (one in flash, one in RAM); the copy
    // table at 0x10000300 maps RAM 0x20000000–0x20000040 to flash 0x10000400.
    const image = new Uint8Array(sector);
    const v = new DataView(image.buffer);
    const put = (addr: number, ...words: number[]) => {
      for (const [i, w] of words.entries()) v.setUint32(addr - xipBase + i * 4, w >>> 0, true);
    };
    const text = (addr: number, s: string) => image.set(new TextEncoder().encode(`${s}\0`), addr - xipBase);
    put(0x10000100, 0x7188ebf2, 0x10000200, 0x10000208, 0x10000300, 0xe71aa390);
    put(0x10000200, 0x10000220, 0x20000020);
    put(0x10000220, 0x50520006, 0x11a9bc3a, 0x20000010); // version → a string in RAM
    put(0x10000300, 0x10000400, 0x20000000, 0x20000040, 0);
    text(0x10000410, "9.9.9");
    put(0x10000420, 0x50520006, 0x02031c86, 0x10000500); // an entry in RAM → a string in flash
    text(0x10000500, "copied");
    const bytes = encodeUf2(
      Array.from({ length: sector / page }, (_, p) => ({
        flags: uf2Flags.familyIdPresent,
        targetAddr: xipBase + p * page,
        payloadSize: page,
        blockNo: p,
        numBlocks: sector / page,
        familyId: uf2Families.rp2350ArmS,
        data: image.slice(p * page, (p + 1) * page),
      })),
    );
    assert.deepEqual(readBinaryInfo(bytes, "pico2_w"), { version: "9.9.9", name: "copied" });
    assert.deepEqual(readBinaryInfo(bytes, "pico_w"), {});
  });
});

describe("uf2: the file sdk flash writes", () => {
  test("its shape: E10 block first and unchanged, whole sectors, one numbering, the config sector last", () => {
    for (const board of boardIds) {
      const release = syntheticRelease({ board, version: "1.0.0", imageBytes: 40_000 });
      const block = config("shape");
      const composed = composeFlashUf2(release, board, block);
      const blocks = parseUf2(composed);
      const image = board === "pico2_w" ? blocks.slice(1) : blocks;
      if (board === "pico2_w") assert.deepEqual(composed.subarray(0, 512), release.subarray(0, 512));
      // 40,000 bytes = 157 pages in 10 sectors: 160 image blocks, then 16 config blocks.
      assert.equal(image.length, 176);
      image.forEach((b, i) => {
        assert.deepEqual(
          {
            flags: b.flags,
            blockNo: b.blockNo,
            numBlocks: b.numBlocks,
            familyId: b.familyId,
            payloadSize: b.payloadSize,
          },
          {
            flags: 0x2000,
            blockNo: i,
            numBlocks: 176,
            familyId: boardFlash[board].familyId,
            payloadSize: 256,
          },
        );
      });
      assert.deepEqual(
        image.slice(157, 160).map((b) => [b.targetAddr, b.data.every((x) => x === 0xff)]),
        [
          [0x10009d00, true],
          [0x10009e00, true],
          [0x10009f00, true],
        ],
      );
      assert.equal(image[160]!.targetAddr, configSectorAddress(board));
      assert.deepEqual(extractConfigSector(composed, board), block);
      assert.throws(() => extractConfigSector(release, board), /has 0 of the config sector's 16 pages/);
    }
  });

  test("refused: a config block that is not 4096 bytes, a release that is not the board's", () => {
    const release = syntheticRelease({ board: "pico_w", version: "1.0.0" });
    assert.throws(
      () => composeFlashUf2(release, "pico_w", new Uint8Array(4095)),
      /config block is 4095 bytes/,
    );
    assert.throws(
      () => composeFlashUf2(release, "pico2_w", config("x")),
      /family 0xe48bff56 is not pico2_w's/,
    );
  });

  for (const board of boardIds) {
    describe(`${board}: through the ${board === "pico_w" ? "RP2040" : "RP2350"} bootrom model`, () => {
      const v1 = syntheticRelease({ board, version: "1.0.0", imageBytes: 40_000 });
      const v2 = syntheticRelease({ board, version: "1.1.0", imageBytes: 70_123 });
      const block = config("first secret");
      const composed = composeFlashUf2(v1, board, block);

      test("every image page and the config sector end up right, in file order and shuffled", () => {
        for (const order of orders(composed)) {
          const flash = usedFlash(board);
          assert.equal(flashWith(board, flash, order), true, "the board reboots");
          assertImage(flash, v1, board);
          for (const addr of [0x10009d00, 0x10009e00, 0x10009f00]) {
            assert.ok(flash.subarray(addr - xipBase, addr - xipBase + page).every((x) => x === 0xff));
          }
          assert.deepEqual(configIn(flash, board), block);
        }
      });

      test("a later firmware-only flash (the plain release) leaves the config sector intact", () => {
        for (const [i, order] of orders(v2).entries()) {
          const flash = usedFlash(board);
          assert.equal(flashWith(board, flash, chunks(composed)), true);
          assert.equal(flashWith(board, flash, order), true, `order ${i}: the board reboots`);
          assertImage(flash, v2, board);
          assert.deepEqual(configIn(flash, board), block, `order ${i}`);
        }
      });

      test("re-flashing with new credentials replaces the config sector", () => {
        const flash = usedFlash(board);
        assert.equal(flashWith(board, flash, chunks(composed)), true);
        const next = config("second secret");
        assert.equal(flashWith(board, flash, orders(composeFlashUf2(v2, board, next)).at(-1)!), true);
        assertImage(flash, v2, board);
        assert.deepEqual(configIn(flash, board), next);
      });

      if (board === "pico2_w") {
        test("why the E10 block stays first: arriving mid-file it restarts the RP2350's transfer", () => {
          const all = chunks(composed);
          const flash = usedFlash(board);
          assert.equal(flashWith(board, flash, [...all.slice(1, 90), all[0]!, ...all.slice(90)]), false);
          assert.equal(flashWith(board, flash, all), true);
          assertImage(flash, v1, board);
          assert.deepEqual(configIn(flash, board), block);
          // It lands in the last sector (the chip ignores the upper address bits), never the config sector.
          assert.ok(flash.subarray(0x3fff00, 0x400000).every((x) => x === 0xef));
        });
      }
    });
  }

  test("the model has teeth: a naive append corrupts the config on the RP2040, not on the RP2350", () => {
    const naive = (release: Uint8Array, board: Board, block: Uint8Array) =>
      rewrite(release, (bs) => {
        const image = bs.filter((b) => b.familyId === boardFlash[board].familyId);
        const e10 = bs.filter((b) => b.familyId === uf2Families.absolute);
        const n = image.length + 16;
        const configBlocks = Array.from({ length: 16 }, (_, p) => ({
          ...image[0]!,
          targetAddr: configSectorAddress(board) + p * page,
          blockNo: image.length + p,
          data: block.slice(p * page, (p + 1) * page),
        }));
        return [...e10, ...[...image, ...configBlocks].map((b) => ({ ...b, numBlocks: n }))];
      });
    const block = config("naive");
    for (const board of boardIds) {
      const release = syntheticRelease({ board, version: "1.0.0", imageBytes: 40_000 });
      assert.notEqual(
        parseUf2(release).filter((b) => b.familyId === boardFlash[board].familyId).length % 16,
        0,
      );
      const flash = usedFlash(board);
      // The board held a config already (a re-flash).
      flash.set(config("old"), configSectorAddress(board) - xipBase);
      assert.equal(flashWith(board, flash, chunks(naive(release, board, block))), true);
      assertImage(flash, release, board);
      if (board === "pico_w") assert.notDeepEqual(configIn(flash, board), block);
      else assert.deepEqual(configIn(flash, board), block);
    }
  });
});
