/**
 * persistentVolumeClaim volumes (claims.ts, and setUpVolumes/containerMounts over them):
 * the kubelet's words for a claim or PV that is not usable yet, node affinity, the hostPath
 * and local sources, readOnly from the pod's claim and from the volumeMount, and a subPath
 * inside the claim's directory.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RestClient } from '../../../api/client/rest.js';
import type { PersistentVolume, PersistentVolumeClaim } from '../../storage/types.js';
import { ClaimNotReadyError, resolveClaim, type ClaimReader } from './claims.js';
import { MountError } from './errors.js';
import type { Mounter } from './mount.js';
import { resources } from '../../../api/client/resource.js';
import { startTestApi } from '../../../test/support/api.js';
import { clientClaimReader, containerMounts, setUpVolumes } from './volumes.js';

const boundClaim = (over: Partial<PersistentVolumeClaim> = {}): PersistentVolumeClaim => ({
  metadata: { name: 'data', namespace: 'default', uid: 'c-1' },
  spec: { volumeName: 'pvc-c-1' },
  status: { phase: 'Bound' },
  ...over,
});

const hostPathVolume = (
  path: string,
  over: Partial<NonNullable<PersistentVolume['spec']>> = {},
): PersistentVolume => ({
  metadata: { name: 'pvc-c-1' },
  spec: {
    hostPath: { path, type: 'DirectoryOrCreate' },
    claimRef: { namespace: 'default', name: 'data', uid: 'c-1' },
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] },
        ],
      },
    },
    ...over,
  },
});

const node = { metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } } };

function reader(claim: PersistentVolumeClaim | undefined, pv: PersistentVolume | undefined): ClaimReader {
  return {
    getClaim: () => Promise.resolve(claim),
    getVolume: () => Promise.resolve(pv),
    getNode: () => Promise.resolve(node),
  };
}

describe('persistentVolumeClaim volumes', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'k8ts-claims-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('says why a claim or its volume is not usable yet, in the kubelet words', async () => {
    const prefix =
      'Unable to attach or mount volumes: unmounted volumes=[www], unattached volumes=[], failed to process volumes=[www]: error processing PVC default/data: ';
    const pv = hostPathVolume(join(dir, 'v'));
    const cases: [string, PersistentVolumeClaim | undefined, PersistentVolume | undefined, string][] = [
      ['no claim', undefined, pv, 'persistentvolumeclaim "data" not found'],
      ['pending', boundClaim({ spec: {}, status: { phase: 'Pending' } }), pv, 'PVC is not bound'],
      ['no volumeName', boundClaim({ spec: {} }), pv, 'PVC has empty pvc.Spec.VolumeName'],
      [
        'being deleted',
        boundClaim({ metadata: { name: 'data', namespace: 'default', uid: 'c-1', deletionTimestamp: 'x' } }),
        pv,
        "can't start pod because PVC default/data is being deleted",
      ],
      [
        'no PV',
        boundClaim(),
        undefined,
        'failed to fetch PV pvc-c-1 from API server: persistentvolumes "pvc-c-1" not found',
      ],
      [
        'PV without claimRef',
        boundClaim(),
        { metadata: { name: 'pvc-c-1' }, spec: { hostPath: { path: '/x' } } },
        'found PV object pvc-c-1 but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim',
      ],
      [
        'PV of another claim',
        boundClaim(),
        hostPathVolume('/x', { claimRef: { uid: 'other' } }),
        'found PV object pvc-c-1 but its pv.Spec.ClaimRef.UID (other) does not point to claim.UID (c-1)',
      ],
    ];
    for (const [name, claim, volume, why] of cases) {
      const err = await resolveClaim(reader(claim, volume), 'default', 'www', { claimName: 'data' }).then(
        () => assert.fail(`${name}: resolved`),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ClaimNotReadyError && err instanceof MountError, name);
      assert.equal(err.message, prefix + why, name);
    }
  });

  it('reads the claim through the API: a missing claim and a Pending one', async () => {
    const api = await startTestApi();
    try {
      await api.client.create(
        resources.persistentvolumeclaims,
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
        { namespace: 'default' },
      );
      const reader = clientClaimReader(api.client);
      await assert.rejects(
        resolveClaim(reader, 'default', 'www', { claimName: 'nope' }),
        /error processing PVC default\/nope: persistentvolumeclaim "nope" not found$/,
      );
      await assert.rejects(
        resolveClaim(reader, 'default', 'www', { claimName: 'data' }),
        /error processing PVC default\/data: PVC is not bound$/,
      );
    } finally {
      await api.stop();
    }
  });

  it('refuses a volume of another node, a Block volume and a source it cannot mount', async () => {
    const other = hostPathVolume('/x', {
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] },
          ],
        },
      },
    });
    await assert.rejects(
      resolveClaim(reader(boundClaim(), other), 'default', 'www', { claimName: 'data' }),
      /MountVolume.NodeAffinity check failed for volume "pvc-c-1" : no matching NodeSelectorTerms/,
    );
    await assert.rejects(
      resolveClaim(reader(boundClaim(), hostPathVolume('/x', { volumeMode: 'Block' })), 'default', 'www', {
        claimName: 'data',
      }),
      /volumeMode Block/,
    );
    const nfs: PersistentVolume = {
      metadata: { name: 'pvc-c-1' },
      spec: { nfs: { server: 's', path: '/' }, claimRef: { uid: 'c-1' } },
    };
    await assert.rejects(
      resolveClaim(reader(boundClaim(), nfs), 'default', 'www', { claimName: 'data' }),
      /volume source not supported by k8ts/,
    );
  });

  it('mounts the hostPath of the bound volume, read-only as the claim or the mount says, with subPaths inside it', async () => {
    const path = join(dir, 'storage', 'pvc-c-1');
    const uid = 'pod-1';
    const pod = {
      metadata: { name: 'web-0', namespace: 'default', uid },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'i',
            volumeMounts: [
              { name: 'www', mountPath: '/data' },
              { name: 'ro', mountPath: '/ro' },
              { name: 'www', mountPath: '/sub', subPath: 'logs', readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: 'www', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'ro', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
        ],
      },
    };
    const binds: [string, string][] = [];
    const mounter: Mounter = {
      bindMount: (source, target) => {
        binds.push([source, target]);
        return Promise.resolve();
      },
      mountTmpfs: () => Promise.reject(new Error('no tmpfs here')),
      unmount: () => Promise.resolve(),
      mountPoints: () => Promise.resolve([]),
    };
    const volumes = await setUpVolumes(pod, {
      dataDir: dir,
      client: {} as RestClient,
      mounter,
      claims: reader(boundClaim(), hostPathVolume(path)),
    });
    assert.ok(statSync(path).isDirectory(), 'DirectoryOrCreate made the directory');
    assert.deepEqual(volumes.get('www'), { hostPath: path, readOnly: false });
    assert.deepEqual(volumes.get('ro'), { hostPath: path, readOnly: true });
    const mounts = await containerMounts(pod.spec.containers[0]!, volumes, {
      podDir: join(dir, 'pods', uid),
      envs: [],
      mounter,
    });
    assert.deepEqual(
      mounts.map((m) => [m.containerPath, m.readonly]),
      [
        ['/data', false],
        ['/ro', true],
        ['/sub', true],
      ],
    );
    assert.ok(existsSync(join(path, 'logs')), 'the subPath was made inside the volume');
    assert.equal(mounts[2]!.hostPath, join(dir, 'pods', uid, 'volume-subpaths', 'www', 'c', '2'));
    assert.equal(binds.length, 1);
  });

  it('mounts a local volume only when its directory exists', async () => {
    const path = join(dir, 'local-disk');
    const local: PersistentVolume = {
      metadata: { name: 'pvc-c-1' },
      spec: { local: { path }, claimRef: { uid: 'c-1' } },
    };
    const resolved = () =>
      setUpVolumes(
        {
          metadata: { name: 'p', namespace: 'default', uid: 'pod-2' },
          spec: { containers: [], volumes: [{ name: 'www', persistentVolumeClaim: { claimName: 'data' } }] },
        },
        {
          dataDir: dir,
          client: {} as RestClient,
          mounter: {} as Mounter,
          claims: reader(boundClaim(), local),
        },
      );
    await assert.rejects(resolved(), /local volume pvc-c-1: path ".*local-disk" does not exist/);
    mkdirSync(path);
    assert.deepEqual((await resolved()).get('www'), { hostPath: path, readOnly: false });
  });
});
