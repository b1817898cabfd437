import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CidrSet, formatCidr, parseCidr } from './cidr.js';

test('parseCidr clears host bits and refuses malformed input', () => {
  assert.equal(formatCidr(parseCidr('10.42.7.9/16')), '10.42.0.0/16');
  for (const bad of ['10.42.0.0', '10.42.0.256/16', '10.42.0.0/33', 'fd00::/64', '']) {
    assert.throws(() => parseCidr(bad), /invalid IPv4 CIDR/);
  }
});

test('a /16 gives 256 /24 subnets in order, skips taken ones, and runs out', () => {
  const set = new CidrSet(parseCidr('10.42.0.0/16'), 24);
  assert.equal(set.count, 256);
  set.occupy('10.42.1.0/24');
  assert.equal(set.allocate(), '10.42.0.0/24');
  assert.equal(set.allocate(), '10.42.2.0/24');
  const small = new CidrSet(parseCidr('192.168.0.0/23'), 24);
  assert.equal(small.allocate(), '192.168.0.0/24');
  assert.equal(small.allocate(), '192.168.1.0/24');
  assert.equal(small.allocate(), undefined);
  small.release('192.168.0.0/24');
  assert.equal(small.allocate(), '192.168.0.0/24');
});

test('subnets outside the set are ignored; bad mask sizes are refused', () => {
  const set = new CidrSet(parseCidr('10.42.0.0/16'), 24);
  assert.equal(set.indexOf('10.43.0.0/24'), undefined);
  assert.equal(set.indexOf('10.42.0.0/25'), undefined);
  assert.equal(set.indexOf('10.42.255.0/24'), 255);
  assert.throws(() => new CidrSet(parseCidr('10.42.0.0/16'), 16), /mask size/);
  assert.throws(() => new CidrSet(parseCidr('10.0.0.0/8'), 30), /too many/);
});
