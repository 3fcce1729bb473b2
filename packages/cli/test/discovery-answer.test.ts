import assert from "node:assert/strict";
import { test } from "node:test";
import { loginUrl, printable } from "../src/discovery/answer.ts";

test("printable drops terminal escapes, controls and bidi overrides from an mDNS answer", () => {
  assert.equal(printable("Garage sdk"), "Garage sdk");
  assert.equal(printable("\u001b]0;pwned\u0007Evil\u001b[2J\r\nsdk"), "]0;pwnedEvil[2Jsdk");
  assert.equal(printable("\u009b31mred"), "31mred", "C1 CSI too");
  assert.equal(printable("abc\u202egpj.exe\u2066x\u2069\u200f"), "abcgpj.exex");
  assert.equal(printable("Café 🌱"), "Café 🌱");
  assert.equal(printable(undefined), "");
  assert.equal(printable(42), "");
});

test("printable bounds the length by code points, never splitting a surrogate pair", () => {
  const long = "🌱".repeat(200);
  const shown = printable(long);
  assert.equal([...shown].length, 80);
  assert.ok(shown.endsWith("🌱…"), shown.slice(-4));
  assert.equal(printable("x".repeat(80)), "x".repeat(80));
});

test("loginUrl takes the advertised URL only on the address the answer came from", () => {
  const from = "10.0.0.5";
  assert.equal(loginUrl(undefined, from, 8080), "http://10.0.0.5:8080");
  assert.equal(loginUrl("https://10.0.0.5/sdk/", from, 8080), "https://10.0.0.5/sdk");
  assert.equal(loginUrl("http://10.0.0.5:9000", from, 8080), "http://10.0.0.5:9000");
  for (const elsewhere of [
    "https://attacker.example",
    "http://10.0.0.6:8080",
    "http://pi.local:8080",
    "ftp://10.0.0.5/",
    "javascript:alert(1)",
    "http://user:pw@10.0.0.5:8080",
    "not a url",
    "",
  ])
    assert.equal(loginUrl(elsewhere, from, 8080), "http://10.0.0.5:8080", elsewhere);
  assert.equal(loginUrl("http://[FD00::5]:8080", "fd00::5", 8080), "http://[fd00::5]:8080");
  assert.equal(loginUrl("http://evil", "fd00::5", 8081), "http://[fd00::5]:8081");
});
