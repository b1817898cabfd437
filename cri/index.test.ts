import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCriError, openRuntime, type RuntimeKind } from './index.js';

describe('openRuntime', () => {
  it('opens the fake runtime with its options', async () => {
    const rt = await openRuntime('fake', { images: ['k8ts/pause:1.0'] });
    assert.equal((await rt.version()).runtimeName, 'fake');
    assert.ok(await rt.imageStatus('k8ts/pause:1.0'));
    await rt.close();
  });

  it('docker with no engine at the socket rejects Unavailable', async () => {
    await assert.rejects(
      openRuntime('docker', { nodeName: 'n', socketPath: '/nonexistent/docker.sock' }),
      (e: unknown) => isCriError(e, 'Unavailable'),
    );
  });

  it('docker without a node name is refused', async () => {
    await assert.rejects(openRuntime('docker', { nodeName: '' }), /nodeName is required/);
  });

  it('containerd with nothing at the endpoint rejects Unavailable, naming the socket', async () => {
    await assert.rejects(
      openRuntime('containerd', { endpoint: 'unix:///nonexistent/containerd.sock', timeoutMs: 3000 }),
      (e: unknown) => isCriError(e, 'Unavailable') && e.message.includes('/nonexistent/containerd.sock'),
    );
  });

  it('an unknown kind names the known ones', async () => {
    await assert.rejects(openRuntime('cri-o' as RuntimeKind, {} as never), /known: docker, containerd, fake/);
  });
});
