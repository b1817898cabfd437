import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  canonicalIP,
  isIPv6String,
  isValidCIDR,
  isValidIP,
  isValidIPv4Address,
  isValidIPv6Address,
} from './ip.js';

// Kubernetes 1.32's IsValidIP and IsValidCIDR: ParseIPSloppy and ParseCIDRSloppy, so the
// forms 1.33's strict validation refuses (leading zeros, IPv4-mapped IPv6, non-canonical
// IPv6, bits past the prefix) are all valid here.
describe('isValidIP (Kubernetes 1.32, ParseIPSloppy)', () => {
  const valid = [
    '1.2.3.4',
    '0.0.0.0',
    '255.255.255.255',
    '1234::abcd',
    '::',
    '::1',
    '2001:db8::1',
    'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '1:0:0:1::',
    '0:0:0:0:0:0:0:0',
    '0001:002:03:4::',
    '1234::ABCD',
    '::1.2.3.4',
    '1.1.1.01',
    '010.0.0.5',
    '10.178.000.50',
    '::ffff:1.1.1.1',
    '::ffff:101:101',
  ];
  const invalidIPs = [
    '',
    'aaaaaaa',
    'myhost.mydomain',
    '1.2.3.0/24',
    '1.2.3.400',
    '-1.0.0.0',
    '1.2.3',
    '1.2.3.4.5',
    '2001:db8::10005',
    '1.2.3.4:80',
    '[2001:db8::1]',
    '[2001:db8::1]:80',
    'example.com:80',
    '1234::abcd%eth0',
    '169.254.0.0%eth0',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    '1:2:3:4:5:6:7',
    ':1::',
    '1.2.3.4::',
  ];
  for (const ip of valid)
    it(`${JSON.stringify(ip)} is valid`, () => assert.deepEqual(isValidIP('f', ip), []));
  for (const ip of invalidIPs) {
    it(`${JSON.stringify(ip)} is not`, () => {
      const errs = isValidIP('spec.clusterIP', ip);
      assert.equal(errs.length, 1);
      assert.equal(errs[0]!.field, 'spec.clusterIP');
      assert.equal(errs[0]!.type, 'FieldValueInvalid');
      assert.equal(errs[0]!.badValue, ip);
      assert.equal(errs[0]!.message, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
    });
  }
  it('canonicalizes', () => {
    assert.equal(canonicalIP('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
    assert.equal(canonicalIP('010.001.002.003'), '10.1.2.3');
    assert.equal(canonicalIP('::ffff:1.2.3.4'), '1.2.3.4');
    assert.equal(canonicalIP('not-an-ip'), undefined);
  });
  it('tells the families apart as IsIPv6String (an IPv4-mapped address is IPv4)', () => {
    assert.equal(isIPv6String('2001:db8::1'), true);
    assert.equal(isIPv6String('::ffff:1.2.3.4'), false);
    assert.equal(isIPv6String('010.0.0.1'), false);
    assert.equal(isIPv6String('nope'), false);
    assert.deepEqual(isValidIPv4Address('a', '::ffff:1.2.3.4'), []);
    assert.equal(isValidIPv4Address('a', '2001:db8::1')[0]!.message, 'must be a valid IPv4 address');
    assert.deepEqual(isValidIPv6Address('a', '2001:db8::1'), []);
    assert.equal(isValidIPv6Address('a', '1.2.3.4')[0]!.message, 'must be a valid IPv6 address');
  });
});

describe('isValidCIDR (Kubernetes 1.32, ParseCIDRSloppy)', () => {
  const cases: [string, boolean][] = [
    ['1.0.0.0/8', true],
    ['0.0.0.0/0', true],
    ['1.1.1.1/32', true],
    ['10.244.0.0/16', true],
    ['2001:4860:4860::/48', true],
    ['::/0', true],
    ['::1/128', true],
    ['2a00:79e0:2:0::/64', true],
    ['2001:DB8::/64', true],
    ['1.1.01.0/24', true],
    ['::ffff:1.1.1.0/120', true],
    ['1.2.3.4/24', true],
    ['2001:db8::1/64', true],
    ['192.168.0.0/016', true],
    ['', false],
    ['aaaaaaa', false],
    ['1.2.3.4', false],
    ['192.168.0.1/healthz', false],
    ['192.168.0.1/0/99', false],
    ['192.168.0.0/-16', false],
    ['192.168.0.0/+16', false],
    ['192.168.0.0/33', false],
    ['::/129', false],
    ['192.168.0.0/', false],
  ];
  for (const [cidr, ok] of cases) {
    it(`${JSON.stringify(cidr)} is ${ok ? 'valid' : 'not'}`, () => {
      const errs = isValidCIDR('spec.podCIDR', cidr);
      if (ok) assert.deepEqual(errs, []);
      else {
        assert.equal(errs.length, 1);
        assert.equal(errs[0]!.message, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)');
      }
    });
  }
});
