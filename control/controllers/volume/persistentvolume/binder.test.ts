/**
 * The PV controller's syncs over plain objects (as upstream's binder_test, delete_test and
 * provision_test): each case starts from volumes, claims and classes, runs one syncClaim
 * or syncVolume, and checks what was written and which events were recorded. The fake API
 * keeps resourceVersions and refuses stale writes as the server does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiStatusError } from '../../../../api/client/errors.js';
import { Indexer } from '../../../../api/client/indexer.js';
import { Lister } from '../../../../api/client/lister.js';
import type { PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../../../api/storage/types.js';
import type { Pod } from '../../../../api/types.js';
import { silentLogger } from '../../context.js';
import { VolumeBinder, type VolumeBinderApi } from './binder.js';

interface VolumeOpts {
  capacity?: string;
  modes?: string[];
  phase?: NonNullable<PersistentVolume['status']>['phase'];
  claim?: { name: string; uid?: string; namespace?: string };
  policy?: 'Retain' | 'Delete' | 'Recycle';
  className?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  volumeMode?: 'Filesystem' | 'Block';
}

function volume(name: string, o: VolumeOpts = {}): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '1',
      ...(o.annotations ? { annotations: { ...o.annotations } } : {}),
      ...(o.labels ? { labels: { ...o.labels } } : {}),
    },
    spec: {
      capacity: { storage: o.capacity ?? '1Gi' },
      accessModes: o.modes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: o.policy ?? 'Retain',
      ...(o.className !== undefined ? { storageClassName: o.className } : {}),
      ...(o.volumeMode ? { volumeMode: o.volumeMode } : {}),
      hostPath: { path: `/data/${name}` },
      ...(o.claim
        ? {
            claimRef: {
              kind: 'PersistentVolumeClaim',
              apiVersion: 'v1',
              namespace: o.claim.namespace ?? 'default',
              name: o.claim.name,
              ...(o.claim.uid ? { uid: o.claim.uid } : {}),
            },
          }
        : {}),
    },
    status: { phase: o.phase ?? 'Available' },
  };
}

interface ClaimOpts {
  request?: string;
  modes?: string[];
  volumeName?: string;
  phase?: 'Pending' | 'Bound' | 'Lost';
  /** undefined: no storageClassName at all; '' names "no class". */
  className?: string;
  annotations?: Record<string, string>;
  selector?: { matchLabels: Record<string, string> };
  volumeMode?: 'Filesystem' | 'Block';
}

function claim(name: string, o: ClaimOpts = {}): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '1',
      ...(o.annotations ? { annotations: { ...o.annotations } } : {}),
    },
    spec: {
      accessModes: o.modes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: o.request ?? '1Gi' } },
      ...(o.className !== undefined ? { storageClassName: o.className } : {}),
      ...(o.volumeName ? { volumeName: o.volumeName } : {}),
      ...(o.selector ? { selector: o.selector } : {}),
      ...(o.volumeMode ? { volumeMode: o.volumeMode } : {}),
    },
    status: { phase: o.phase ?? 'Pending' },
  };
}

function storageClass(
  name: string,
  provisioner: string,
  mode: 'Immediate' | 'WaitForFirstConsumer' = 'Immediate',
  annotations?: Record<string, string>,
): StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, ...(annotations ? { annotations } : {}), creationTimestamp: '2024-01-01T00:00:00Z' },
    provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: mode,
  };
}

