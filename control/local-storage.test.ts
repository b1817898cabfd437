/**
 * The `local-path` StorageClass of control/local-storage.ts, through the real control
 * process (startControl over a sqlite store in a temp dir): created at start as the
 * default class, with the agents' provisioner name; left as the user edited it at the next
 * start; not created with `disableLocalStorage` (`--disable-local-storage`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LOCAL_PATH_PROVISIONER as AGENT_PROVISIONER } from '../agent/storage/volume.js';
import { isNotFound } from '../api/client/errors.js';
import { resources } from '../api/client/resource.js';
import { RestClient } from '../api/client/rest.js';
import type { KubeObject } from '../api/object.js';
import { LOCAL_PATH_PROVISIONER } from './local-storage.js';
import { startControl, type ControlConfig } from './main.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A control process without controllers or scheduler, on plain HTTP and a free port. */
async function withControl<T>(
  dataDir: string,
  extra: Partial<ControlConfig>,
  fn: (client: RestClient) => Promise<T>,
): Promise<T> {
  const control = await startControl({
    dataDir,
    bindAddress: '127.0.0.1',
    port: 0,
    datastore: 'sqlite',
    etcdEndpoints: [],
    logLevel: 'error',
    insecureHTTP: true,
    disableControllerManager: true,
    disableScheduler: true,
    advertiseAddress: '127.0.0.1',
    ...extra,
  });
  const client = new RestClient({ server: control.url });
  try {
    return await fn(client);
  } finally {
    client.close();
    await control.stop();
  }
}

const localPath = (client: RestClient) =>
  client.get<KubeObject>(resources.storageclasses, undefined, 'local-path').catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });

describe('the local-path StorageClass at control-process start', { timeout: 60_000 }, () => {
  it('names the provisioner the agents run', () => {
    assert.equal(LOCAL_PATH_PROVISIONER, AGENT_PROVISIONER);
  });

  it('is created as the default class, then left as the user edited it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-local-storage-'));
    dirs.push(dataDir);
    await withControl(dataDir, {}, async (client) => {
      const sc = (await localPath(client)) as KubeObject & Record<string, unknown>;
      assert.ok(sc, 'local-path exists');
      assert.deepEqual(sc.metadata?.annotations, { 'storageclass.kubernetes.io/is-default-class': 'true' });
      assert.equal(sc.provisioner, 'rancher.io/local-path');
      assert.equal(sc.volumeBindingMode, 'WaitForFirstConsumer');
      assert.equal(sc.reclaimPolicy, 'Delete');
      await client.patch(resources.storageclasses, undefined, 'local-path', 'merge', {
        metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'false' } },
      });
    });
    await withControl(dataDir, {}, async (client) => {
      const sc = await localPath(client);
      assert.equal(sc?.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'], 'false');
    });
  });

  it('is not created with disableLocalStorage', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8ts-local-storage-'));
    dirs.push(dataDir);
    await withControl(dataDir, { disableLocalStorage: true }, async (client) => {
      assert.equal(await localPath(client), undefined);
    });
  });
});
