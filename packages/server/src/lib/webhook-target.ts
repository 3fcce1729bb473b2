import { BlockList, isIP } from "node:net";

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

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it carries. */
function unmapped(address: string): { address: string; family: "ipv4" | "ipv6" } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: "ipv4" };
  return { address, family: isIP(address) === 6 ? "ipv6" : "ipv4" };
}

/**
 * Why a webhook may not be sent to this IP address, or `null` when it may. Checked on the address
 * the connection is actually made to (after DNS), so a name that resolves differently later
 * (DNS rebinding) cannot reach a refused range.
 */
export function refusedTarget(ip: string, allowed: readonly PrivateRange[]): string | null {
  const { address, family } = unmapped(ip);
  if (never.check(address, family)) return `${ip} is not a destination address`;
  for (const range of privateRanges) {
    if (ranges[range].check(address, family) && !allowed.includes(range)) {
      return `${ip} is a ${range} address, and this server does not send webhooks there (an admin allows it with WEBHOOK_ALLOW_PRIVATE=${range})`;
    }
  }
  return null;
}