const BOUND = { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
const BY_CONTROLLER = { 'pv.kubernetes.io/bound-by-controller': 'yes' };

const conflict = (what: string) =>
  new ApiStatusError({ code: 409, reason: 'Conflict', message: `the object ${what} has been modified` });
const notFound = (what: string) =>
  new ApiStatusError({ code: 404, reason: 'NotFound', message: `${what} not found` });

/** The API server as far as the binder writes it: objects by key, resourceVersions, status kept apart. */
class World {
  readonly volumes = new Map<string, PersistentVolume>();
  readonly claims = new Map<string, PersistentVolumeClaim>();
  readonly events: string[] = [];
  readonly enqueued: string[] = [];
  writes = 0;
  /** The claim informer's cache (the lister the binder falls back to). */
  readonly claimIndexer = new Indexer<PersistentVolumeClaim>();
  private rv = 100;
  readonly binder: VolumeBinder;

  constructor(
    volumes: PersistentVolume[],
    claims: PersistentVolumeClaim[],
    classes: StorageClass[] = [],
    pods: Pod[] = [],
    /** Claims the informer has that the controller's cache has not seen. */
    informerOnly: PersistentVolumeClaim[] = [],
  ) {
    for (const v of volumes) this.volumes.set(v.metadata.name!, v);
    for (const c of [...claims, ...informerOnly]) this.claims.set(`default/${c.metadata.name}`, c);
    for (const c of [...claims, ...informerOnly]) this.claimIndexer.add(c);
    const classIndexer = new Indexer<StorageClass>();
    for (const c of classes) classIndexer.add(c);
    const podIndexer = new Indexer<Pod>();
    for (const p of pods) podIndexer.add(p);
    const api: VolumeBinderApi = {
      getClaim: (ns, name) => Promise.resolve(structuredClone(this.claims.get(`${ns}/${name}`))),
      getVolume: (name) => Promise.resolve(structuredClone(this.volumes.get(name))),
      updateVolume: (v) => this.write(this.volumes, v.metadata.name!, v, 'spec'),
      updateVolumeStatus: (v) => this.write(this.volumes, v.metadata.name!, v, 'status'),
      updateClaim: (c) => this.write(this.claims, `default/${c.metadata.name}`, c, 'spec'),
      updateClaimStatus: (c) => this.write(this.claims, `default/${c.metadata.name}`, c, 'status'),
    };
    this.binder = new VolumeBinder({
      api,
      claimLister: new Lister(this.claimIndexer),
      classLister: new Lister(classIndexer),
      podsOfClaim: (key) => podIndexer.list().filter((p) => `default/${claimOfPod(p)}` === key),
      recorder: {
        event: (target, type, reason, message) =>
          this.events.push(`${type} ${reason} ${target.kind}/${target.metadata!.name}: ${message}`),
      },
      logger: silentLogger,
      enqueueClaim: (key) => this.enqueued.push(key),
    });
    for (const v of volumes) this.binder.storeVolume(structuredClone(v));
    for (const c of claims) this.binder.storeClaim(structuredClone(c));
  }

  private write<T extends PersistentVolume | PersistentVolumeClaim>(
    store: Map<string, T>,
    key: string,
    obj: T,
    part: 'spec' | 'status',
  ): Promise<T> {
    const stored = store.get(key);
    if (!stored) return Promise.reject(notFound(key));
    if (obj.metadata.resourceVersion !== stored.metadata.resourceVersion)
      return Promise.reject(conflict(key));
    this.writes++;
    const next =
      part === 'spec'
        ? ({ ...structuredClone(obj), status: structuredClone(stored.status) } as T)
        : ({ ...structuredClone(stored), status: structuredClone(obj.status) } as T);
    next.metadata.resourceVersion = String(++this.rv);
    store.set(key, next);
    return Promise.resolve(structuredClone(next));
  }

  volume(name: string): PersistentVolume {
    return this.volumes.get(name)!;
  }

  claim(name: string): PersistentVolumeClaim {
    return this.claims.get(`default/${name}`)!;
  }

  syncClaim(name: string): Promise<void> {
    return this.binder.syncClaim(structuredClone(this.claim(name)));
  }

  syncVolume(name: string): Promise<void> {
    return this.binder.syncVolume(structuredClone(this.volume(name)));
  }
}

function claimOfPod(p: Pod): string {
  const v = (p.spec.volumes as { persistentVolumeClaim?: { claimName: string } }[] | undefined)?.[0];
  return v?.persistentVolumeClaim?.claimName ?? '';
}

const boundTo = (pv: PersistentVolume) =>
  pv.spec?.claimRef
    ? `${pv.spec.claimRef.namespace}/${pv.spec.claimRef.name}/${pv.spec.claimRef.uid ?? ''}`
    : '';

describe('syncClaim: an unbound claim without volumeName', () => {
  it('binds it to a matching Available volume: both Bound, annotations, claim capacity and access modes', async () => {
    const w = new World(
      [volume('pv1', { capacity: '5Gi', modes: ['ReadWriteOnce', 'ReadOnlyMany'] })],
      [claim('c1')],
    );
    await w.syncClaim('c1');
    const pv = w.volume('pv1');
    assert.equal(boundTo(pv), 'default/c1/uid-c1');
    assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    assert.equal(pv.status?.phase, 'Bound');
    assert.equal(pv.spec?.claimRef?.kind, 'PersistentVolumeClaim');
    const c = w.claim('c1');
    assert.equal(c.spec.volumeName, 'pv1');
    assert.deepEqual(c.metadata.annotations, BOUND);
    assert.deepEqual(c.status, {
      phase: 'Bound',
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      capacity: { storage: '5Gi' },
    });
    assert.deepEqual(w.events, []);
  });

  it('takes the smallest volume that fits', async () => {
    const w = new World(
      [
        volume('big', { capacity: '10Gi' }),
        volume('fits', { capacity: '2Gi' }),
        volume('small', { capacity: '500Mi' }),
        volume('taken', { capacity: '1Gi', phase: 'Bound', claim: { name: 'other', uid: 'x' } }),
      ],
      [claim('c1', { request: '1Gi' })],
    );
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').spec.volumeName, 'fits');
  });

  it('prefers a volume with exactly the claim’s access modes over one offering more', async () => {
    const w = new World(
      [
        volume('rwx', { capacity: '1Gi', modes: ['ReadWriteOnce', 'ReadWriteMany'] }),
        volume('rwo', { capacity: '5Gi', modes: ['ReadWriteOnce'] }),
      ],
      [claim('c1')],
    );
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').spec.volumeName, 'rwo');
  });

  it('honours class, selector, volumeMode and capacity', async () => {
    const w = new World(
      [
        volume('gold', { className: 'gold' }),
        volume('block', { volumeMode: 'Block', labels: { tier: 'a' } }),
        volume('unlabelled'),
        volume('labelled-small', { capacity: '100Mi', labels: { tier: 'a' } }),
        volume('labelled', { capacity: '3Gi', labels: { tier: 'a' } }),
      ],
      [claim('c1', { className: '', selector: { matchLabels: { tier: 'a' } } })],
    );
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').spec.volumeName, 'labelled');
  });

  it('no volume and no class: FailedBinding, Pending', async () => {
    const w = new World([volume('gold', { className: 'gold' })], [claim('c1', { className: '' })]);
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Normal FailedBinding PersistentVolumeClaim/c1: no persistent volumes available for this claim and no storage class is set',
    ]);
    assert.equal(w.claim('c1').status?.phase, 'Pending');
    assert.equal(w.writes, 0, 'a Pending claim is not written again');
  });

  it('no volume, an Immediate class of an external provisioner: the storage-provisioner annotations and ExternalProvisioning', async () => {
    const w = new World([], [claim('c1', { className: 'fast' })], [storageClass('fast', 'example.com/nfs')]);
    await w.syncClaim('c1');
    assert.deepEqual(w.claim('c1').metadata.annotations, {
      'volume.beta.kubernetes.io/storage-provisioner': 'example.com/nfs',
      'volume.kubernetes.io/storage-provisioner': 'example.com/nfs',
    });
    assert.deepEqual(w.events, [
      "Normal ExternalProvisioning PersistentVolumeClaim/c1: Waiting for a volume to be created either by the external provisioner 'example.com/nfs' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
    ]);
  });

  it('a WaitForFirstConsumer claim no pod uses: WaitForFirstConsumer, not provisioned', async () => {
    const w = new World(
      [volume('pv1', { className: 'local-path' })],
      [claim('c1', { className: 'local-path' })],
      [storageClass('local-path', 'rancher.io/local-path', 'WaitForFirstConsumer')],
    );
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Normal WaitForFirstConsumer PersistentVolumeClaim/c1: waiting for first consumer to be created before binding',
    ]);
    assert.equal(w.claim('c1').metadata.annotations, undefined);
    assert.equal(boundTo(w.volume('pv1')), '', 'the scheduler, not the controller, picks a volume for it');
  });

  it('a WaitForFirstConsumer claim of an unscheduled pod: WaitForPodScheduled', async () => {
    const pod: Pod = {
      metadata: { name: 'web-0', namespace: 'default' },
      spec: { containers: [], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'c1' } }] },
    };
    const w = new World(
      [],
      [claim('c1', { className: 'local-path' })],
      [storageClass('local-path', 'rancher.io/local-path', 'WaitForFirstConsumer')],
      [pod],
    );
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Normal WaitForPodScheduled PersistentVolumeClaim/c1: waiting for pod web-0 to be scheduled',
    ]);
  });

  it('a WaitForFirstConsumer claim with a selected node is provisioned', async () => {
    const w = new World(
      [],
      [claim('c1', { className: 'local-path', annotations: { 'volume.kubernetes.io/selected-node': 'n1' } })],
      [storageClass('local-path', 'rancher.io/local-path', 'WaitForFirstConsumer')],
    );
    await w.syncClaim('c1');
    assert.equal(
      w.claim('c1').metadata.annotations?.['volume.kubernetes.io/storage-provisioner'],
      'rancher.io/local-path',
    );
    assert.match(w.events[0]!, /^Normal ExternalProvisioning .*'rancher\.io\/local-path'/);
  });

  it('a WaitForFirstConsumer claim binds the volume pre-bound to it (a provisioned one) without bound-by-controller on it', async () => {
    const w = new World(
      [
        volume('pvc-uid-c1', {
          className: 'local-path',
          claim: { name: 'c1', uid: 'uid-c1' },
          annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' },
          phase: 'Pending',
        }),
      ],
      [claim('c1', { className: 'local-path', annotations: { 'volume.kubernetes.io/selected-node': 'n1' } })],
      [storageClass('local-path', 'rancher.io/local-path', 'WaitForFirstConsumer')],
    );
    await w.syncClaim('c1');
    const pv = w.volume('pvc-uid-c1');
    assert.equal(pv.status?.phase, 'Bound');
    assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], undefined);
    assert.equal(w.claim('c1').spec.volumeName, 'pvc-uid-c1');
    assert.equal(w.claim('c1').status?.phase, 'Bound');
  });

  it('a claim naming no class at all gets the newest default class', async () => {
    const older = storageClass('old', 'a', 'Immediate', {
      'storageclass.kubernetes.io/is-default-class': 'true',
    });
    const newer = {
      ...storageClass('local-path', 'rancher.io/local-path', 'WaitForFirstConsumer', {
        'storageclass.kubernetes.io/is-default-class': 'true',
      }),
    };
    newer.metadata.creationTimestamp = '2025-01-01T00:00:00Z';
    const w = new World([], [claim('c1')], [older, newer, storageClass('plain', 'b')]);
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').spec.storageClassName, 'local-path');
  });

  it('a class that does not exist: ProvisioningFailed', async () => {
    const w = new World([], [claim('c1', { className: 'gold' })]);
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Warning ProvisioningFailed PersistentVolumeClaim/c1: storageclass.storage.k8s.io "gold" not found',
    ]);
  });

  it('an Immediate kubernetes.io/no-provisioner class without volumes: ProvisioningFailed', async () => {
    const w = new World(
      [],
      [claim('c1', { className: 'local' })],
      [storageClass('local', 'kubernetes.io/no-provisioner')],
    );
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Warning ProvisioningFailed PersistentVolumeClaim/c1: no volume plugin matched name: kubernetes.io/no-provisioner',
    ]);
  });

  it('a class without volumeBindingMode is an error', async () => {
    const cls = storageClass('odd', 'x');
    delete cls.volumeBindingMode;
    const w = new World([], [claim('c1', { className: 'odd' })], [cls]);
    await assert.rejects(w.syncClaim('c1'), /VolumeBindingMode not set for StorageClass "odd"/);
  });

  it('a volume pre-bound to the claim by name is bound, even when a smaller one fits', async () => {
    const w = new World(
      [volume('small', { capacity: '1Gi' }), volume('reserved', { capacity: '9Gi', claim: { name: 'c1' } })],
      [claim('c1')],
    );
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').spec.volumeName, 'reserved');
    assert.equal(boundTo(w.volume('reserved')), 'default/c1/uid-c1');
    assert.equal(
      w.volume('reserved').metadata.annotations,
      undefined,
      'a user pre-binding is not bound-by-controller',
    );
  });
});

