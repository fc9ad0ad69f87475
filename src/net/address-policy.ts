// Which hosts and addresses page fetches may reach: the SSRF rules and the operator's allow-list.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Host names of cloud metadata services; refused by name, before any DNS lookup. */
export const metadataHostNames: ReadonlySet<string> = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

/**
 * Cloud metadata endpoints (AWS/GCP/Azure/OCI/DigitalOcean, AWS over IPv6, ECS task credentials,
 * Alibaba, Oracle Cloud Classic). They hand out credentials, so only an allow-list entry naming the
 * exact address (or metadata host name) unlocks them; a CIDR or another host name never does.
 */
const metadataAddresses: readonly Address[] = [
  '169.254.169.254',
  'fd00:ec2::254',
  '169.254.170.2',
  '100.100.100.200',
  '192.0.0.192',
].map((text) => ipaddr.parse(text));

const ipv4RangeNames: Readonly<Record<string, string>> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
};

const ipv6RangeNames: Readonly<Record<string, string>> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local',
  reserved: 'reserved',
  benchmarking: 'reserved',
  discard: 'reserved',
};

function sameAddress(a: Address, b: Address): boolean {
  return a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();
}

function isMetadataAddress(address: Address): boolean {
  return metadataAddresses.some((known) => sameAddress(known, address));
}

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 addresses an IPv6 address stands for (SIIT, NAT64 well-known prefix, 6to4, Teredo server
 * and client): each is judged like the IPv4 address itself, because packets to it end up there.
 * Null when the address embeds none. (IPv4-mapped addresses are unwrapped by parseAddress.)
 */
function embeddedIpv4(address: ipaddr.IPv6): { form: string; addresses: ipaddr.IPv4[] } | null {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  switch (address.range() as string) {
    case 'rfc6145':
      return { form: 'IPv4-translated', addresses: [ipv4FromParts(p[6], p[7])] };
    case 'rfc6052':
      // 64:ff9b::/96 embeds the address in its last 32 bits; 64:ff9b:1::/48 is local-use (below).
      return p[2] === 0 ? { form: 'NAT64', addresses: [ipv4FromParts(p[6], p[7])] } : null;
    case '6to4':
      return { form: '6to4', addresses: [ipv4FromParts(p[1], p[2])] };
    case 'teredo':
      // Server in bits 32–63, client (inverted) in the last 32 bits.
      return {
        form: 'Teredo',
        addresses: [ipv4FromParts(p[2], p[3]), ipv4FromParts(p[6] ^ 0xffff, p[7] ^ 0xffff)],
      };
    default:
      return null;
  }
}

/**
 * Why an address may not be fetched without an allow-list entry, as a phrase ("a loopback
 * address"), or null for an ordinary public unicast address.
 */
export function blockedAddressRule(text: string): string | null {
  const address = parseAddress(text);
  if (address === null) return 'not an IP address';
  return ruleFor(address);
}

const metadataRule = 'a cloud metadata address';

function ruleFor(address: Address): string | null {
  if (isMetadataAddress(address)) return metadataRule;
  if (address.kind() === 'ipv4') {
    const range = address.range();
    if (range === 'unicast') return null;
    return `${article(ipv4RangeNames[range] ?? 'special-purpose')} address`;
  }
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded !== null) {
    for (const inner of embedded.addresses) {
      const rule = ruleFor(inner);
      if (rule !== null) return `${article(embedded.form)} form of ${rule}`;
    }
    return null;
  }
  const range = v6.range() as string;
  if (range === 'rfc6052') return 'a local-use NAT64 address';
  const p = v6.parts;
  // ::/96 (deprecated IPv4-compatible) other than :: and ::1, which range() names already.
  if (range === 'unicast' && p.slice(0, 6).every((part) => part === 0)) {
    return 'an IPv4-compatible address';
  }
  if (range === 'unicast') return null;
  return `${article(ipv6RangeNames[range] ?? 'special-purpose')} address`;
}

function article(noun: string): string {
  // "an unspecified", "an IPv4-mapped", but "a unique-local".
  return /^(?:[aeio]|u(?!ni)|IPv4)/i.test(noun) ? `an ${noun}` : `a ${noun}`;
}

/** Parses a literal IPv4/IPv6 address (brackets allowed); IPv4-mapped IPv6 becomes IPv4. */
function parseAddress(text: string): Address | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIP(bare) === 0) return null;
  return ipaddr.process(bare);
}

/** Whether a host name is a cloud metadata service's name. */
export function isMetadataHostName(hostname: string): boolean {
  return metadataHostNames.has(normaliseHostName(hostname));
}

function normaliseHostName(hostname: string): string {
  return hostname.toLowerCase().replace(/\.+$/, '');
}

type AllowEntry =
  | { kind: 'host'; name: string; port: number | null }
  | { kind: 'subdomains'; suffix: string; port: number | null }
  | { kind: 'range'; range: [Address, number]; exact: boolean; port: number | null };

const hostNamePattern =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

export class AllowListEntryError extends Error {
  constructor(
    readonly entry: string,
    readonly index: number,
    /** The setting the list comes from (the web agent's, or the tool connections'). */
    readonly setting = 'web.allowed_private_targets',
  ) {
    super(
      `${setting}[${index}] '${entry}' is not a host name, *.domain, IP address or ` +
        `CIDR range, each with an optional :port (for example intranet.example, *.corp.example, ` +
        `10.0.0.0/8, 127.0.0.1:8080, [::1]:8080).`,
    );
    this.name = 'AllowListEntryError';
  }
}

