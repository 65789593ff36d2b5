// Keeping webhook deliveries away from internal networks (contract §5: https + public addresses
// only, checked at registration AND at connect time, every resolved address, IP literals too).
//
// Two layers, because a check at registration alone is defeated by DNS rebinding (the name
// resolves to a public address when registered and to 127.0.0.1 when we connect):
//  1. checkWebhookUrl — friendly refusal when the endpoint is created or updated;
//  2. createGuardedDispatcher — an undici Agent that re-resolves at connect time and refuses to
//     open a socket if ANY resolved address is not public: it checks the addresses the socket uses.

import dns from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector } from 'undici';
import ipaddr from 'ipaddr.js';

export type AddressClass =
  | 'public' | 'loopback' | 'private' | 'link-local' | 'cgnat' | 'metadata' | 'unspecified' | 'multicast' | 'reserved';

// Cloud instance-metadata endpoints: the classic SSRF prize (credentials). Named separately so
// logs and refusals say what was being reached. Both families; checked before the wider ranges.
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean…
  '169.254.170.2', // AWS ECS task credentials
  '100.100.100.200', // Alibaba Cloud
  'fd00:ec2::254', // AWS IMDS over IPv6
]);

// ipaddr.js range names → our classes. Any range not listed (new ones in future versions
// included) falls back to 'reserved': unknown means refused.
const IPV4_RANGES: Record<string, AddressClass> = {
  unicast: 'public', unspecified: 'unspecified', broadcast: 'reserved', multicast: 'multicast',
  linkLocal: 'link-local', loopback: 'loopback', carrierGradeNat: 'cgnat', private: 'private',
  reserved: 'reserved', // 192.0.0/24, TEST-NETs 1-3, benchmarking 198.18/15, 240/4, 6to4 relay
  as112: 'public', amt: 'public', // globally reachable anycast services
};
const IPV6_RANGES: Record<string, AddressClass> = {
  unicast: 'public', unspecified: 'unspecified', linkLocal: 'link-local', multicast: 'multicast',
  loopback: 'loopback', uniqueLocal: 'private', deprecatedSiteLocal: 'private',
  amt: 'public', as112v6: 'public',
  // reserved (2001::/23, 2001:db8::/32 documentation, 3fff::/20), benchmarking 2001:2::/48,
  // discard, ORCHID, teredo (embeds an obfuscated IPv4 we will not reason about), segment routing.
};

/** Classifies an IP address (any notation parseHostLiteral accepts). Throws on a non-address. */
export function classifyAddress(ip: string): AddressClass {
  const literal = parseHostLiteral(ip);
  if (literal === null) throw new TypeError(`not an IP address: ${ip}`);
  if (METADATA_ADDRESSES.has(literal)) return 'metadata';
  const addr = ipaddr.parse(literal);
  if (addr.kind() === 'ipv4') return IPV4_RANGES[addr.range()] ?? 'reserved';

  const v6 = addr as ipaddr.IPv6;
  const p = v6.parts;
  const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  switch (v6.range()) {
    // These carry an IPv4 address that the kernel or a NAT64/6to4 gateway will actually reach:
    // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (RFC 6145), 64:ff9b::a.b.c.d (NAT64), 2002:AABB:CCDD::/48.
    case 'ipv4Mapped':
    case 'rfc6145':
      return classifyAddress(embedded(p[6]!, p[7]!));
    case '6to4':
      return classifyAddress(embedded(p[1]!, p[2]!));
    case 'rfc6052':
      // 64:ff9b:1::/48 is the local-use NAT64 prefix (RFC 8215): a private translator by definition.
      return p[1] === 0xff9b && p[2] === 0 ? classifyAddress(embedded(p[6]!, p[7]!)) : 'private';
    case 'unicast':
      // Only 2000::/3 is allocated global unicast; that includes the deprecated IPv4-compatible
      // ::a.b.c.d form, which ipaddr.js calls unicast.
      return (p[0]! & 0xe000) === 0x2000 ? 'public' : 'reserved';
    default:
      return IPV6_RANGES[v6.range()] ?? 'reserved';
  }
}

