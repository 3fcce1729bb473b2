import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";

const version = "v1";

/**
 * AES-256-GCM encryption for values stored at rest (env vars). The key lives in a file (by default
 * in the data directory), created with mode 0600 on first boot of a server on its own. `context` is bound as associated data, so a
 * ciphertext copied to another row (another project or name) does not decrypt.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("secret key must be 32 bytes");
    this.#key = key;
  }

  /**
   * The key in `file` (SECRET_KEY_FILE, default DATA_DIR/secret.key), made there on first boot.
   * `create: false` (the database already holds encrypted values): a missing key is an error, never
   * replaced by a new one that could not decrypt them. `cluster`: never made either, since every
   * instance must hold the same key.
   */
  static fromKeyFile(
    file: string,
    options: { create: boolean; cluster?: boolean } = { create: true },
  ): SecretBox {
    if (options.cluster && !fs.existsSync(file))
      throw new Error(
        `${file} is missing: every instance of a cluster needs the same secret key file (env vars and webhook secrets are encrypted with it). ` +
          "Make one once with `head -c 32 /dev/urandom | base64 > secret.key`, give every instance a copy, " +
          "and point SECRET_KEY_FILE at it (or put it at DATA_DIR/secret.key)",
      );
    if (!options.create && !fs.existsSync(file))
      throw new Error(
        `${file} is missing but the database holds values encrypted with it (env vars, webhook secrets): put back the secret.key that belongs to this database (it is in every backup), or restore a whole backup with sdk-server restore`,
      );
    if (!options.cluster) {
      try {
        fs.writeFileSync(file, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    const key = Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64");
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    return new SecretBox(key);
  }

  /**
   * A value that tells keys apart without revealing them: the HMAC-SHA256 of a fixed label with
   * the key. Stored in the database, it lets a server refuse a key file that is not the one its
   * secrets were written with.
   */
  checkValue(): string {
    return `v1:${createHmac("sha256", this.#key).update("sdk secret key check").digest("base64")}`;
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `${version}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`;
  }

  open(sealed: string, context: string): string {
    const [v, data] = sealed.split(":");
    if (v !== version || !data) throw new Error("unknown ciphertext format");
    const raw = Buffer.from(data, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  }
}