describe('syncClaim: an unbound claim naming a volume', () => {
  it('the volume does not exist: Pending, no event', async () => {
    const w = new World([], [claim('c1', { volumeName: 'nope' })]);
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').status?.phase, 'Pending');
    assert.deepEqual(w.events, []);
  });

  it('an unclaimed volume that fits: bound; the claim is not bound-by-controller', async () => {
    const w = new World([volume('pv1')], [claim('c1', { volumeName: 'pv1' })]);
    await w.syncClaim('c1');
    assert.deepEqual(w.claim('c1').metadata.annotations, { 'pv.kubernetes.io/bind-completed': 'yes' });
    assert.equal(w.claim('c1').status?.phase, 'Bound');
    assert.deepEqual(w.volume('pv1').metadata.annotations, BY_CONTROLLER);
    assert.equal(w.volume('pv1').status?.phase, 'Bound');
  });

  it('a volume that is too small: VolumeMismatch, Pending', async () => {
    const w = new World([volume('pv1', { capacity: '1Mi' })], [claim('c1', { volumeName: 'pv1' })]);
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Warning VolumeMismatch PersistentVolumeClaim/c1: Cannot bind to requested volume "pv1": requested PV is too small',
    ]);
    assert.equal(boundTo(w.volume('pv1')), '');
  });

  it('a volume of another class: VolumeMismatch', async () => {
    const w = new World(
      [volume('pv1', { className: 'gold' })],
      [claim('c1', { volumeName: 'pv1', className: '' })],
    );
    await w.syncClaim('c1');
    assert.match(w.events[0]!, /storageClassName does not match$/);
  });

  it('a volume pre-bound to it: the claim uid is filled in', async () => {
    const w = new World([volume('pv1', { claim: { name: 'c1' } })], [claim('c1', { volumeName: 'pv1' })]);
    await w.syncClaim('c1');
    assert.equal(boundTo(w.volume('pv1')), 'default/c1/uid-c1');
    assert.equal(w.claim('c1').status?.phase, 'Bound');
  });

  it('a volume bound to another claim: FailedBinding, Pending', async () => {
    const w = new World(
      [volume('pv1', { claim: { name: 'other', uid: 'uid-other' }, phase: 'Bound' })],
      [claim('c1', { volumeName: 'pv1' })],
    );
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Warning FailedBinding PersistentVolumeClaim/c1: volume "pv1" already bound to a different claim.',
    ]);
    assert.equal(boundTo(w.volume('pv1')), 'default/other/uid-other');
  });
});

