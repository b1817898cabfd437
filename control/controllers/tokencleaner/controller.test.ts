/**
 * The token cleaner against the real API server, on a FakeClock: an expired bootstrap
 * token's Secret is deleted at once, one that expires later when its time comes, and one
 * without an expiration (the server's default join token) is kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/clock.js';
import { waitFor } from '../../../api/client/testing.js';
import { resources } from '../../../api/client/resource.js';
import type { KubeObject } from '../../../api/object.js';
import { bootstrapTokenSecret } from '../../../api/auth/bootstrap-token.js';
import { getIfExists, useControllers } from '../testing.js';
import { TokenCleaner } from './controller.js';

const clock = new FakeClock();
const cluster = useControllers({
  controllers: { tokencleaner: (ctx) => new TokenCleaner(ctx) },
  clock,
  setup: async (api) => {
    await api.client.create(resources.secrets, token('expird', { ttlSeconds: -60 }), {
      namespace: 'kube-system',
    });
    await api.client.create(resources.secrets, token('later0', { ttlSeconds: 3600 }), {
      namespace: 'kube-system',
    });
    await api.client.create(resources.secrets, token('never0', {}), { namespace: 'kube-system' });
    // Not a bootstrap token, though expired-looking: left alone.
    await api.client.create(
      resources.secrets,
      {
        ...token('opaque', { ttlSeconds: -60 }),
        type: 'Opaque',
        metadata: { name: 'other', namespace: 'kube-system' },
      },
      { namespace: 'kube-system' },
    );
  },
});

const exists = async (name: string): Promise<boolean> =>
  (await getIfExists(cluster.api.client, resources.secrets, 'kube-system', name)) !== undefined;
const token = (id: string, opts: { ttlSeconds?: number }): KubeObject =>
  bootstrapTokenSecret(id, '0123456789abcdef', { ...opts, now: new Date(clock.now()) });

describe('tokencleaner', () => {
  it('deletes an expired bootstrap token at once and keeps the others', async () => {
    await waitFor('the expired token deleted', async () => !(await exists('bootstrap-token-expird')), 15_000);
    assert.equal(await exists('bootstrap-token-later0'), true);
    assert.equal(await exists('bootstrap-token-never0'), true);
    assert.equal(await exists('other'), true);
  });

  it('deletes a token when it expires, not before', async () => {
    await clock.advance(3599_000);
    assert.equal(await exists('bootstrap-token-later0'), true);
    await clock.advance(2_000);
    await waitFor(
      'the token deleted once expired',
      async () => !(await exists('bootstrap-token-later0')),
      15_000,
    );
    assert.equal(await exists('bootstrap-token-never0'), true);
  });
});
