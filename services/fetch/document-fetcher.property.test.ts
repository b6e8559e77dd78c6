import assert from "node:assert/strict";
import { BlockList, isIP } from "node:net";
import { describe, test } from "node:test";
import fc from "fast-check";
import { ServiceError } from "../core/errors.js";
import { classifyAddress } from "./address-ranges.js";
import { fetchDocument } from "./document-fetcher.js";

// Property tests of the SSRF guard: every address in a range that reaches this machine, its
// network or a cloud's metadata service is refused in every spelling a resolver or a URL can
// give it (IPv4, IPv4-mapped IPv6, NAT64, 6to4, compressed or not, any case); public addresses
// pass. The oracle is node:net's BlockList over ranges written here from the registries
// (RFC 6890 and the IANA special-purpose tables), not the fetcher's own table. No traffic:
// the end-to-end property only uses loopback addresses, refused before any connection.

const NUM_RUNS = 300;

/** IPv4 ranges that must be refused. */
const FORBIDDEN_V4: Array<[string, number]> = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["100.100.100.200", 32], // Alibaba Cloud metadata
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, incl. AWS/GCP/Azure metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];

/** IPv6 ranges that must be refused whatever they embed (ranges that embed IPv4 are judged by it, below). */
const FORBIDDEN_V6: Array<[string, number]> = [
  ["::", 128],
  ["::1", 128],
  ["::", 96], // IPv4-compatible (deprecated)
  ["64:ff9b:1::", 48], // local-use NAT64
  ["fc00::", 7], // unique local, incl. AWS IMDS fd00:ec2::254
  ["fe80::", 10],
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8],
  ["2001::", 32], // Teredo
  ["2001:db8::", 32],
  ["3fff::", 20], // documentation (RFC 9637)
  ["100::", 64], // discard-only
];

const forbiddenV4 = new BlockList();
for (const [net, prefix] of FORBIDDEN_V4) forbiddenV4.addSubnet(net, prefix, "ipv4");

const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join(".");
const v4Of = (text: string) => text.split(".").reduce((n, part) => n * 256 + Number(part), 0);

/** An address of the range: its base with random host bits. */
function inV4Range([net, prefix]: [string, number]) {
  const base = v4Of(net);
  return fc.nat({ max: 2 ** (32 - prefix) - 1 }).map((host) => base + host);
}

const forbiddenV4Address = fc.oneof(...FORBIDDEN_V4.map(inV4Range));
const publicV4Address = fc.nat({ max: 0xffffffff }).filter((n) => !forbiddenV4.check(v4Text(n), "ipv4"));

type Groups = readonly number[];

/** Eight 16-bit groups: the range's bits, then random ones. */
function v6Groups(net: string, prefix: number) {
  const base = parseGroups(net);
  return fc.array(fc.nat({ max: 0xffff }), { minLength: 8, maxLength: 8 }).map((random) =>
    base.map((group, i) => {
      const fixedBits = Math.min(16, Math.max(0, prefix - i * 16));
      const mask = fixedBits === 0 ? 0 : (0xffff << (16 - fixedBits)) & 0xffff;
      return (group & mask) | (random[i]! & ~mask & 0xffff);
    }),
  );
}