describe('syncClaim: a bound claim', () => {
  it('that lost its volumeName: Lost, ClaimLost', async () => {
    const w = new World([], [claim('c1', { phase: 'Bound', annotations: BOUND })]);
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').status?.phase, 'Lost');
    assert.deepEqual(w.events, [
      'Warning ClaimLost PersistentVolumeClaim/c1: Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
    ]);
  });

  it('whose volume is gone: Lost, once', async () => {
    const w = new World([], [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv1' })]);
    await w.syncClaim('c1');
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').status?.phase, 'Lost');
    assert.deepEqual(w.events, [
      'Warning ClaimLost PersistentVolumeClaim/c1: Bound claim has lost its PersistentVolume. Data on the volume is lost!',
    ]);
  });

  it('whose volume came unbound: bound again', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Released' })],
      [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv1' })],
    );
    await w.syncClaim('c1');
    assert.equal(boundTo(w.volume('pv1')), 'default/c1/uid-c1');
    assert.equal(w.volume('pv1').status?.phase, 'Bound');
  });

  it('whose volume belongs to another claim: Lost, ClaimMisbound', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Bound', claim: { name: 'other', uid: 'uid-other' } })],
      [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv1' })],
    );
    await w.syncClaim('c1');
    assert.deepEqual(w.events, [
      'Warning ClaimMisbound PersistentVolumeClaim/c1: Two claims are bound to the same volume, this one is bound incorrectly',
    ]);
  });

  it('all bound: nothing written', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Bound', claim: { name: 'c1', uid: 'uid-c1' }, annotations: BY_CONTROLLER })],
      [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv1' })],
    );
    const c = w.claim('c1');
    (c.status as Record<string, unknown>).accessModes = ['ReadWriteOnce'];
    (c.status as Record<string, unknown>).capacity = { storage: '1Gi' };
    w.binder.storeClaim(structuredClone(c));
    await w.syncClaim('c1');
    assert.equal(w.writes, 0);
  });
});