function parsePort(text: string | undefined): number | null | undefined {
  if (text === undefined) return null;
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65_535 ? port : undefined;
}

function parseEntry(raw: string): AllowEntry | null {
  const text = raw.trim().toLowerCase();
  let body: string;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
  if (bracketed !== null) {
    body = bracketed[1] ?? '';
    portText = bracketed[2];
    if (!body.includes(':')) return null;
  } else if (text.split(':').length === 2) {
    // One colon: host:port, IPv4:port or IPv4-CIDR:port. More colons: a bare IPv6 address or range.
    [body = '', portText] = text.split(':');
  } else {
    body = text;
  }
  const port = parsePort(portText);
  if (port === undefined || body === '') return null;

  if (body.includes('/')) {
    const [addressText = '', prefixText = ''] = body.split('/');
    if (isIP(addressText) === 0 || !/^\d{1,3}$/.test(prefixText)) return null;
    if (!ipaddr.isValidCIDR(body)) return null;
    const [address, prefix] = ipaddr.parseCIDR(body);
    const full = address.kind() === 'ipv4' ? 32 : 128;
    return { kind: 'range', range: [address, prefix], exact: prefix === full, port };
  }
  if (isIP(body) !== 0) {
    const address = ipaddr.process(body);
    return {
      kind: 'range',
      range: [address, address.kind() === 'ipv4' ? 32 : 128],
      exact: true,
      port,
    };
  }
  const wildcard = body.startsWith('*.');
  const name = normaliseHostName(domainToASCII(wildcard ? body.slice(2) : body));
  if (!hostNamePattern.test(name)) return null;
  return wildcard ? { kind: 'subdomains', suffix: name, port } : { kind: 'host', name, port };
}

function portMatches(entry: AllowEntry, port: number): boolean {
  return entry.port === null || entry.port === port;
}

function inRange(address: Address, [network, prefix]: [Address, number]): boolean {
  // An IPv4 entry also covers the IPv4-mapped form, which parseAddress already turned into IPv4.
  return address.kind() === network.kind() && address.match(network, prefix);
}

/**
 * `web.allowed_private_targets`: entries that let page fetches reach addresses the SSRF rules refuse.
 *
 * - `intranet.example` — that host name (any port); every address it resolves to is allowed.
 * - `*.corp.example` — any subdomain of corp.example (not corp.example itself).
 * - `10.1.2.3`, `::1`, `[::1]` — that address, whichever host name resolves to it.
 * - `10.0.0.0/8`, `fd00::/8`, `[fd00::/8]` — any address in that range.
 * - Any of them with `:port` (`127.0.0.1:8080`, `intranet.example:443`, `[::1]:8080`) — that port only.
 *
 * Cloud metadata addresses (169.254.169.254, fd00:ec2::254, …) are unlocked only by an entry naming
 * that exact address, or a metadata host name naming itself: never by a range or another host name.
 */
export class TargetAllowList {
  private constructor(private readonly entries: readonly AllowEntry[]) {}

  static readonly empty = new TargetAllowList([]);

  /** Throws AllowListEntryError naming the first malformed entry (as an item of `setting`). */
  static parse(values: readonly string[], setting?: string): TargetAllowList {
    const entries = values.map((value, index) => {
      const entry = parseEntry(value);
      if (entry === null) throw new AllowListEntryError(value, index, setting);
      return entry;
    });
    return new TargetAllowList(entries);
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** Whether a host-name entry covers this host (a name, not an IP literal) on this port. */
  allowsHost(hostname: string, port: number): boolean {
    const name = normaliseHostName(hostname);
    return this.entries.some((entry) => {
      if (!portMatches(entry, port)) return false;
      if (entry.kind === 'host') return entry.name === name;
      if (entry.kind === 'subdomains') return name.endsWith(`.${entry.suffix}`);
      return false;
    });
  }

  /** Whether an address/range entry covers this address on this port. */
  allowsAddress(text: string, port: number): boolean {
    const address = parseAddress(text);
    if (address === null) return false;
    // Embedded forms count too (a NAT64 range must not unlock 64:ff9b::a9fe:a9fe).
    const metadata = ruleFor(address)?.endsWith(metadataRule) === true;
    return this.entries.some(
      (entry) =>
        entry.kind === 'range' &&
        portMatches(entry, port) &&
        (entry.exact || !metadata) &&
        inRange(address, entry.range),
    );
  }
}

export interface AddressVerdict {
  allowed: boolean;
  /** The rule that refused it ("a loopback address"), when refused. */
  rule: string | null;
}

/**
 * Judges one resolved address of `hostname` (or the literal itself): refused when it falls under a
 * rule and neither the host name (for non-metadata addresses) nor the address is allow-listed.
 */
export function judgeAddress(
  allowList: TargetAllowList,
  hostname: string,
  address: string,
  port: number,
): AddressVerdict {
  const rule = blockedAddressRule(address);
  if (rule === null) return { allowed: true, rule: null };
  if (allowList.allowsAddress(address, port)) return { allowed: true, rule: null };
  // Also "a NAT64 form of a cloud metadata address" and the like.
  const metadata = rule.endsWith(metadataRule);
  const hostIsName = isIP(hostname.replace(/^\[|\]$/g, '')) === 0;
  if (hostIsName && (!metadata || isMetadataHostName(hostname))) {
    if (allowList.allowsHost(hostname, port)) return { allowed: true, rule: null };
  }
  return { allowed: false, rule };
}
