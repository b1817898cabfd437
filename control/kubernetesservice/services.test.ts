// The addresses and names of the kubernetes and kube-dns Services, and the default
// --advertise-address, as pure functions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  advertiseAddressProblem,
  defaultAdvertiseAddress,
  defaultClusterDNS,
  kubernetesServiceIP,
  kubernetesServiceSANs,
} from './services.js';

describe('kubernetes Service addresses', () => {
  it('takes the first and the tenth address of the service range', () => {
    for (const [range, first, tenth] of [
      ['10.43.0.0/16', '10.43.0.1', '10.43.0.10'],
      ['10.96.0.0/12', '10.96.0.1', '10.96.0.10'],
      ['192.168.7.0/28', '192.168.7.1', '192.168.7.10'],
    ] as const) {
      assert.equal(kubernetesServiceIP(range), first, range);
      assert.equal(defaultClusterDNS(range), tenth, range);
    }
    assert.throws(() => defaultClusterDNS('10.0.0.0/29'), /too small to hold its address number 10/);
    assert.throws(() => kubernetesServiceIP('fd00::/108'), /expected an IPv4 CIDR/);
  });

  it('names the clusterIP and every name in-cluster clients dial', () => {
    assert.deepEqual(kubernetesServiceSANs('10.43.0.1', 'example.org'), [
      '10.43.0.1',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.example.org',
    ]);
  });

  it('advertises only addresses an endpoint may have; the bind address first, then --node-ip', async () => {
    for (const bad of ['127.0.0.1', '0.0.0.0', '169.254.1.1', 'fd00::1', 'host'])
      assert.ok(advertiseAddressProblem(bad), bad);
    assert.equal(advertiseAddressProblem('192.0.2.1'), undefined);
    assert.equal(await defaultAdvertiseAddress('192.0.2.1', '192.0.2.2'), '192.0.2.1');
    assert.equal(await defaultAdvertiseAddress('0.0.0.0', '192.0.2.2'), '192.0.2.2');
    assert.equal(await defaultAdvertiseAddress('127.0.0.1', '192.0.2.2'), '192.0.2.2');
    const host = await defaultAdvertiseAddress('127.0.0.1', '127.0.0.2');
    assert.ok(host === '127.0.0.1' || !advertiseAddressProblem(host), host);
  });
});
