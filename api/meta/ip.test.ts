import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { canonicalIP, isValidCIDR, isValidIP, isValidIPForLegacyField } from './ip.js';

describe('isValidIP (cases from Kubernetes ip_test.go)', () => {
  // [input, error of isValidIP, error of isValidIPForLegacyField]
  const cases: [string, string, string][] = [
    ['1.2.3.4', '', ''],
    ['0.0.0.0', '', ''],
    ['255.255.255.255', '', ''],
    ['1234::abcd', '', ''],
    ['::', '', ''],
    ['::1', '', ''],
    ['2001:db8::1', '', ''],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '', ''],
    ['1:0:0:1::', '', ''],
    ['1::1:0:0:1', '', ''],
    ['0:0:0:0:0:0:0:0', 'must be in canonical form ("::")', ''],
    ['0001:002:03:4::', 'must be in canonical form ("1:2:3:4::")', ''],
    ['1234::ABCD', 'must be in canonical form ("1234::abcd")', ''],
    ['1:0:0:0:1:0:0:1', 'must be in canonical form ("1::1:0:0:1")', ''],
    ['1:0:2:3:4:5:6:7', '', ''],
    ['::1.2.3.4', 'must be in canonical form ("::102:304")', ''],
    ['1.1.1.01', 'must not have leading 0s', 'must not have leading 0s'],
    ['::ffff:1.1.1.1', 'must not be an IPv4-mapped IPv6 address', 'must not be an IPv4-mapped IPv6 address'],
    ['::ffff:101:101', 'must not be an IPv4-mapped IPv6 address', 'must not be an IPv4-mapped IPv6 address'],
    ['', 'must be a valid IP address', 'must be a valid IP address'],
    ['aaaaaaa', 'must be a valid IP address', 'must be a valid IP address'],
    ['myhost.mydomain', 'must be a valid IP address', 'must be a valid IP address'],
    ['1.2.3.0/24', 'must be a valid IP address', 'must be a valid IP address'],
    ['1.2.3.400', 'must be a valid IP address', 'must be a valid IP address'],
    ['-1.0.0.0', 'must be a valid IP address', 'must be a valid IP address'],
    ['1.2.3', 'must be a valid IP address', 'must be a valid IP address'],
    ['1.2.3.4.5', 'must be a valid IP address', 'must be a valid IP address'],
    ['2001:db8::10005', 'must be a valid IP address', 'must be a valid IP address'],
    ['1.2.3.4:80', 'must be a valid IP address', 'must be a valid IP address'],
    ['[2001:db8::1]', 'must be a valid IP address', 'must be a valid IP address'],
    ['[2001:db8::1]:80', 'must be a valid IP address', 'must be a valid IP address'],
    ['example.com:80', 'must be a valid IP address', 'must be a valid IP address'],
    ['1234::abcd%eth0', 'must be a valid IP address', 'must be a valid IP address'],
    ['169.254.0.0%eth0', 'must be a valid IP address', 'must be a valid IP address'],
    ['1::2::3', 'must be a valid IP address', 'must be a valid IP address'],
    ['1:2:3:4:5:6:7:8:9', 'must be a valid IP address', 'must be a valid IP address'],
    ['1:2:3:4:5:6:7:8::', 'must be a valid IP address', 'must be a valid IP address'],
    ['1:2:3:4:5:6:7', 'must be a valid IP address', 'must be a valid IP address'],
    [':1::', 'must be a valid IP address', 'must be a valid IP address'],
    ['1.2.3.4::', 'must be a valid IP address', 'must be a valid IP address'],
  ];
  for (const [ip, strictErr, legacyErr] of cases) {
    it(`${JSON.stringify(ip)} → ${strictErr || 'valid'}`, () => {
      const errs = isValidIP('spec.clusterIP', ip);
      if (strictErr === '') assert.deepEqual(errs, []);
      else {
        assert.equal(errs.length, 1);
        assert.equal(errs[0]!.field, 'spec.clusterIP');
        assert.equal(errs[0]!.type, 'FieldValueInvalid');
        assert.equal(errs[0]!.badValue, ip);
        assert.ok(errs[0]!.message.startsWith(strictErr), errs[0]!.message);
      }
      const legacy = isValidIPForLegacyField('status.podIP', ip);
      if (legacyErr === '') assert.deepEqual(legacy, []);
      else assert.ok(legacy.length === 1 && legacy[0]!.message.startsWith(legacyErr));
    });
  }
  it('gives the full invalid-address message', () => {
    assert.equal(
      isValidIP('x', 'nope')[0]!.message,
      'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    );
  });
  it('canonicalizes', () => {
    assert.equal(canonicalIP('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
    assert.equal(canonicalIP('010.001.002.003'), '10.1.2.3');
    assert.equal(canonicalIP('::ffff:1.2.3.4'), '1.2.3.4');
    assert.equal(canonicalIP('not-an-ip'), undefined);
  });
});

describe('isValidCIDR (cases from Kubernetes ip_test.go)', () => {
  const cases: [string, string][] = [
    ['1.0.0.0/8', ''],
    ['0.0.0.0/0', ''],
    ['1.1.1.1/32', ''],
    ['10.244.0.0/16', ''],
    ['2001:4860:4860::/48', ''],
    ['::/0', ''],
    ['::1/128', ''],
    ['2a00:79e0:2:0::/64', 'must be in canonical form ("2a00:79e0:2::/64")'],
    ['2001:DB8::/64', 'must be in canonical form ("2001:db8::/64")'],
    ['1.1.01.0/24', 'must not have leading 0s in IP or prefix length'],
    ['::ffff:1.1.1.0/24', 'must not have an IPv4-mapped IPv6 address'],
    ['::ffff:1.1.1.0/120', 'must not have an IPv4-mapped IPv6 address'],
    ['1.2.3.4/24', 'must not have bits set beyond the prefix length'],
    ['2001:db8::1/64', 'must not have bits set beyond the prefix length'],
    ['192.168.0.0/016', 'must not have leading 0s in IP or prefix length'],
    ['', 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['aaaaaaa', 'must be a valid CIDR value'],
    ['1.2.3.4', 'must be a valid CIDR value'],
    ['192.168.0.1/healthz', 'must be a valid CIDR value'],
    ['192.168.0.1/0/99', 'must be a valid CIDR value'],
    ['192.168.0.0/-16', 'must be a valid CIDR value'],
    ['192.168.0.0/+16', 'must be a valid CIDR value'],
    ['192.168.0.0/33', 'must be a valid CIDR value'],
    ['::/129', 'must be a valid CIDR value'],
    ['192.168.0.0/', 'must be a valid CIDR value'],
  ];
  for (const [cidr, err] of cases) {
    it(`${JSON.stringify(cidr)} → ${err || 'valid'}`, () => {
      const errs = isValidCIDR('spec.podCIDR', cidr);
      if (err === '') assert.deepEqual(errs, []);
      else {
        assert.equal(errs.length, 1);
        assert.ok(errs[0]!.message.startsWith(err), errs[0]!.message);
      }
    });
  }
});
