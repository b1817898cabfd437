/**
 * The ServiceAccount controller and the root CA publisher against the real API server:
 * every namespace gets its `default` ServiceAccount and its `kube-root-ca.crt`, and both
 * come back after a delete; an edited `kube-root-ca.crt` is put back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import { getIfExists, until, useControllers } from '../testing.js';
import { RootCACertPublisher, ROOT_CA_CONFIGMAP } from '../rootcacertpublisher/index.js';
import { ServiceAccountsController } from './controller.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n';

const cluster = useControllers({
  controllers: {
    serviceaccount: (ctx) => new ServiceAccountsController(ctx),
    'root-ca-cert-publisher': (ctx) => new RootCACertPublisher(ctx),
  },
  config: { rootCACert: CA },
});

const sa = (ns: string): Promise<KubeObject | undefined> =>
  getIfExists(cluster.api.client, resources.serviceaccounts, ns, 'default');
const rootCA = (ns: string): Promise<KubeObject | undefined> =>
  getIfExists(cluster.api.client, resources.configmaps, ns, ROOT_CA_CONFIGMAP);
const caOf = async (ns: string): Promise<string | undefined> =>
  ((await rootCA(ns))?.data as Record<string, string> | undefined)?.['ca.crt'];

describe('serviceaccount controller', () => {
  it('makes the default ServiceAccount again after it is deleted', async () => {
    const before = await until('the default ServiceAccount', () => sa('default'));
    await cluster.api.client.delete(resources.serviceaccounts, 'default', 'default');
    const after = await until('the default ServiceAccount made again', async () => {
      const now = await sa('default');
      return now && now.metadata?.uid !== before.metadata?.uid ? now : undefined;
    });
    assert.equal(after.metadata?.name, 'default');
  });
});

describe('root-ca-cert-publisher', () => {
  it('publishes the CA in every namespace, a new one too', async () => {
    assert.equal(await until('kube-root-ca.crt in default', () => caOf('default')), CA);
    assert.equal(await until('kube-root-ca.crt in kube-system', () => caOf('kube-system')), CA);
    await cluster.api.client.create(resources.namespaces, { metadata: { name: 'fresh' } });
    assert.equal(await until('kube-root-ca.crt in fresh', () => caOf('fresh')), CA);
    const cm = (await rootCA('fresh'))!;
    assert.deepEqual(Object.keys(cm.data as object), ['ca.crt']);
    assert.match(cm.metadata?.annotations?.['kubernetes.io/description'] ?? '', /verify the kube-apiserver/);
  });

  it('makes it again after a delete and puts back edited data', async () => {
    await until('kube-root-ca.crt in default', () => caOf('default'));
    await cluster.api.client.delete(resources.configmaps, 'default', ROOT_CA_CONFIGMAP);
    assert.equal(await until('kube-root-ca.crt made again', () => caOf('default')), CA);
    const cm = (await rootCA('default'))!;
    await cluster.api.client.update(resources.configmaps, {
      ...cm,
      data: { 'ca.crt': 'tampered', extra: 'x' },
    });
    await until('kube-root-ca.crt put back', async () => {
      const now = await rootCA('default');
      const data = now?.data as Record<string, string> | undefined;
      return data?.['ca.crt'] === CA && data.extra === undefined;
    });
  });
});