/** "a:b::c" → eight groups (test-side, for the ranges above only). */
function parseGroups(text: string): Groups {
  const [head, tail] = text.split("::") as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(":").map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** The ways an IPv6 address can be written: compressed or not, zero-padded, any case, a dotted IPv4 tail. */
const v6Style = fc.record({
  compress: fc.boolean(),
  pad: fc.boolean(),
  upper: fc.boolean(),
  dottedTail: fc.boolean(),
  bracketed: fc.boolean(),
});

type V6Style = typeof v6Style extends fc.Arbitrary<infer T> ? T : never;

function v6Text(groups: Groups, style: V6Style): string {
  const hex = groups.map((g) => (style.pad ? g.toString(16).padStart(4, "0") : g.toString(16)));
  let tailText = "";
  let count = 8;
  if (style.dottedTail) {
    tailText = v4Text(groups[6]! * 0x10000 + groups[7]!);
    count = 6;
  }
  let text: string;
  // the longest run of zero groups (before the dotted tail) becomes "::"
  let best = { at: -1, length: 0 };
  if (style.compress) {
    for (let i = 0; i < count; ) {
      let j = i;
      while (j < count && groups[j] === 0) j++;
      if (j - i > best.length) best = { at: i, length: j - i };
      i = j === i ? i + 1 : j;
    }
  }
  if (best.length > 0) {
    const left = hex.slice(0, best.at).join(":");
    const right = [...hex.slice(best.at + best.length, count), ...(tailText ? [tailText] : [])].join(":");
    text = `${left}::${right}`;
  } else {
    text = [...hex.slice(0, count), ...(tailText ? [tailText] : [])].join(":");
  }
  if (style.upper) text = text.toUpperCase();
  return style.bracketed ? `[${text}]` : text;
}

/** IPv6 forms that embed an IPv4 address and reach it: mapped, NAT64 (well-known prefix), 6to4, SIIT-translated. */
function embeddings(v4: number): fc.Arbitrary<Groups> {
  const high = v4 >>> 16;
  const low = v4 & 0xffff;
  return fc.oneof(
    fc.constant([0, 0, 0, 0, 0, 0xffff, high, low]), // ::ffff:a.b.c.d
    fc.constant([0x64, 0xff9b, 0, 0, 0, 0, high, low]), // 64:ff9b::a.b.c.d
    fc.array(fc.nat({ max: 0xffff }), { minLength: 5, maxLength: 5 }).map((rest) => [0x2002, high, low, ...rest]), // 2002:aabb:ccdd::/48
  );
}

const category = (address: string) => classifyAddress(address);

/** Each generated address, written out, is valid IPv6 and refused. */
function everySpellingRefused(forms: fc.Arbitrary<[Groups, V6Style]>): void {
  fc.assert(
    fc.property(forms, ([groups, style]) => {
      const text = v6Text(groups, style);
      assert.equal(isIP(text.replace(/^\[|\]$/g, "")), 6, `generated ${text} is not IPv6`);
      assert.notEqual(category(text), null, text);
    }),
    { numRuns: NUM_RUNS },
  );
}

describe("SSRF address checks (fast-check)", () => {
  test("IPv4 in every refused range is refused", () => {
    fc.assert(
      fc.property(forbiddenV4Address, (n) => {
        assert.notEqual(category(v4Text(n)), null, v4Text(n));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("public IPv4 is allowed", () => {
    fc.assert(
      fc.property(publicV4Address, (n) => {
        assert.equal(category(v4Text(n)), null, v4Text(n));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("refused IPv4 stays refused inside IPv6 (mapped, NAT64, 6to4, SIIT, compatible), in any spelling", () => {
    const forms = forbiddenV4Address.chain((v4) =>
      fc.tuple(
        fc.oneof(
          embeddings(v4),
          fc.constant([0, 0, 0, 0, 0xffff, 0, v4 >>> 16, v4 & 0xffff]), // ::ffff:0:a.b.c.d (SIIT)
          fc.constant([0, 0, 0, 0, 0, 0, v4 >>> 16, v4 & 0xffff]), // ::a.b.c.d (compatible)
        ),
        v6Style,
      ),
    );
    everySpellingRefused(forms);
  });

  test("public IPv4 inside IPv6 (mapped, NAT64, 6to4) is judged by the IPv4 address: allowed", () => {
    const forms = publicV4Address.chain((v4) => fc.tuple(embeddings(v4), v6Style));
    fc.assert(
      fc.property(forms, ([groups, style]) => {
        const text = v6Text(groups, style);
        assert.equal(category(text), null, text);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("IPv6 in every refused range is refused, in any spelling", () => {
    const forms = fc.tuple(fc.oneof(...FORBIDDEN_V6.map(([net, prefix]) => v6Groups(net, prefix))), v6Style);
    everySpellingRefused(forms);
  });

  test("global unicast IPv6 outside the special ranges is allowed", () => {
    const special = new BlockList();
    for (const [net, prefix] of FORBIDDEN_V6) special.addSubnet(net, prefix, "ipv6");
    special.addSubnet("2002::", 16, "ipv6"); // 6to4: judged by its IPv4 address, above
    const forms = fc
      .tuple(v6Groups("2000::", 3), v6Style)
      .filter(([groups]) => !special.check(v6Text(groups, { compress: false, pad: false, upper: false, dottedTail: false, bracketed: false }), "ipv6"));
    fc.assert(
      fc.property(forms, ([groups, style]) => {
        const text = v6Text(groups, style);
        assert.equal(category(text), null, text);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  test("a loopback address in any URL spelling (decimal, hex, octal, short, IPv6 forms) is refused before connecting", async () => {
    const loopback = inV4Range(["127.0.0.0", 8]);
    const octets = (n: number) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
    const hostSpellings = (n: number): fc.Arbitrary<string> =>
      fc.constantFrom(
        v4Text(n),
        String(n), // one 32-bit number
        `0x${n.toString(16)}`,
        octets(n).map((o) => `0x${o.toString(16)}`).join("."),
        octets(n).map((o) => `0${o.toString(8)}`).join("."),
        `${octets(n)[0]}.${n & 0xffffff}`, // a.bcd
        `${octets(n)[0]}.${octets(n)[1]}.${n & 0xffff}`, // a.b.cd
        `${v4Text(n)}.`, // trailing dot
        `[::ffff:${v4Text(n)}]`,
        `[::ffff:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}]`,
        `[64:ff9b::${v4Text(n)}]`,
        `[2002:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}::1]`,
        "[::1]",
        "[0:0:0:0:0:0:0:1]",
        "localhost",
      );
    const urls = fc.tuple(loopback.chain(hostSpellings), fc.constantFrom("http", "https", "HTTP"), fc.constantFrom("", ":80", ":8080", ":1"), fc.string());
    await fc.assert(
      fc.asyncProperty(urls, async ([host, scheme, port, path]) => {
        const url = `${scheme}://${host}${port}/${encodeURIComponent(path)}`;
        const error = await fetchDocument(url, { maxBytes: 1024, timeoutMs: 2000, maxRedirects: 0, allowHosts: [] }).then(
          () => assert.fail(`${url} was fetched`),
          (caught: unknown) => caught,
        );
        assert.ok(error instanceof ServiceError, `${url}: ${String(error)}`);
        assert.equal(error.code, "UNPROCESSABLE_DOCUMENT", `${url}: ${error.message}`);
        assert.match(error.message, /resolves to a loopback address|points at/, `${url}: ${error.message}`);
      }),
      { numRuns: 100 },
    );
  });
});
