/**
 * Projected and downwardAPI volumes (volumes.ts) against the in-process API server, on
 * disk (a mounter that cannot mount tmpfs, so no root is needed): every source's files
 * with their modes, a rewrite that follows the API and drops files no source writes any
 * more, the downward API's label lines, and the FailedMount messages of a missing
 * ConfigMap and of a token that cannot be had.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import { startTestApi, type TestApi } from '../../../test/support/api.js';
import { hostMounter, MountFailure, type Mounter } from './mount.js';
import type { KubeletPod } from './types.js';
import { MountError, refreshVolumes, setUpVolumes, type VolumeSetUpOptions } from './volumes.js';

const noTmpfs: Mounter = {
  ...hostMounter,
  mountTmpfs: () => Promise.reject(new MountFailure('mount -t tmpfs: permission denied')),
};

const pod = (volumes: KubeletPod['spec']['volumes']): KubeletPod => ({
  metadata: {
    name: 'p',
    namespace: 'default',
    uid: 'uid-1',
    labels: { app: 'web', tier: 'front' },
  },
  spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { memory: '64Mi' } } }], volumes },
});

describe('projected and downwardAPI volumes', () => {
  let api: TestApi;
  let dataDir: string;
  let token = 'first';
  let tokenFails = false;
  let opts: VolumeSetUpOptions;
  before(async () => {
    api = await startTestApi();
    dataDir = mkdtempSync(join(tmpdir(), 'k8ts-volumes-test-'));
    await api.client.create(
      resources.configmaps,
      { metadata: { name: 'cfg' }, data: { 'ca.crt': 'CA', other: 'x' } },
      { namespace: 'default' },
    );
    await api.client.create(
      resources.secrets,
      { metadata: { name: 'sec' }, data: { password: Buffer.from('hunter2').toString('base64') } },
      { namespace: 'default' },
    );
    opts = {
      dataDir,
      client: api.client,
      mounter: noTmpfs,
      tokens: {
        get: () =>
          tokenFails
            ? Promise.reject(new Error('serviceaccounts "default" not found'))
            : Promise.resolve({ token, expiresAt: Date.now() + 3600_000, refreshAt: Date.now() + 2880_000 }),
      },
    };
  });
  after(async () => {
    await api.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes every source, rewrites on refresh and drops what no source writes any more', async () => {
    const refreshAt: number[] = [];
    const p = pod([
      {
        name: 'proj',
        projected: {
          defaultMode: 0o640,
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
            { configMap: { name: 'cfg', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { secret: { name: 'sec', items: [{ key: 'password', path: 'dir/pw', mode: 0o600 }] } },
            { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          ],
        },
      },
      {
        name: 'down',
        downwardAPI: {
          items: [
            { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
            {
              path: 'mem',
              resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' },
            },
          ],
        },
      },
    ]);
    const vols = await setUpVolumes(p, { ...opts, onTokenRefreshAt: (at) => refreshAt.push(at) });
    const proj = vols.get('proj')!;
    assert.equal(proj.readOnly, true);
    assert.match(proj.hostPath, /kubernetes\.io~projected\/proj$/);
    const read = (f: string) => readFileSync(join(proj.hostPath, f), 'utf8');
    assert.equal(read('token'), 'first');
    assert.equal(read('ca.crt'), 'CA');
    assert.equal(read('dir/pw'), 'hunter2');
    assert.equal(read('labels'), 'app="web"\ntier="front"');
    assert.equal(statSync(join(proj.hostPath, 'token')).mode & 0o777, 0o640);
    assert.equal(statSync(join(proj.hostPath, 'dir/pw')).mode & 0o777, 0o600);
    assert.equal(refreshAt.length, 1);
    const down = vols.get('down')!.hostPath;
    assert.equal(readFileSync(join(down, 'name'), 'utf8'), 'p');
    assert.equal(readFileSync(join(down, 'mem'), 'utf8'), '64');

    token = 'second';
    const cm = await api.client.get(resources.configmaps, 'default', 'cfg');
    await api.client.update(resources.configmaps, { ...cm, data: { 'ca.crt': 'CA2' } });
    const fewer = pod([
      {
        name: 'proj',
        projected: {
          sources: [
            { serviceAccountToken: { path: 'token' } },
            { configMap: { name: 'cfg', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          ],
        },
      },
    ]);
    await refreshVolumes(fewer, opts);
    assert.equal(read('token'), 'second');
    assert.equal(read('ca.crt'), 'CA2');
    assert.equal(existsSync(join(proj.hostPath, 'dir')), false);
    assert.equal(existsSync(join(proj.hostPath, 'labels')), false);
  });

  it('fails to mount with the kubelet words: a missing ConfigMap, a token that cannot be had', async () => {
    const missing = pod([{ name: 'm', projected: { sources: [{ configMap: { name: 'nope' } }] } }]);
    await assert.rejects(
      setUpVolumes(missing, opts),
      (err: unknown) =>
        err instanceof MountError &&
        err.message === 'MountVolume.SetUp failed for volume "m" : configmap "nope" not found',
    );
    const optional = pod([
      { name: 'o', projected: { sources: [{ configMap: { name: 'nope', optional: true } }] } },
    ]);
    assert.ok((await setUpVolumes(optional, opts)).get('o'));
    tokenFails = true;
    const t = pod([{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }]);
    await assert.rejects(
      setUpVolumes(t, opts),
      (err: unknown) =>
        err instanceof MountError &&
        err.message ===
          'MountVolume.SetUp failed for volume "t" : failed to fetch token: serviceaccounts "default" not found',
    );
    tokenFails = false;
  });
});