describe('syncVolume', () => {
  it('an unclaimed volume, and one pre-bound to a claim by name: Available', async () => {
    const w = new World(
      [volume('a', { phase: 'Pending' }), volume('b', { phase: 'Pending', claim: { name: 'c' } })],
      [],
    );
    await w.syncVolume('a');
    await w.syncVolume('b');
    assert.equal(w.volume('a').status?.phase, 'Available');
    assert.equal(w.volume('b').status?.phase, 'Available');
  });

  it('the claim is gone, Retain: Released, and it stays so', async () => {
    const w = new World([volume('pv1', { phase: 'Bound', claim: { name: 'c1', uid: 'uid-c1' } })], []);
    await w.syncVolume('pv1');
    await w.syncVolume('pv1');
    assert.equal(w.volume('pv1').status?.phase, 'Released');
    assert.equal(boundTo(w.volume('pv1')), 'default/c1/uid-c1');
    assert.deepEqual(w.events, []);
  });

  it('the claim is gone, Delete, an external provisioner’s volume: Released and left to the provisioner', async () => {
    const w = new World(
      [
        volume('pvc-1', {
          phase: 'Bound',
          policy: 'Delete',
          claim: { name: 'c1', uid: 'uid-c1' },
          annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' },
        }),
      ],
      [],
    );
    await w.syncVolume('pvc-1');
    await w.syncVolume('pvc-1');
    assert.equal(w.volume('pvc-1').status?.phase, 'Released');
    assert.deepEqual(w.events, []);
  });

  it('the claim is gone, Delete, a volume no provisioner made: Failed, VolumeFailedDelete', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Bound', policy: 'Delete', claim: { name: 'c1', uid: 'uid-c1' } })],
      [],
    );
    await w.syncVolume('pv1');
    assert.equal(w.volume('pv1').status?.phase, 'Failed');
    assert.deepEqual(w.events, [
      'Warning VolumeFailedDelete PersistentVolume/pv1: error getting deleter volume plugin for volume "pv1": no deletable volume plugin matched',
    ]);
  });

  it('the claim is gone, Recycle: Failed, VolumeFailedRecycle', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Bound', policy: 'Recycle', claim: { name: 'c1', uid: 'uid-c1' } })],
      [],
    );
    await w.syncVolume('pv1');
    assert.deepEqual(w.events, [
      'Warning VolumeFailedRecycle PersistentVolume/pv1: No recycler plugin found for the volume!',
    ]);
  });

  it('a new claim of the same name is not the volume’s claim: Released', async () => {
    const recreated = claim('c1');
    recreated.metadata.uid = 'uid-new';
    const w = new World(
      [volume('pv1', { phase: 'Bound', claim: { name: 'c1', uid: 'uid-c1' } })],
      [recreated],
    );
    await w.syncVolume('pv1');
    assert.equal(w.volume('pv1').status?.phase, 'Released');
  });

  it('a claim the controller has not cached yet but the informer has is not released', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Bound', claim: { name: 'c1', uid: 'uid-c1' } })],
      [],
      [],
      [],
      [claim('c1')],
    );
    await w.syncVolume('pv1');
    assert.equal(w.volume('pv1').status?.phase, 'Bound');
    assert.deepEqual(w.enqueued, ['default/c1']);
  });

  it('its claim is bound to it: Bound', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Released', claim: { name: 'c1', uid: 'uid-c1' } })],
      [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv1' })],
    );
    await w.syncVolume('pv1');
    assert.equal(w.volume('pv1').status?.phase, 'Bound');
  });

  it('its claim is not bound yet (a provisioned volume): the claim’s sync is asked for', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Pending', claim: { name: 'c1', uid: 'uid-c1' } })],
      [claim('c1', { className: 'x' })],
    );
    await w.syncVolume('pv1');
    assert.deepEqual(w.enqueued, ['default/c1']);
    assert.equal(w.writes, 0);
  });

  it('its claim wants another volumeMode: VolumeMismatch on both', async () => {
    const w = new World(
      [volume('pv1', { claim: { name: 'c1', uid: 'uid-c1' } })],
      [claim('c1', { volumeMode: 'Block' })],
    );
    await w.syncVolume('pv1');
    assert.deepEqual(w.events, [
      'Warning VolumeMismatch PersistentVolume/pv1: Cannot bind PersistentVolume to requested PersistentVolumeClaim "c1" due to incompatible volumeMode.',
      'Warning VolumeMismatch PersistentVolumeClaim/c1: Cannot bind PersistentVolume "pv1" to requested PersistentVolumeClaim due to incompatible volumeMode.',
    ]);
  });

  it('its claim went to another volume, bound by the controller: unbound, Available', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Bound', claim: { name: 'c1', uid: 'uid-c1' }, annotations: BY_CONTROLLER })],
      [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv2' })],
    );
    await w.syncVolume('pv1');
    const pv = w.volume('pv1');
    assert.equal(pv.spec?.claimRef, undefined);
    assert.equal(pv.metadata.annotations, undefined);
    assert.equal(pv.status?.phase, 'Available');
  });

  it('its claim went to another volume, pre-bound by the user: the uid is cleared, the claimRef kept', async () => {
    const w = new World(
      [volume('pv1', { phase: 'Bound', claim: { name: 'c1', uid: 'uid-c1' } })],
      [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv2' })],
    );
    await w.syncVolume('pv1');
    assert.equal(boundTo(w.volume('pv1')), 'default/c1/');
    assert.equal(w.volume('pv1').status?.phase, 'Available');
  });

  it('its claim went to another volume, a provisioned Delete volume: Released', async () => {
    const w = new World(
      [
        volume('pv1', {
          phase: 'Bound',
          policy: 'Delete',
          claim: { name: 'c1', uid: 'uid-c1' },
          annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' },
        }),
      ],
      [claim('c1', { phase: 'Bound', annotations: BOUND, volumeName: 'pv2' })],
    );
    await w.syncVolume('pv1');
    assert.equal(w.volume('pv1').status?.phase, 'Released');
  });
});

