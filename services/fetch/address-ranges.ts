import { isIP } from "node:net";

// Which IP addresses a document, OCSP or CRL fetch may connect to: public ones only (the IANA special-purpose registries).

export type AddressCategory =
  | "loopback"
  | "private"
  | "link-local"
  | "cloud-metadata"
  | "unspecified"
  | "shared"
  | "multicast"
  | "reserved";

export const CATEGORY_TEXT: Record<AddressCategory, string> = {
  loopback: "a loopback address",
  private: "a private address",
  "link-local": "a link-local address",
  "cloud-metadata": "a cloud metadata address",
  unspecified: "an unspecified address",
  shared: "a shared (carrier-grade NAT) address",
  multicast: "a multicast address",
  reserved: "a reserved address",
};

type V4Rule = [base: number, prefix: number, category: AddressCategory];

/** Checked in order, so specific entries (metadata) come before the ranges that hold them. */
const V4_RULES: V4Rule[] = [
  [v4("169.254.169.254"), 32, "cloud-metadata"], // AWS, GCP, Azure, OpenStack, ...
  [v4("169.254.170.2"), 32, "cloud-metadata"], // AWS ECS task metadata
  [v4("100.100.100.200"), 32, "cloud-metadata"], // Alibaba Cloud
  [v4("0.0.0.0"), 32, "unspecified"],
  [v4("0.0.0.0"), 8, "reserved"], // "this network"
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "shared"],
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link-local"],
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "reserved"], // IETF protocol assignments (incl. 192.0.0.192 OCI metadata)
  [v4("192.0.2.0"), 24, "reserved"], // TEST-NET-1
  [v4("192.88.99.0"), 24, "reserved"], // 6to4 relay anycast
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "reserved"], // benchmarking
  [v4("198.51.100.0"), 24, "reserved"], // TEST-NET-2
  [v4("203.0.113.0"), 24, "reserved"], // TEST-NET-3
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("240.0.0.0"), 4, "reserved"], // incl. 255.255.255.255
];

function v4(text: string): number {
  const parts = text.split(".").map(Number);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function classifyV4(value: number): AddressCategory | null {
  for (const [base, prefix, category] of V4_RULES) {
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    if (((value & mask) >>> 0) === base) return category;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or null when it does not parse. */
function parseV6(text: string): number[] | null {
  let rest = text.replace(/%.*$/, "");
  const groups: number[] = [];
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(rest);
  if (dotted) {
    if (isIP(dotted[2]!) !== 4) return null;
    const value = v4(dotted[2]!);
    tail.push(value >>> 16, value & 0xffff);
    rest = dotted[1]!.endsWith("::") ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = rest.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    for (const group of part.split(":")) {
      if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
      out.push(parseInt(group, 16));
    }
    return out;
  };
  const head = parse(halves[0]!);
  const after = halves.length === 2 ? parse(halves[1]!) : [];
  if (head === null || after === null) return null;
  const total = head.length + after.length + tail.length;
  if (halves.length === 2) {
    if (total > 7) return null;
    groups.push(...head, ...new Array<number>(8 - total).fill(0), ...after, ...tail);
  } else {
    if (total !== 8) return null;
    groups.push(...head, ...tail);
  }
  return groups;
}

function classifyV6(g: number[]): AddressCategory | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const embeddedV4 = ((g6 << 16) | g7) >>> 0;
  const firstSixZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstSixZero && g5 === 0) {
    if (g6 === 0 && g7 === 0) return "unspecified";
    if (g6 === 0 && g7 === 1) return "loopback";
    return "reserved"; // deprecated IPv4-compatible addresses
  }
  if (firstSixZero && g5 === 0xffff) return classifyV4(embeddedV4); // IPv4-mapped
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return classifyV4(embeddedV4); // NAT64: judged by the IPv4 address it reaches
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "private"; // local-use NAT64
  if (g0 === 0x2002) return classifyV4(((g1 << 16) | g2) >>> 0); // 6to4
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 0x254) {
    return "cloud-metadata"; // AWS IMDS over IPv6
  }
  if ((g0 & 0xfe00) === 0xfc00) return "private"; // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xffc0) === 0xfec0) return "private"; // deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && g1 === 0) return "reserved"; // Teredo
  if (g0 === 0x2001 && g1 === 0x0db8) return "reserved"; // documentation
  if (g0 === 0x3fff && (g1 & 0xf000) === 0) return "reserved"; // documentation 3fff::/20 (RFC 9637)
  if ((g0 & 0xe000) !== 0x2000) return "reserved"; // outside global unicast 2000::/3 (e.g. 100::/64)
  return null;
}

/**
 * Why an address may not be fetched from, or null for a public address. Anything that is not
 * an IP address is "reserved" (refused), so callers fail closed.
 */
export function classifyAddress(address: string): AddressCategory | null {
  const text = address.trim().replace(/^\[(.*)\]$/, "$1");
  if (isIP(text) === 4) return classifyV4(v4(text));
  const groups = parseV6(text);
  if (groups === null) return "reserved";
  return classifyV6(groups);
}

/** True when guardedFetch refuses this address (unless its host is allow-listed). */
export function isForbiddenAddress(address: string): boolean {
  return classifyAddress(address) !== null;
}
