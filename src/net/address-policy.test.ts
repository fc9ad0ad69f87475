// The SSRF address rules and the allow-list syntax, address by address.
import { describe, expect, it } from 'vitest';
import {
  AllowListEntryError,
  blockedAddressRule,
  judgeAddress,
  TargetAllowList,
} from './address-policy.js';

describe('blockedAddressRule', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['0.0.0.0', 'an unspecified address'],
    ['0.1.2.3', 'an unspecified address'],
    ['10.0.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.0.1', 'a private address'],
    ['169.254.0.1', 'a link-local address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['169.254.170.2', 'a cloud metadata address'],
    ['100.100.100.200', 'a cloud metadata address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['224.0.0.251', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['240.0.0.1', 'a reserved address'],
    ['198.18.0.1', 'a reserved address'],
    ['203.0.113.9', 'a reserved address'],
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['fe80::1', 'a link-local address'],
    ['fc00::1', 'a unique-local address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['ff02::1', 'a multicast address'],
    ['fec0::1', 'a site-local address'],
    ['2001:db8::1', 'a reserved address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:10.1.1.1', 'a private address'],
    ['::ffff:169.254.169.254', 'a cloud metadata address'],
    ['::ffff:0:127.0.0.1', 'an IPv4-translated form of a loopback address'],
    ['64:ff9b::7f00:1', 'a NAT64 form of a loopback address'],
    ['64:ff9b::a9fe:a9fe', 'a NAT64 form of a cloud metadata address'],
    ['64:ff9b:1::1', 'a local-use NAT64 address'],
    ['2002:7f00:1::', 'a 6to4 form of a loopback address'],
    ['2002:c0a8:101::1', 'a 6to4 form of a private address'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'a Teredo form of a loopback address'],
    ['::7f00:1', 'an IPv4-compatible address'],
  ])('%s is %s', (address, rule) => {
    expect(blockedAddressRule(address)).toBe(rule);
  });

  it.each([
    '8.8.8.8',
    '93.184.215.14',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is an ordinary public address', (address) => {
    expect(blockedAddressRule(address)).toBeNull();
  });

  it('refuses what is not an address at all', () => {
    expect(blockedAddressRule('localhost')).toBe('not an IP address');
  });
});

describe('TargetAllowList', () => {
  it('parses every documented form', () => {
    const list = TargetAllowList.parse([
      'Intranet.Example',
      '*.corp.example',
      '10.1.2.3',
      '192.168.0.0/16',
      'fd00::/8',
      '[fd12::/16]:8443',
      '::1',
      '[::2]:8080',
      '127.0.0.1:4000',
      'wiki.example:443',
      ' 172.16.0.0/12 ',
      '::ffff:10.9.9.9',
    ]);
    expect(list.isEmpty).toBe(false);
    expect(list.allowsHost('intranet.example', 80)).toBe(true);
    expect(list.allowsHost('INTRANET.example.', 8080)).toBe(true);
    expect(list.allowsHost('a.corp.example', 80)).toBe(true);
    expect(list.allowsHost('a.b.corp.example', 80)).toBe(true);
    expect(list.allowsHost('corp.example', 80)).toBe(false);
    expect(list.allowsHost('evilcorp.example', 80)).toBe(false);
    expect(list.allowsHost('wiki.example', 443)).toBe(true);
    expect(list.allowsHost('wiki.example', 80)).toBe(false);

    expect(list.allowsAddress('10.1.2.3', 80)).toBe(true);
    expect(list.allowsAddress('::ffff:10.1.2.3', 80)).toBe(true);
    expect(list.allowsAddress('10.1.2.4', 80)).toBe(false);
    expect(list.allowsAddress('10.9.9.9', 80)).toBe(true);
    expect(list.allowsAddress('192.168.44.1', 80)).toBe(true);
    expect(list.allowsAddress('172.20.0.1', 80)).toBe(true);
    expect(list.allowsAddress('fd99::1', 80)).toBe(true);
    expect(list.allowsAddress('fd12::1', 8443)).toBe(true);
    expect(list.allowsAddress('::1', 1234)).toBe(true);
    expect(list.allowsAddress('::2', 8080)).toBe(true);
    expect(list.allowsAddress('::2', 8081)).toBe(false);
    expect(list.allowsAddress('127.0.0.1', 4000)).toBe(true);
    expect(list.allowsAddress('127.0.0.1', 4001)).toBe(false);
  });

  it('accepts an internationalised host name in Unicode', () => {
    expect(TargetAllowList.parse(['bücher.example']).allowsHost('xn--bcher-kva.example', 80)).toBe(
      true,
    );
  });

  it.each([
    'http://intranet.example/',
    'intranet.example:99999',
    'intranet.example:0',
    '10.0.0.0/33',
    '10.0.0/8',
    '[127.0.0.1]',
    'under score!.example',
    '*',
    '',
    '1.2.3.4:80:90',
  ])("refuses '%s'", (entry) => {
    expect(() => TargetAllowList.parse([entry])).toThrow(AllowListEntryError);
  });

  it('unlocks metadata addresses only by their exact address', () => {
    const ranges = TargetAllowList.parse(['169.254.0.0/16', '::/0', '0.0.0.0/0']);
    expect(ranges.allowsAddress('169.254.169.254', 80)).toBe(false);
    expect(ranges.allowsAddress('64:ff9b::a9fe:a9fe', 80)).toBe(false);
    expect(ranges.allowsAddress('64:ff9b::a9fe:101', 80)).toBe(true);
    expect(ranges.allowsAddress('fd00:ec2::254', 80)).toBe(false);
    expect(ranges.allowsAddress('169.254.1.1', 80)).toBe(true);
    const exact = TargetAllowList.parse(['169.254.169.254', '169.254.170.2/32']);
    expect(exact.allowsAddress('169.254.169.254', 80)).toBe(true);
    expect(exact.allowsAddress('169.254.170.2', 80)).toBe(true);
  });
});

describe('judgeAddress', () => {
  const list = TargetAllowList.parse(['intranet.example', 'metadata.google.internal']);

  it('lets an allow-listed host name reach its private addresses, but not metadata ones', () => {
    expect(judgeAddress(list, 'intranet.example', '10.0.0.5', 80).allowed).toBe(true);
    expect(judgeAddress(list, 'intranet.example', '169.254.169.254', 80)).toEqual({
      allowed: false,
      rule: 'a cloud metadata address',
    });
    expect(judgeAddress(list, 'metadata.google.internal', '169.254.169.254', 80).allowed).toBe(
      true,
    );
    expect(judgeAddress(list, 'other.example', '10.0.0.5', 80)).toEqual({
      allowed: false,
      rule: 'a private address',
    });
  });

  it('allows public addresses whatever the list says', () => {
    expect(judgeAddress(TargetAllowList.empty, 'example.com', '93.184.215.14', 443)).toEqual({
      allowed: true,
      rule: null,
    });
  });
});
