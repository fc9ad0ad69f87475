import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors/app-error.js';
import { IpAllowList, validateAllowedIps } from './ip-rules.js';

describe('IP allow-lists', () => {
  it('allows everything when empty', () => {
    expect(new IpAllowList([]).allows('203.0.113.9')).toBe(true);
  });

  it('matches IPv4 ranges and single addresses', () => {
    const list = new IpAllowList(['203.0.113.0/24', '198.51.100.7']);
    expect(list.allows('203.0.113.200')).toBe(true);
    expect(list.allows('198.51.100.7')).toBe(true);
    expect(list.allows('198.51.100.8')).toBe(false);
    expect(list.allows('10.0.0.1')).toBe(false);
  });

  it('matches IPv6 ranges', () => {
    const list = new IpAllowList(['2001:db8::/32']);
    expect(list.allows('2001:db8:1::5')).toBe(true);
    expect(list.allows('2001:db9::1')).toBe(false);
  });

  it('treats an IPv4-mapped IPv6 client address as its IPv4 address', () => {
    const list = new IpAllowList(['203.0.113.0/24']);
    expect(list.allows('::ffff:203.0.113.5')).toBe(true);
    expect(list.allows('::ffff:192.0.2.5')).toBe(false);
  });

  it('names the first bad entry', () => {
    expect(validateAllowedIps([' 10.0.0.0/8 ', '::1/128'])).toEqual(['10.0.0.0/8', '::1/128']);
    for (const bad of ['10.0.0.0/33', 'fe80::/129', 'example.com', '10.0.0.0/8/1', '1.2.3']) {
      try {
        validateAllowedIps(['10.0.0.0/8', bad]);
        expect.fail(`accepted ${bad}`);
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).param).toBe('allowed_ips[1]');
      }
    }
  });
});
