// Service IPs as Kubernetes 1.32 takes them (issue 23, A6): every IP field is parsed
// sloppily (ParseIPSloppy; 1.33's strict validation is an alpha gate, off), so an IPv4
// address with leading zeros is accepted with pkg/api/service/warnings.go's warning and
// stored as written, while the allocator reserves the address it parses to; externalIPs
// must not be special addresses (ValidateNonSpecialIP).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

const SVCS = '/api/v1/namespaces/default/services';

interface Reply {
  status: number;
  warnings: string[];
  body: Record<string, unknown>;
}

describe('Service IPs written sloppily (API server)', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  const post = async (name: string, spec: Record<string, unknown>): Promise<Reply> => {
    const res = await fetch(`${api.url}${SVCS}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name },
        spec: { ports: [{ port: 80 }], ...spec },
      }),
    });
    const warning = res.headers.get('warning');
    return {
      status: res.status,
      warnings: warning ? warning.split(/, (?=299 )/) : [],
      body: (await res.json()) as Record<string, unknown>,
    };
  };
  const header = (text: string) => `299 - "${text.replace(/"/g, '\\"')}"`;

  it('accepts an externalIP with a leading zero, with the warning, and stores it as written', async () => {
    const res = await post('ext', { externalIPs: ['010.0.0.5'] });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual((res.body.spec as { externalIPs: string[] }).externalIPs, ['010.0.0.5']);
    assert.deepEqual(res.warnings, [
      header(
        'spec.externalIPs[0]: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("010.0.0.5"): IPv4 field has octet with leading zero',
      ),
    ]);
  });

  it('refuses special externalIPs (ValidateNonSpecialIP)', async () => {
    const res = await post('ext-loopback', { externalIPs: ['127.000.0.1'] });
    assert.equal(res.status, 422);
    assert.equal(
      res.body.message,
      'Service "ext-loopback" is invalid: spec.externalIPs[0]: Invalid value: "127.000.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    );
  });

  it('allocates a clusterIP with leading zeros as the address it parses to', async () => {
    const res = await post('zeros', { clusterIP: '10.43.000.50' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const spec = res.body.spec as { clusterIP: string; clusterIPs: string[] };
    assert.equal(spec.clusterIP, '10.43.000.50');
    assert.deepEqual(spec.clusterIPs, ['10.43.000.50']);
    assert.deepEqual(res.warnings, [
      header(
        'spec.clusterIPs[0]: IP address was accepted, but will be invalid in a future Kubernetes release: ParseAddr("10.43.000.50"): IPv4 field has octet with leading zero',
      ),
    ]);
    // The same address written plainly is taken.
    const taken = await post('plain', { clusterIP: '10.43.0.50' });
    assert.equal(taken.status, 422);
    assert.match(
      String(taken.body.message),
      /failed to allocate IP 10\.43\.0\.50: provided IP is already allocated/,
    );
    // Deleting the first releases the parsed address.
    assert.equal((await fetch(`${api.url}${SVCS}/zeros`, { method: 'DELETE' })).status, 200);
    const again = await post('plain', { clusterIP: '10.43.0.50' });
    assert.equal(again.status, 201, JSON.stringify(again.body));
  });

  it('names the parsed address when it is out of range', async () => {
    const res = await post('far', { clusterIP: '10.178.000.50' });
    assert.equal(res.status, 422);
    assert.match(
      String(res.body.message),
      /failed to allocate IP 10\.178\.0\.50: the provided IP \(10\.178\.0\.50\) is not in the valid range/,
    );
  });
});
