import { BlockList, isIP } from "node:net";
import { networkInterfaces } from "node:os";

/** Address ranges a webhook target may be in only when the admin allows them (WEBHOOK_ALLOW_PRIVATE). */
export type PrivateRange = "loopback" | "link-local" | "private";
export const privateRanges: readonly PrivateRange[] = ["loopback", "link-local", "private"];

function list(v4: [string, number][], v6: [string, number][]): BlockList {
  const blocks = new BlockList();
  for (const [net, prefix] of v4) blocks.addSubnet(net, prefix, "ipv4");
  for (const [net, prefix] of v6) blocks.addSubnet(net, prefix, "ipv6");
  return blocks;
}

const ranges: Record<PrivateRange, BlockList> = {
  loopback: list([["127.0.0.0", 8]], [["::1", 128]]),
  "link-local": list([["169.254.0.0", 16]], [["fe80::", 10]]),
  private: list(
    [
      ["10.0.0.0", 8],
      ["172.16.0.0", 12],
      ["192.168.0.0", 16],
      ["100.64.0.0", 10],
    ],
    [["fc00::", 7]],
  ),
};
/** Never a destination: unspecified, "this network", multicast, broadcast. */
const never = list(
  [
    ["0.0.0.0", 8],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ],
  [
    ["::", 128],
    ["ff00::", 8],
  ],
);

/** The 16 bytes of an IPv6 address (`::` and a trailing dotted IPv4 part are expanded). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.flatMap((g) => {
    const n = Number.parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

const v4 = (bytes: number[]) => bytes.join(".");
const zeros = (bytes: number[]) => bytes.every((b) => b === 0);

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach an IPv4 host:
 * IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 * Those are judged as the IPv4 address, so `[::ffff:127.0.0.1]` or `[2002:7f00:1::]` is loopback.
 */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  if (b.length !== 16) return null;
  const low = b.slice(12);
  if (zeros(b.slice(0, 10)) && b[10] === 0xff && b[11] === 0xff) return v4(low);
  // ::/96 but not :: and ::1, which are IPv6's own unspecified and loopback addresses.
  if (zeros(b.slice(0, 12)) && !(zeros(b.slice(12, 15)) && (b[15] === 0 || b[15] === 1))) return v4(low);
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b.slice(4, 12))) return v4(low);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(b.slice(2, 6));
  return null;
}

function judged(ip: string): { address: string; family: "ipv4" | "ipv6" } {
  if (isIP(ip) !== 6) return { address: ip, family: "ipv4" };
  const carried = embeddedIpv4(ip);
  return carried ? { address: carried, family: "ipv4" } : { address: ip.replace(/%.*$/, ""), family: "ipv6" };
}

/** The addresses of this machine's network interfaces, read now (they change: DHCP, Docker, VPN). */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/**
 * Why a webhook may not be sent to this IP address, or `null` when it may. Checked on the address
 * the connection is actually made to (after DNS), so a name that resolves differently later
 * (DNS rebinding) cannot reach a refused range. An address of one of this machine's own interfaces
 * (192.168.x.x on a Pi, 172.17.0.1 in Docker) is the server's own host: refused like loopback.
 */
export function refusedTarget(
  ip: string,
  allowed: readonly PrivateRange[],
  ownAddresses: readonly string[] = interfaceAddresses(),
): string | null {
  const { address, family } = judged(ip);
  if (never.check(address, family)) return `${ip} is not a destination address`;
  for (const range of privateRanges) {
    if (ranges[range].check(address, family) && !allowed.includes(range)) {
      return `${ip} is a ${range} address, and this server does not send webhooks there (an admin allows it with WEBHOOK_ALLOW_PRIVATE=${range})`;
    }
  }
  if (!allowed.includes("loopback")) {
    const own = new BlockList();
    for (const a of ownAddresses) {
      const { address: mine, family: its } = judged(a);
      if (isIP(mine)) own.addAddress(mine, its);
    }
    if (own.check(address, family)) {
      return `${ip} is an address of this server's own host, and this server does not send webhooks there (an admin allows it with WEBHOOK_ALLOW_PRIVATE=loopback)`;
    }
  }
  return null;
}
