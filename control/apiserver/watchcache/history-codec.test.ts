import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HistoryCodec, MIN_PACKED_LENGTH } from './history-codec.js';

/** A pod of one ReplicaSet: what differs between two of them is what differs here. */
function replicaPod(i: number): string {
  const hex = (n: number) => (i * 2654435761).toString(16).padStart(8, '0').repeat(4).slice(0, n);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-57bc54c7cf-${hex(5)}`,
      namespace: 'default',
      uid: `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`,
      creationTimestamp: `2026-12-07T15:${String(i % 60).padStart(2, '0')}:29Z`,
      labels: { app: 'web', 'pod-template-hash': '57bc54c7cf' },
      annotations: { note: 'ünïcödé ✓ 🚀 "quoted" \\ back\u2028slash' },
    },
    spec: {
      nodeName: `node-${i % 200}`,
      containers: [
        {
          name: 'c',
          image: 'k8ts/busybox:1.0',
          command: ['sleep', '3600'],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
          volumeMounts: [
            {
              name: 'kube-api-access',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
        },
      ],
      tolerations: ['not-ready', 'unreachable'].map((t) => ({
        key: `node.kubernetes.io/${t}`,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      })),
    },
    status: {
      phase: 'Running',
      podIP: `100.64.${i % 200}.${i % 250}`,
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
        type,
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: `2026-12-07T15:${String(i % 60).padStart(2, '0')}:31Z`,
      })),
    },
  });
}

describe('HistoryCodec', () => {
  it('gives back exactly the JSON it packed, non-ASCII and escapes included', () => {
    const codec = new HistoryCodec();
    for (let i = 0; i < 50; i++) {
      const json = replicaPod(i);
      const packed = codec.pack(json);
      assert.ok(packed, 'packed');
      assert.equal(HistoryCodec.unpack(packed), json);
    }
  });

  it('packs a pod into a small part of its JSON with another pod of its ReplicaSet as the dictionary', () => {
    const codec = new HistoryCodec();
    codec.pack(replicaPod(0));
    const json = replicaPod(1);
    const packed = codec.pack(json)!;
    assert.ok(
      packed.bytes.length * 8 < json.length,
      `${json.length} characters packed into ${packed.bytes.length} bytes`,
    );
  });

  it('keeps short values as they are', () => {
    const codec = new HistoryCodec();
    assert.equal(codec.pack('{"a":1}'), undefined);
    assert.equal(codec.pack(`{"a":"${'x'.repeat(MIN_PACKED_LENGTH - 9)}"}`), undefined);
  });

  it('takes a new dictionary when values stop fitting it, and still unpacks the older values', () => {
    const codec = new HistoryCodec();
    const first = replicaPod(0);
    const old = codec.pack(first)!;
    // Values of another shape: random text compresses poorly against a pod.
    let seed = 7;
    const random = () => {
      let s = '';
      for (let i = 0; i < 2000; i++) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        s += String.fromCharCode(33 + (seed % 90));
      }
      return JSON.stringify({ data: s.replaceAll('\\', '/').replaceAll('"', "'") });
    };
    const values = Array.from({ length: 1100 }, random);
    const packed = values.map((v) => codec.pack(v)!);
    assert.notEqual(packed.at(-1)!.dictionary, old.dictionary, 'a new dictionary');
    assert.equal(packed[0]!.dictionary, old.dictionary, 'not before 1,000 packs');
    assert.equal(HistoryCodec.unpack(old), first);
    for (const i of [0, 999, 1000, 1099]) assert.equal(HistoryCodec.unpack(packed[i]!), values[i]);
  });
});
