// Indexed Jobs through the real kubectl on the in-process API server, as Kubernetes 1.32
// validates them (pkg/apis/batch/validation): no limit on completions, a warning above
// 10^5 completions with parallelism above 10^4, and on create a name whose last pod
// hostname (`<name>-<completions - 1>`) would not be a DNS label refused (issue 23, A7).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApi, type TestApi } from '../../test/support/api.js';

function indexedJob(name: string, completions: number, parallelism: number): string {
  return JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      completionMode: 'Indexed',
      completions,
      parallelism,
      suspend: true,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
    },
  });
}

describe('Indexed Job validation through kubectl', { timeout: 60_000 }, () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it("creates a Job with 100001 completions and parallelism 10001, printing upstream's warning", async () => {
    const r = await api.kubectlIn(indexedJob('big', 100_001, 10_001), 'create', '-f', '-');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'job.batch/big created');
    assert.equal(
      r.stderr.trim(),
      'Warning: spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail',
    );
  });

  it('refuses an Indexed Job whose last pod hostname is too long', async () => {
    const name = 'j'.repeat(60);
    const r = await api.kubectlIn(indexedJob(name, 1000, 1), 'create', '-f', '-');
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      `The Job "${name}" is invalid: metadata.name: Invalid value: "${name}": will not able to create pod with invalid DNS label: ${name}-999`,
    );
  });
});
