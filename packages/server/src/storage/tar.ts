import type { Readable } from "node:stream";

/** A corrupted, truncated or foreign archive: the message says which, in one line. */
export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArchiveError";
  }
}

const block = 512;
const zeros = Buffer.alloc(block);

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

/** Splits a path into ustar's `prefix` (≤155 bytes) and `name` (≤100 bytes) at a `/`. */
function splitName(path: string): { prefix: string; name: string } {
  if (Buffer.byteLength(path) <= 100) return { prefix: "", name: path };
  for (let at = path.indexOf("/"); at >= 0; at = path.indexOf("/", at + 1)) {
    const prefix = path.slice(0, at);
    const name = path.slice(at + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return { prefix, name };
  }
  throw new Error(`path too long for the archive: ${path}`);
}

/** The 512-byte ustar header of a regular file (mode 0600). */
export function tarHeader(path: string, size: number, mtimeSeconds: number): Buffer {
  const header = Buffer.alloc(block);
  const { prefix, name } = splitName(path);
  header.write(name, 0, 100, "utf8");
  header.write(octal(0o600, 8), 100, "ascii");
  header.write(octal(0, 8), 108, "ascii");
  header.write(octal(0, 8), 116, "ascii");
  header.write(octal(size, 12), 124, "ascii");
  header.write(octal(Math.floor(mtimeSeconds), 12), 136, "ascii");
  header.write("        ", 148, "ascii"); // the checksum counts its own field as spaces
  header.write("0", 156, "ascii");
  header.write("ustar\u000000", 257, "ascii");
  header.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return header;
}

/** Zero bytes that round a file's data up to a whole block. */
export function tarPadding(size: number): Buffer {
  return zeros.subarray(0, (block - (size % block)) % block);
}

/** Two zero blocks end an archive. */
export const tarEnd: Buffer = Buffer.alloc(block * 2);

export interface TarEntry {
  path: string;
  size: number;
}

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? length : end).toString("utf8");
}

function parseHeader(header: Buffer): TarEntry {
  let sum = 0;
  for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  const stored = Number.parseInt(field(header, 148, 8).trim(), 8);
  if (stored !== sum) throw new ArchiveError("the archive is corrupted (a file header's checksum is wrong)");
  const type = String.fromCharCode(header[156]!);
  if (type !== "0" && type !== "\0")
    throw new ArchiveError(`the archive is corrupted (it holds an entry of type "${type}")`);
  const prefix = field(header, 345, 155);
  const name = field(header, 0, 100);
  const size = Number.parseInt(field(header, 124, 12).trim(), 8);
  if (!Number.isSafeInteger(size) || size < 0) throw new ArchiveError("the archive is corrupted (bad size)");
  return { path: prefix ? `${prefix}/${name}` : name, size };
}

/**
 * Reads a tar stream entry by entry: for each file `onEntry` gets its header and then its data in
 * chunks (`onData`), and `onEnd` when its last byte has come. Throws `ArchiveError` when the stream
 * ends early or a header is damaged.
 */
export async function readTar(
  source: Readable,
  handlers: {
    onEntry(entry: TarEntry): void | Promise<void>;
    onData(chunk: Buffer): void | Promise<void>;
    onEnd(entry: TarEntry): void | Promise<void>;
  },
): Promise<void> {
  let pending: Buffer = Buffer.alloc(0);
  let entry: TarEntry | undefined;
  let remaining = 0; // data bytes of the current entry still to come
  let skip = 0; // padding after them
  let ended = false;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (!ended) {
      if (entry) {
        const take = Math.min(remaining, pending.length);
        if (take > 0) {
          await handlers.onData(pending.subarray(0, take));
          pending = pending.subarray(take);
          remaining -= take;
        }
        if (remaining > 0) break;
        const pad = Math.min(skip, pending.length);
        pending = pending.subarray(pad);
        skip -= pad;
        if (skip > 0) break;
        const done = entry;
        entry = undefined;
        await handlers.onEnd(done);
        continue;
      }
      if (pending.length < block) break;
      const header = pending.subarray(0, block);
      pending = pending.subarray(block);
      if (header.equals(zeros)) {
        ended = true;
        break;
      }
      entry = parseHeader(header);
      remaining = entry.size;
      skip = tarPadding(entry.size).length;
      await handlers.onEntry(entry);
    }
  }
  if (!ended) throw new ArchiveError("the archive is truncated (it ends before its last file)");
}