describe('the caches and the whole dance', () => {
  it('an older version than the cached one is not taken', () => {
    const w = new World([], []);
    const v = volume('pv1');
    v.metadata.resourceVersion = '7';
    assert.equal(w.binder.storeVolume(v), true);
    assert.equal(w.binder.storeVolume({ ...v, metadata: { ...v.metadata, resourceVersion: '5' } }), false);
    assert.equal(w.binder.storeVolume({ ...v, metadata: { ...v.metadata, resourceVersion: '7' } }), true);
  });

  it('a stale write is a conflict and the sync throws (the queue retries it)', async () => {
    const w = new World([volume('pv1')], [claim('c1')]);
    w.volumes.get('pv1')!.metadata.resourceVersion = '50'; // changed behind the controller's back
    await assert.rejects(w.syncClaim('c1'), /has been modified/);
  });

  it('WaitForFirstConsumer, provisioned on the selected node, bound; the claim deleted: Released', async () => {
    const w = new World(
      [],
      [claim('c1', { className: 'local-path', annotations: { 'volume.kubernetes.io/selected-node': 'n1' } })],
      [storageClass('local-path', 'rancher.io/local-path', 'WaitForFirstConsumer')],
    );
    await w.syncClaim('c1');
    // The provisioner (agent/storage) creates the PV with a claimRef to the claim.
    const pv = volume('pvc-uid-c1', {
      className: 'local-path',
      policy: 'Delete',
      claim: { name: 'c1', uid: 'uid-c1' },
      annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' },
      phase: 'Pending',
    });
    w.volumes.set(pv.metadata.name!, pv);
    w.binder.storeVolume(structuredClone(pv));
    w.binder.storeClaim(structuredClone(w.claim('c1')));
    await w.syncVolume('pvc-uid-c1');
    assert.deepEqual(w.enqueued, ['default/c1']);
    await w.syncClaim('c1');
    assert.equal(w.claim('c1').status?.phase, 'Bound');
    assert.equal(w.claim('c1').spec.volumeName, 'pvc-uid-c1');
    assert.equal(w.volume('pvc-uid-c1').status?.phase, 'Bound');
    await w.syncVolume('pvc-uid-c1');
    assert.equal(w.volume('pvc-uid-c1').status?.phase, 'Bound');

    const gone = w.claim('c1');
    w.claims.delete('default/c1');
    w.claimIndexer.delete(gone);
    assert.equal(w.binder.claimDeleted(gone), 'pvc-uid-c1');
    await w.syncVolume('pvc-uid-c1');
    assert.equal(w.volume('pvc-uid-c1').status?.phase, 'Released');
  });
});
