// SSRF guard for every marketplace, sandbox included: a webhook may only reach public unicast addresses, and the
// loopback too when WEBHOOK_ALLOW_LOOPBACK is on (a receiver on a developer's machine). The same check runs at
// registration and again at every delivery (DNS can change between them), and the delivery connects only to the
// addresses that passed, so a rebinding DNS server cannot swap in 127.0.0.1 or 169.254.169.254 after the check.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

export class AddressNotAllowed extends Error {}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

// [first address, prefix length]: private, loopback, link-local, CGNAT, multicast, unspecified and other reserved.
const BLOCKED_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
];

const BLOCKED_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  // NAT64 (RFC 6052, RFC 8215): a translator on the operator's network picks the IPv4 destination, so neither the
  // well-known prefix nor the local-use one is a receiver's own address.
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments: Teredo tunnels (2001::/32) reach IPv4 hosts of the tunnel's choosing
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // segment routing SIDs (RFC 9602)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
];

// IPv6 ranges that carry an IPv4 address in their last 32 bits: judged by that IPv4 address.
const EMBEDS_V4: [string, number][] = [
  ['::ffff:0:0', 96], // IPv4-mapped
  ['::', 96], // IPv4-compatible (deprecated)
];

/** True when the IP literal is a public unicast address a webhook may reach. */
export function isPublicAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return !BLOCKED_V4.some(([net, bits]) => inPrefix(v4Bytes(bare), v4Bytes(net), bits));
  if (family !== 6) return false;
  const bytes = v6Bytes(bare);
  if (BLOCKED_V6.some(([net, bits]) => inPrefix(bytes, v6Bytes(net), bits))) return false;
  // 6to4 (2002::/16) embeds its IPv4 address in bytes 2..5.
  if (inPrefix(bytes, v6Bytes('2002::'), 16)) return isPublicAddress(bytes.slice(2, 6).join('.'));
  for (const [net, bits] of EMBEDS_V4) {
    if (inPrefix(bytes, v6Bytes(net), bits)) return isPublicAddress(bytes.slice(12).join('.'));
  }
  return true;
}

/** True for the loopback: 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8. */
export function isLoopbackAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return inPrefix(v4Bytes(bare), v4Bytes('127.0.0.0'), 8);
  if (family !== 6) return false;
  const bytes = v6Bytes(bare);
  return inPrefix(bytes, v6Bytes('::1'), 128) || (inPrefix(bytes, v6Bytes('::ffff:0:0'), 96) && bytes[12] === 127);
}

export interface ResolveOptions {
  /** WEBHOOK_ALLOW_LOOPBACK: the loopback (addresses and localhost names) is allowed too. */
  allowLoopback?: boolean;
  /** node's dns.lookup unless a test plays the DNS server. */
  lookup?: LookupFunction;
  deadlineMs?: number;
}

/**
 * Resolves the host and returns every address to connect to, in the resolver's order; throws AddressNotAllowed when
 * any resolved address is not allowed (one private answer is enough to refuse: the client could be steered to it).
 * All answers are kept because "localhost" usually resolves to ::1 first, and a receiver may listen on 127.0.0.1 only.
 */
export async function resolveWebhookAddresses(
  hostname: string,
  options: ResolveOptions = {},
): Promise<CheckedAddress[]> {
  const { allowLoopback = false, lookup = dnsLookup, deadlineMs = DNS_DEADLINE_MS } = options;
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const localhostName = host === 'localhost' || host.endsWith('.localhost');
  if (localhostName && !allowLoopback) throw new AddressNotAllowed(`${host} is a loopback name`);
  let answers: { address: string; family: number }[];
  try {
    answers = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookupAll(lookup, host, deadlineMs);
  } catch {
    throw new AddressNotAllowed(`${host} does not resolve`);
  }
  if (answers.length === 0) throw new AddressNotAllowed(`${host} does not resolve`);
  // RFC 6761 §6.3: localhost names are the loopback, whatever a resolver claims.
  const allowed = (address: string) =>
    localhostName
      ? isLoopbackAddress(address)
      : isPublicAddress(address) || (allowLoopback && isLoopbackAddress(address));
  const refused = answers.find((answer) => !allowed(answer.address));
  if (refused) {
    const what = allowLoopback ? 'a public or loopback address' : 'a public address';
    throw new AddressNotAllowed(
      isIP(host) ? `${host} is not ${what}` : `${host} resolves to ${refused.address}, which is not ${what}`,
    );
  }
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
}

/**
 * A DNS server that never answers must not outlast a delivery attempt (30 s in all, the HTTP timeout included): past
 * this the name counts as not resolving, so the attempt is logged and retried like any other failure.
 */
const DNS_DEADLINE_MS = 4_000;

/** Every answer for the name, through a resolver with node's dns.lookup signature (tests pass their own). */
function lookupAll(lookup: LookupFunction, host: string, deadlineMs: number): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no DNS answer within ${deadlineMs} ms`)), deadlineMs);
    lookup(host, { all: true, verbatim: true }, (error, address, family) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(Array.isArray(address) ? address : [{ address, family: family ?? isIP(address) }]);
    });
  });
}

function inPrefix(address: number[], network: number[], bits: number): boolean {
  for (let i = 0; i < bits; i += 1) {
    const mask = 0x80 >> (i % 8);
    if ((address[i >> 3] & mask) !== (network[i >> 3] & mask)) return false;
  }
  return true;
}

function v4Bytes(ip: string): number[] {
  return ip.split('.').map(Number);
}

/** 16 bytes of an IPv6 literal (isIP already said it is valid), dotted IPv4 tail included. */
function v6Bytes(ip: string): number[] {
  let text = ip.toLowerCase();
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = v4Bytes(tail[1]);
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const groups = rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

/**
 * A `lookup` for an HTTP request that answers every lookup with the addresses already checked, so the connection goes to
 * exactly what passed the check (a second DNS answer could name another): all of them when Node races the families,
 * else the first.
 */
export function pinnedLookup(pinned: CheckedAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all)
      callback(
        null,
        pinned.map(({ address, family }) => ({ address, family })),
      );
    else callback(null, pinned[0].address, pinned[0].family);
  }) as unknown as LookupFunction;
}
