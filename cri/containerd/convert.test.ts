/**
 * The CRI messages the containerd adapter builds (convert.ts), serialized with the vendored
 * api.proto as grpc-js sends them: what reaches the runtime is what the kubelet asked for.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import * as protoLoader from '@grpc/proto-loader';
import { containerMessage, sandboxMessage } from './convert.js';

const def = protoLoader.loadSync(fileURLToPath(new URL('./api.proto', import.meta.url)), {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const service = def['runtime.v1.RuntimeService'] as unknown as Record<
  string,
  { requestSerialize(v: unknown): Buffer; requestDeserialize(b: Buffer): Record<string, unknown> }
>;
const roundTrip = (method: string, msg: Record<string, unknown>) => {
  const call = service[method]!;
  return call.requestDeserialize(call.requestSerialize(msg));
};

const sandbox = {
  metadata: { name: 'web-0', namespace: 'shop', uid: 'u1', attempt: 0 },
  hostname: 'web-0',
  portMappings: [],
  labels: {},
  annotations: {},
  dnsConfig: { servers: ['10.43.0.10'], searches: ['shop.svc.cluster.local'], options: ['ndots:5'] },
};

describe('containerd messages on the wire', () => {
  it('env values of any text (KeyValue.value is bytes in this cri-api) arrive as they are', () => {
    const envs = [
      { key: 'KUBERNETES_PORT', value: 'tcp://10.43.0.1:443' },
      { key: 'GREETING', value: 'héllo wörld' },
      { key: 'EMPTY', value: '' },
    ];
    const msg = containerMessage(
      { metadata: { name: 'app', attempt: 0 }, image: { image: 'img:1' }, envs, labels: {}, annotations: {} },
      'sandbox-id',
      {},
    );
    const got = roundTrip('CreateContainer', { podSandboxId: 'sandbox-id', config: msg });
    const sent = (got.config as { envs: { key: string; value: Buffer }[] }).envs;
    assert.deepEqual(
      sent.map((e) => ({ key: e.key, value: Buffer.from(e.value).toString('utf8') })),
      envs,
    );
  });

  it("the sandbox's DNSConfig is dns_config", () => {
    const got = roundTrip('RunPodSandbox', {
      config: sandboxMessage(sandbox, {}, '/var/log/pods/x'),
      runtimeHandler: '',
    });
    assert.deepEqual((got.config as { dnsConfig: unknown }).dnsConfig, sandbox.dnsConfig);
  });
});
