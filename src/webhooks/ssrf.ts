// SSRF guard for live marketplaces: a webhook may only reach public unicast addresses. The same check runs at
// registration and again at every delivery (DNS can change between them), and the delivery connects to the very
// address that passed, so a rebinding DNS server cannot swap in 127.0.0.1 after the check.
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
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
];

// IPv6 ranges that carry an IPv4 address in their last 32 bits: judged by that IPv4 address.
const EMBEDS_V4: [string, number][] = [
  ['::ffff:0:0', 96], // IPv4-mapped
  ['::', 96], // IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64
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

/**
 * Resolves the host and returns the address to connect to; throws AddressNotAllowed when any resolved address is
 * not public (one private answer is enough to refuse: the client could be steered to it). `lookup` is node's
 * dns.lookup unless a test plays the DNS server.
 */
export async function resolvePublicAddress(
  hostname: string,
  lookup: LookupFunction = dnsLookup,
  deadlineMs = DNS_DEADLINE_MS,
): Promise<CheckedAddress> {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) throw new AddressNotAllowed(`${host} is a loopback name`);
  let answers: { address: string; family: number }[];
  try {
    answers = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookupAll(lookup, host, deadlineMs);
  } catch {
    throw new AddressNotAllowed(`${host} does not resolve`);
  }
  if (answers.length === 0) throw new AddressNotAllowed(`${host} does not resolve`);
  const refused = answers.find((answer) => !isPublicAddress(answer.address));
  if (refused) throw new AddressNotAllowed(`${host} resolves to ${refused.address}, which is not a public address`);
  const first = answers[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
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
    const mask = 0x80 >> i % 8;
    if ((address[i >> 3]! & mask) !== (network[i >> 3]! & mask)) return false;
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
    const [a, b, c, d] = v4Bytes(tail[1]!);
    text = `${text.slice(0, tail.index)}${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
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
