/**
 * managedFields recorded on create are of what the client sent (with defaults), not of
 * what the server adds in PrepareForCreate, as kube-apiserver's create handler (it runs
 * fieldManager.UpdateNoErrors before rest.BeforeCreate). Real kubectl against the
 * in-process API server: a Job made with `kubectl apply` and later applied server-side
 * (kubectl migrates the client-side manager's fields to its own) keeps its generated
 * selector, instead of every server-side apply dropping it and failing with 422.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../api/client/resource.js';
import type { Job } from '../../api/batch.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';

const JOB = `apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: [echo, hi]}]
`;

describe('managedFields on create', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.stop());

  it('leave the generated selector and labels of a Job to no manager', async () => {
    const created = await api.kubectlIn(JOB, 'apply', '-f', '-');
    assert.equal(created.code, 0, created.stderr);
    const job = await api.client.get<Job>(resources.jobs, 'default', 'pi');
    const entry = job.metadata?.managedFields?.find((m) => m.manager === 'kubectl-client-side-apply');
    assert.ok(entry, JSON.stringify(job.metadata?.managedFields));
    const spec = (entry.fieldsV1 as Record<string, Record<string, unknown>>)['f:spec']!;
    assert.ok('f:completions' in spec, 'what the client sent is owned');
    assert.ok('f:backoffLimit' in spec, 'defaults are owned, as upstream');
    assert.equal('f:selector' in spec, false, 'the generated selector is nobody’s');
    const tmplMeta = (spec['f:template'] as Record<string, Record<string, unknown>> | undefined)?.[
      'f:metadata'
    ];
    assert.equal(tmplMeta, undefined, 'nor are the generated template labels');

    for (let i = 0; i < 2; i++) {
      const ssa = await api.kubectlIn(JOB, 'apply', '--server-side', '-f', '-');
      assert.equal(ssa.code, 0, ssa.stderr);
      assert.doesNotMatch(ssa.stderr, /failed to re-apply/, ssa.stderr);
    }
    const after = await api.client.get<Job>(resources.jobs, 'default', 'pi');
    assert.deepEqual(after.spec?.selector, job.spec?.selector);
  });
});
