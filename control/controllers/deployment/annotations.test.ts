import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Deployment, ReplicaSet } from '../../../api/types.js';
import {
  CHANGE_CAUSE_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  LAST_APPLIED_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  maxRevision,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  setNewReplicaSetAnnotations,
} from './annotations.js';

const deployment = (annotations: Record<string, string>): Deployment => ({
  metadata: { name: 'web', annotations },
  spec: { replicas: 3, selector: {}, template: { spec: { containers: [] } } },
});
const rs = (annotations?: Record<string, string>): ReplicaSet => ({
  metadata: { name: 'web-abc', ...(annotations ? { annotations } : {}) },
  spec: { replicas: 0, selector: {}, template: { spec: { containers: [] } } },
});
const replicas = { desired: 3, max: 4 };

describe('setNewReplicaSetAnnotations', () => {
  it('a new ReplicaSet: revision, replicas annotations, copied change-cause, skipped controller annotations', () => {
    const d = deployment({
      [CHANGE_CAUSE_ANNOTATION]: 'kubectl set image',
      [LAST_APPLIED_ANNOTATION]: '{}',
      [REVISION_ANNOTATION]: '7',
      team: 'a',
    });
    const r = rs();
    assert.equal(setNewReplicaSetAnnotations(d, r, 2, false, replicas), true);
    assert.deepEqual(r.metadata.annotations, {
      [CHANGE_CAUSE_ANNOTATION]: 'kubectl set image',
      team: 'a',
      [REVISION_ANNOTATION]: '2',
      [DESIRED_REPLICAS_ANNOTATION]: '3',
      [MAX_REPLICAS_ANNOTATION]: '4',
    });
  });

  it('an old ReplicaSet made new again (rollback) gets the next revision and remembers the old one', () => {
    const r = rs({ [REVISION_ANNOTATION]: '1' });
    setNewReplicaSetAnnotations(deployment({}), r, 3, true, replicas);
    assert.equal(r.metadata.annotations?.[REVISION_ANNOTATION], '3');
    assert.equal(r.metadata.annotations?.[REVISION_HISTORY_ANNOTATION], '1');
    setNewReplicaSetAnnotations(deployment({}), r, 5, true, replicas);
    assert.equal(r.metadata.annotations?.[REVISION_ANNOTATION], '5');
    assert.equal(r.metadata.annotations?.[REVISION_HISTORY_ANNOTATION], '1,3');
    assert.equal(
      r.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION],
      undefined,
      'existing: no replicas annotations',
    );
  });

  it('never lowers a revision, and reports no change when nothing changed', () => {
    const r = rs({ [REVISION_ANNOTATION]: '4' });
    assert.equal(setNewReplicaSetAnnotations(deployment({}), r, 3, true, replicas), false);
    assert.equal(r.metadata.annotations?.[REVISION_ANNOTATION], '4');
  });

  it('drops the oldest history entries beyond 2000 characters', () => {
    const long = Array.from({ length: 500 }, (_, i) => String(1000 + i)).join(','); // 2499 chars
    const r = rs({ [REVISION_ANNOTATION]: '9999', [REVISION_HISTORY_ANNOTATION]: long });
    setNewReplicaSetAnnotations(deployment({}), r, 10000, true, replicas);
    const history = r.metadata.annotations![REVISION_HISTORY_ANNOTATION]!;
    assert.ok(history.length <= 2000, `${history.length}`);
    assert.ok(history.endsWith(',9999'));
  });
});

describe('maxRevision', () => {
  it('ignores missing and malformed revisions', () => {
    assert.equal(
      maxRevision([rs({ [REVISION_ANNOTATION]: '2' }), rs(), rs({ [REVISION_ANNOTATION]: 'x' })]),
      2,
    );
    assert.equal(maxRevision([]), 0);
  });
});
