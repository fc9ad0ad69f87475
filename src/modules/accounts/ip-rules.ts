// Per-key IP allow-lists (IPv4 and IPv6 CIDR) on top of Node's BlockList.
import { BlockList, isIP } from 'node:net';
import { InvalidParameterError } from '../../errors/app-error.js';

const ipv4Mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) is checked as `1.2.3.4`. */
export function normaliseAddress(address: string): string {
  const mapped = ipv4Mapped.exec(address);
  return mapped?.[1] ?? address;
}

interface ParsedRange {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

function parseRange(value: string): ParsedRange | null {
  const [rawAddress, rawPrefix, ...rest] = value.trim().split('/');
  if (rawAddress === undefined || rest.length > 0) return null;
  const address = normaliseAddress(rawAddress);
  const version = isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  if (rawPrefix !== undefined && !/^\d{1,3}$/.test(rawPrefix)) return null;
  const prefix = rawPrefix === undefined ? max : Number(rawPrefix);
  if (prefix > max) return null;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Validates an `allowed_ips` list, naming the first bad entry; returns it trimmed. */
export function validateAllowedIps(values: readonly string[], param = 'allowed_ips'): string[] {
  return values.map((value, index) => {
    if (parseRange(value) === null) {
      throw new InvalidParameterError(
        `${param}[${index}]`,
        `'${value}' is not an IPv4 or IPv6 address or CIDR range (for example 203.0.113.0/24 or 2001:db8::/32).`,
      );
    }
    return value.trim();
  });
}

export class IpAllowList {
  private readonly list = new BlockList();
  readonly isEmpty: boolean;

  constructor(ranges: readonly string[]) {
    for (const range of ranges) {
      const parsed = parseRange(range);
      if (parsed !== null) this.list.addSubnet(parsed.address, parsed.prefix, parsed.family);
    }
    this.isEmpty = ranges.length === 0;
  }

  /** An empty list allows every address. */
  allows(address: string): boolean {
    if (this.isEmpty) return true;
    const normalised = normaliseAddress(address);
    const version = isIP(normalised);
    if (version === 0) return false;
    return this.list.check(normalised, version === 4 ? 'ipv4' : 'ipv6');
  }
}