const URL_DELIMITERS = /[/?#@:\\\s]/;

/**
 * The canonical address if `host` is an IP literal in any notation a URL parser or inet_aton
 * accepts, else null (a name to resolve). IPv4: the WHATWG parser behind `new URL()` already
 * understands decimal/hex/octal integers, short forms, mixed forms, a trailing dot,
 * percent-encoding and full-width digits, and rewrites them to dotted decimal — so we ask it.
 * IPv6 (bracketed or bare, zone id dropped) it does not take bare or with a zone: ipaddr.js does.
 */
export function parseHostLiteral(host: string): string | null {
  let text = host.trim().toLowerCase();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (text === '') return null;

  if (text.includes(':')) {
    const withoutZone = text.replace(/%.*$/, '');
    return ipaddr.IPv6.isValid(withoutZone) ? ipaddr.IPv6.parse(withoutZone).toString() : null;
  }
  if (URL_DELIMITERS.test(text)) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${text}/`).hostname;
  } catch {
    return null; // e.g. "4294967296" or "1.2.3.4.5": neither an address nor a valid host
  }
  return ipaddr.IPv4.isValidFourPartDecimal(hostname) ? ipaddr.IPv4.parse(hostname).toString() : null;
}

export type CheckResult = { ok: true } | { ok: false; reason: string };

export interface CheckWebhookUrlOptions {
  allowPrivateNetworks: boolean;
  /** Resolves a host name to addresses; dns.promises.lookup(host, { all: true }) by default. */
  resolve?: (host: string) => Promise<string[]>;
}

const defaultResolve = async (host: string): Promise<string[]> =>
  (await dns.promises.lookup(host, { all: true })).map((entry) => entry.address);

/** Registration-time check of an endpoint URL; the reason is safe to show to the API caller. */
export async function checkWebhookUrl(url: string, opts: CheckWebhookUrlOptions): Promise<CheckResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'URL could not be parsed' };
  }
  const allowedSchemes = opts.allowPrivateNetworks ? ['https', 'http'] : ['https'];
  if (!allowedSchemes.includes(parsed.protocol.slice(0, -1))) {
    return { ok: false, reason: `URL must use ${allowedSchemes.join(' or ')}` };
  }
  // Credentials in the URL would end up in logs and delivery listings.
  if (parsed.username !== '' || parsed.password !== '') {
    return { ok: false, reason: 'URL must not contain a username or password' };
  }
  if (parsed.hostname === '') return { ok: false, reason: 'URL has no host' };
  // Development mode: private targets are the point, and the host may not resolve yet.
  if (opts.allowPrivateNetworks) return { ok: true };

  const host = parsed.hostname.replace(/\.$/, '');
  const literal = parseHostLiteral(host);
  let addresses: string[];
  if (literal !== null) {
    addresses = [literal];
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    return { ok: false, reason: 'host resolves to a loopback address' }; // RFC 6761: always loopback
  } else {
    try {
      addresses = await (opts.resolve ?? defaultResolve)(host);
    } catch {
      return { ok: false, reason: `host ${host} could not be resolved` };
    }
    if (addresses.length === 0) return { ok: false, reason: `host ${host} did not resolve to any address` };
  }
  const blocked = firstBlockedClass(addresses);
  return blocked === null ? { ok: true } : { ok: false, reason: `host resolves to a ${blocked} address` };
}

/** Error raised at connect time; `code` lets the dispatcher log it as a policy refusal. */
export class SsrfBlockedError extends Error {
  readonly code = 'ESSRF';
  constructor(readonly addressClass: AddressClass, host: string) {
    // Names the class and the host as registered, never a resolved internal address: the message
    // is stored in delivery logs that customers read.
    super(`refusing to connect to ${host}: it resolves to a ${addressClass} address`);
    this.name = 'SsrfBlockedError';
  }
}

/** Wraps a dns.lookup-style function so that it fails with ESSRF unless EVERY address is public. */
export function guardLookup(lookup: typeof dns.lookup = dns.lookup): net.LookupFunction {
  return (hostname, options, callback) => {
    // Always ask for all addresses, whatever the caller wanted, so none goes unchecked.
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const blocked = addresses.length === 0 ? 'unspecified' : firstBlockedClass(addresses.map((a) => a.address));
      if (blocked !== null) return callback(new SsrfBlockedError(blocked, hostname), '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

export interface GuardedDispatcherOptions {
  allowPrivateNetworks: boolean;
  connectTimeoutMs?: number;
  lookup?: typeof dns.lookup;
}

/** The undici dispatcher every webhook delivery goes through. */
export function createGuardedDispatcher(opts: GuardedDispatcherOptions): Agent {
  const timeout = opts.connectTimeoutMs ?? 10_000;
  if (opts.allowPrivateNetworks) {
    return new Agent({ connect: { timeout, ...(opts.lookup ? { lookup: opts.lookup } : {}) } });
  }
  // undici passes `connect` options through to net/tls.connect, which call `lookup` for host
  // names but skip it for IP literals, so literals are checked here before connecting.
  const connector = buildConnector({ timeout, lookup: guardLookup(opts.lookup) });
  return new Agent({
    connect(options, callback) {
      const blocked = net.isIP(options.hostname) ? firstBlockedClass([options.hostname]) : null;
      if (blocked === null) return connector(options, callback);
      // Fail asynchronously, as a real connect error would.
      process.nextTick(callback, new SsrfBlockedError(blocked, options.hostname), null);
    },
  });
}

/** The first non-public class among `addresses`, or null; an unparsable answer is not trusted. */
function firstBlockedClass(addresses: string[]): AddressClass | null {
  for (const address of addresses) {
    let addressClass: AddressClass;
    try {
      addressClass = classifyAddress(address);
    } catch {
      addressClass = 'reserved';
    }
    if (addressClass !== 'public') return addressClass;
  }
  return null;
}
