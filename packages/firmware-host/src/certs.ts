// A throwaway PKI for TLS tests, made with the openssl CLI: a CA, two "localhost" server
// certificates it signs (RSA-2048 and ECDSA P-256), and an unrelated CA for the "wrong CA" case.
import { execFileSync } from "node:child_process";
import { createHash, createPublicKey, randomBytes, X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { hasCommand, unavailable } from "./unavailable.ts";

export interface TestCa {
  /** PEM files. */
  cert: string;
  key: string;
  /** The certificate as DER, as the firmware stores it. */
  der: Buffer;
}

export interface ServerCert {
  /** PEM files: the certificate (signed by the test CA) and its private key. */
  cert: string;
  key: string;
  /** SHA-256 of the key's SubjectPublicKeyInfo (DER): the firmware's key pin. */
  pin: Buffer;
}

export interface TestPki {
  ca: TestCa;
  /** A CA that signed nothing here: trusting it must make every handshake fail. */
  otherCa: TestCa;
  rsa: ServerCert;
  ecdsa: ServerCert;
  /** Signed by the test CA, but for sdk.invalid only: connecting to "localhost" must fail the name check. */
  elsewhere: ServerCert;
}

const extensions = `[sdk_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[sdk_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[sdk_elsewhere]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:sdk.invalid
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

const keyOptions = {
  rsa: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
  ecdsa: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-pkeyopt", "ec_param_enc:named_curve"],
};

function openssl(args: string[]): void {
  try {
    execFileSync("openssl", args, { encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`openssl ${args.join(" ")} failed:\n${e.stderr ?? e.message}`);
  }
}

const serial = () => `0x${randomBytes(8).toString("hex")}`;

function makeKey(file: string, type: keyof typeof keyOptions): void {
  openssl(["genpkey", ...keyOptions[type], "-out", file]);
}

function makeCa(dir: string, name: string, extfile: string): TestCa {
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const cert = path.join(dir, `${name}.pem`);
  makeKey(key, "rsa");
  openssl(["req", "-new", "-key", key, "-subj", `/CN=sdk test ${name}`, "-out", csr]);
  openssl(
    ["x509", "-req", "-in", csr, "-signkey", key, "-sha256", "-days", "3650", "-set_serial", serial()].concat(
      ["-extfile", extfile, "-extensions", "sdk_ca", "-out", cert],
    ),
  );
  return { cert, key, der: Buffer.from(new X509Certificate(fs.readFileSync(cert)).raw) };
}

function makeServer(
  dir: string,
  type: keyof typeof keyOptions,
  ca: TestCa,
  extfile: string,
  name = "localhost",
): ServerCert {
  const section = name === "localhost" ? "sdk_server" : "sdk_elsewhere";
  const key = path.join(dir, `server-${type}-${name}.key`);
  const csr = path.join(dir, `server-${type}-${name}.csr`);
  const cert = path.join(dir, `server-${type}-${name}.pem`);
  makeKey(key, type);
  openssl(["req", "-new", "-key", key, "-subj", `/CN=${name}`, "-out", csr]);
  openssl(
    ["x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key, "-sha256", "-days", "825"].concat([
      "-set_serial",
      serial(),
      "-extfile",
      extfile,
      "-extensions",
      section,
      "-out",
      cert,
    ]),
  );
  const spki = createPublicKey(fs.readFileSync(key)).export({ type: "spki", format: "der" });
  return { cert, key, pin: createHash("sha256").update(spki).digest() };
}

/** Writes the PKI's files into dir (which must exist); {skip} without openssl (throws on CI). */
export function makeTestPki(dir: string): TestPki | { skip: string } {
  if (!hasCommand("openssl", ["version"])) {
    return unavailable("the openssl command is not installed (Debian: apt-get install openssl)");
  }
  const extfile = path.join(dir, "extensions.cnf");
  fs.writeFileSync(extfile, extensions);
  const ca = makeCa(dir, "ca", extfile);
  const otherCa = makeCa(dir, "other-ca", extfile);
  return {
    ca,
    otherCa,
    rsa: makeServer(dir, "rsa", ca, extfile),
    ecdsa: makeServer(dir, "ecdsa", ca, extfile),
    elsewhere: makeServer(dir, "ecdsa", ca, extfile, "sdk.invalid"),
  };
}
