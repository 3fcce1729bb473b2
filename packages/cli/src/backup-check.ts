import { createGunzip, type Gunzip } from "node:zlib";

const block = 512;

/**
 * Follows a backup archive as it is received (gzip-compressed tar, manifest.json first) and says at
 * the end whether it is whole: the gzip trailer's CRC and length check out, the tar ends with its
 * two zero blocks and the manifest lists as many files as the server said it sent. The files'
 * SHA-256 sums are checked by `sdk-server restore`.
 */
export class BackupCheck {
  readonly #gunzip: Gunzip = createGunzip();
  readonly #done: Promise<void>;
  #head = Buffer.alloc(0);
  #tail = Buffer.alloc(0);
  #error: Error | undefined;

  constructor() {
    this.#gunzip.on("data", (chunk: Buffer) => {
      if (this.#head.length < 64 * 1024) this.#head = Buffer.concat([this.#head, chunk]);
      this.#tail = Buffer.concat([this.#tail, chunk]).subarray(-2 * block);
    });
    this.#gunzip.on("error", (error) => {
      this.#error ??= error;
    });
    this.#done = new Promise((resolve) => {
      this.#gunzip.once("end", resolve);
      this.#gunzip.once("close", resolve); // destroyed by an error
    });
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (this.#error || this.#gunzip.destroyed) return;
    if (!this.#gunzip.write(chunk))
      await new Promise((resolve) => {
        this.#gunzip.once("drain", resolve);
        this.#gunzip.once("close", resolve);
      });
  }

  /** Throws an Error saying what is wrong when the archive is not whole. */
  async finish(expectedFiles: number): Promise<void> {
    if (!this.#gunzip.destroyed) this.#gunzip.end();
    await this.#done;
    if (this.#error) throw new Error(`the archive is incomplete or damaged (${this.#error.message})`);
    if (this.#tail.length < 2 * block || this.#tail.some((byte) => byte !== 0))
      throw new Error("the archive is incomplete (it does not end as a tar archive does)");
    const header = this.#head.subarray(0, block);
    const name = header.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
    const size = Number.parseInt(header.subarray(124, 136).toString("ascii").replace(/\0.*$/s, "").trim(), 8);
    let files: unknown;
    try {
      if (name !== "manifest.json") throw new Error();
      files = (JSON.parse(this.#head.subarray(block, block + size).toString("utf8")) as { files?: unknown })
        .files;
    } catch {
      throw new Error("the archive does not begin with a readable manifest.json");
    }
    if (!Array.isArray(files) || files.length !== expectedFiles)
      throw new Error(
        `the archive's manifest lists ${Array.isArray(files) ? files.length : "no"} files, the server said ${expectedFiles}`,
      );
  }
}
