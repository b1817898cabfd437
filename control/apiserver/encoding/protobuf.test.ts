import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeProtobufObject, PROTOBUF_KINDS, PROTOBUF_MAGIC, PROTOBUF_MEDIA_TYPE } from './protobuf.js';
import { MESSAGES } from './protobuf-schema.js';
import { decodeObject } from '../request.js';
import { ApiError } from '../status.js';

// A tiny protobuf writer, independent of the decoder and of its schema table: every field
// number below is written out from the generated.proto files, so a wrong row in
// protobuf-schema.ts fails these tests.
type Bytes = Uint8Array;
const cat = (...parts: Bytes[]): Bytes => Buffer.concat(parts);
function varint(n: number | bigint): Bytes {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? b | 0x80 : b);
  } while (v > 0n);
  return Uint8Array.from(out);
}
const tag = (field: number, wire: number): Bytes => varint(field * 8 + wire);
/** A varint field (int32, int64, bool; negative numbers as 10-byte two's complement). */
const int = (field: number, n: number | bigint | boolean): Bytes =>
  cat(tag(field, 0), varint(typeof n === 'boolean' ? Number(n) : n));
/** A length-delimited field of raw bytes. */
const bytes = (field: number, b: Bytes): Bytes => cat(tag(field, 2), varint(b.length), b);
const str = (field: number, s: string): Bytes => bytes(field, Buffer.from(s, 'utf8'));
/** An embedded message field. */
const msg = (field: number, ...parts: Bytes[]): Bytes => bytes(field, cat(...parts));
/** One map entry {key = 1, value = 2}. */
const entry = (field: number, key: string, value: Bytes): Bytes => msg(field, str(1, key), value);
/** Kubernetes' envelope: magic + runtime.Unknown {typeMeta = 1 {apiVersion, kind}, raw = 2}. */
const envelope = (apiVersion: string, kind: string, ...raw: Bytes[]): Buffer =>
  Buffer.from(cat(PROTOBUF_MAGIC, msg(1, str(1, apiVersion), str(2, kind)), bytes(2, cat(...raw))));
// Well-known messages: metav1.Time {seconds = 1, nanos = 2}, resource.Quantity {string = 1},
// intstr.IntOrString {type = 1, intVal = 2, strVal = 3}.
const time = (field: number, seconds: number, nanos = 0): Bytes =>
  msg(field, int(1, seconds), ...(nanos ? [int(2, nanos)] : []));
const quantity = (s: string): Bytes => msg(2, str(1, s));
const intOrInt = (field: number, n: number): Bytes => msg(field, int(1, 0), int(2, n));
const intOrStr = (field: number, s: string): Bytes => msg(field, int(1, 1), str(3, s));
/**
 * ObjectMeta as gogo-protobuf writes it: every non-pointer field, zero or not (name = 1,
 * generateName = 2, namespace = 3, selfLink = 4, uid = 5, resourceVersion = 6,
 * generation = 7, creationTimestamp = 8 (empty: the zero time), labels = 11).
 */
const objectMeta = (name: string, labels: Record<string, string> = {}): Bytes =>
  msg(
    1,
    str(1, name),
    str(2, ''),
    str(3, ''),
    str(4, ''),
    str(5, ''),
    str(6, ''),
    int(7, 0),
    msg(8),
    ...Object.entries(labels).map(([k, v]) => entry(11, k, str(2, v))),
  );

/** Fields of numbers the decoder does not know, of every wire type: all skipped. */
const unknownFields = cat(
  int(900, 7),
  str(901, 'x'),
  tag(902, 5),
  Uint8Array.of(1, 2, 3, 4),
  tag(903, 1),
  new Uint8Array(8),
  tag(904, 3),
  int(1, 5),
  tag(904, 4),
);

function assertBadRequest(body: Buffer, message: RegExp): void {
  assert.throws(
    () => decodeProtobufObject(body),
    (e) => e instanceof ApiError && e.code === 400 && e.reason === 'BadRequest' && message.test(e.message),
  );
}

describe('decodeProtobufObject', () => {
  it('decodes a ConfigMap: string and bytes maps, zero fields dropped, a pointer bool kept', () => {
    const body = envelope(
      'v1',
      'ConfigMap',
      objectMeta('c1'),
      entry(2, 'a', str(2, 'b')),
      entry(2, 'empty', str(2, '')),
      entry(3, 'bin', bytes(2, Uint8Array.of(0, 1, 2, 0xff))),
      int(4, false), // immutable *bool
      unknownFields,
    );
    assert.deepEqual(decodeProtobufObject(body), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c1', creationTimestamp: null },
      immutable: false,
      data: { a: 'b', empty: '' },
      binaryData: { bin: 'AAEC/w==' },
    });
  });

  it('decodes a Secret: data as base64, stringData and type', () => {
    const body = envelope(
      'v1',
      'Secret',
      objectMeta('s1'),
      entry(2, 'p', bytes(2, Buffer.from('q'))),
      entry(2, 'nul', bytes(2, Uint8Array.of(0))),
      entry(4, 'plain', str(2, 'text')),
      str(3, 'Opaque'),
    );
    assert.deepEqual(decodeProtobufObject(body), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's1', creationTimestamp: null },
      data: { p: 'cQ==', nul: 'AA==' },
      stringData: { plain: 'text' },
      type: 'Opaque',
    });
  });

  it('skips deeply nested unknown groups without running out of stack', () => {
    const depth = 100_000;
    const groups = Buffer.concat([
      ...Array<Bytes>(depth).fill(tag(904, 3)),
      ...Array<Bytes>(depth).fill(tag(904, 4)),
    ]);
    const body = envelope('v1', 'ConfigMap', groups, entry(2, 'a', str(2, 'b')));
    assert.deepEqual(decodeProtobufObject(body).data, { a: 'b' });
    assertBadRequest(
      envelope('v1', 'ConfigMap', tag(904, 3), tag(904, 3), tag(904, 4)),
      /unterminated group/,
    );
  });

  it('keeps a map key named __proto__ as a key', () => {
    const data = decodeProtobufObject(envelope('v1', 'ConfigMap', entry(2, '__proto__', str(2, 'x')))).data;
    assert.deepEqual(Object.keys(data as object), ['__proto__']);
    assert.equal(JSON.stringify(data), '{"__proto__":"x"}');
    assert.equal(Object.getPrototypeOf(data), Object.prototype);
  });

  it('decodes a Namespace', () => {
    const body = envelope('v1', 'Namespace', objectMeta('n1', { team: 'a' }), msg(2, str(1, 'kubernetes')));
    assert.deepEqual(decodeProtobufObject(body), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'n1', creationTimestamp: null, labels: { team: 'a' } },
      spec: { finalizers: ['kubernetes'] },
    });
  });

  it('decodes a Deployment: IntOrString, Time, Quantity, probes, inline structs, pointer zeros', () => {
    const container = msg(
      2, // PodSpec.containers
      str(1, 'web'),
      str(2, 'spring-server:1.0'),
      msg(6, str(1, 'http'), int(3, 8080), str(4, 'TCP')), // ports: name, containerPort, protocol
      msg(
        7, // env
        str(1, 'PASSWORD'),
        // valueFrom.secretKeyRef: LocalObjectReference (embedded, 1) {name = 1}, key = 2
        msg(3, msg(4, msg(1, str(1, 'db')), str(2, 'password'))),
      ),
      msg(
        8, // resources: limits = 1, requests = 2 (map<string, Quantity>)
        entry(1, 'cpu', quantity('500m')),
        entry(1, 'memory', quantity('128Mi')),
        entry(2, 'cpu', quantity('100m')),
      ),
      msg(
        10, // livenessProbe: handler (embedded ProbeHandler, 1) {httpGet = 2 {path = 1, port = 2}}
        msg(1, msg(2, str(1, '/healthz'), intOrInt(2, 8080))),
        int(2, 5), // initialDelaySeconds
        int(3, 0), // timeoutSeconds 0: omitempty, dropped
      ),
      msg(11, msg(1, msg(3, intOrStr(1, 'http')))), // readinessProbe.tcpSocket.port
      int(16, false), // stdin: omitempty, dropped
    );
    const podSpec = msg(
      2, // PodTemplateSpec.spec
      container,
      int(4, 0), // terminationGracePeriodSeconds *int64: kept
      msg(14, int(2, 0), int(4, 1), int(4, 2), varintList(4, 3, 4)), // securityContext
    );
    const body = envelope(
      'apps/v1',
      'Deployment',
      objectMeta('web', { app: 'web' }),
      msg(
        2, // spec
        int(1, 2), // replicas
        msg(2, entry(1, 'app', str(2, 'web'))), // selector.matchLabels
        msg(3, msg(1, entry(11, 'app', str(2, 'web')), time(8, 1_700_000_000, 999)), podSpec),
        msg(4, str(1, 'RollingUpdate'), msg(2, intOrInt(1, 1), intOrStr(2, '25%'))),
        int(5, 0), // minReadySeconds: omitempty, dropped
        int(7, false), // paused: omitempty, dropped
        int(9, 600), // progressDeadlineSeconds
      ),
      msg(3), // status {}
    );
    assert.deepEqual(decodeProtobufObject(body), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', creationTimestamp: null, labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          // metav1.Time has whole seconds: the nanos are dropped, as Kubernetes does.
          metadata: { labels: { app: 'web' }, creationTimestamp: '2023-11-14T22:13:20Z' },
          spec: {
            containers: [
              {
                name: 'web',
                image: 'spring-server:1.0',
                ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
                env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }],
                resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m' } },
                livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, initialDelaySeconds: 5 },
                readinessProbe: { tcpSocket: { port: 'http' } },
              },
            ],
            terminationGracePeriodSeconds: 0,
            // runAsUser *int64 0 is root, kept; supplementalGroups unpacked and packed.
            securityContext: { runAsUser: 0, supplementalGroups: [1, 2, 3, 4] },
          },
        },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } },
        progressDeadlineSeconds: 600,
      },
      status: {},
    });
  });

  it('keeps replicas: 0 (a pointer) and decodes negative int64 values', () => {
    const body = envelope('apps/v1', 'ReplicaSet', objectMeta('rs'), msg(2, int(1, 0)));
    assert.deepEqual((decodeProtobufObject(body).spec as object) ?? {}, { replicas: 0 });
    const opts = decodeProtobufObject(envelope('apps/v1', 'DeleteOptions', int(1, -1), str(4, 'Foreground')));
    assert.deepEqual(opts, {
      apiVersion: 'apps/v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: -1,
      propagationPolicy: 'Foreground',
    });
    const big = decodeProtobufObject(envelope('v1', 'DeleteOptions', int(1, 2 ** 40)));
    assert.equal(big.gracePeriodSeconds, 2 ** 40);
  });

  it('decodes MicroTime with microseconds (events.k8s.io Event, Lease)', () => {
    const event = decodeProtobufObject(
      envelope(
        'events.k8s.io/v1',
        'Event',
        objectMeta('e1'),
        time(2, 1_700_000_000, 123_456_789), // eventTime
        msg(3, int(1, 2), time(2, 1_700_000_001)), // series {count, lastObservedTime}
        str(4, 'k8ts-scheduler'),
        str(7, 'Scheduled'),
        msg(8, str(1, 'Pod'), str(2, 'default'), str(3, 'p1')), // regarding
        str(10, 'assigned'),
        str(11, 'Normal'),
      ),
    );
    assert.deepEqual(event, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e1', creationTimestamp: null },
      eventTime: '2023-11-14T22:13:20.123456Z',
      series: { count: 2, lastObservedTime: '2023-11-14T22:13:21.000000Z' },
      reportingController: 'k8ts-scheduler',
      reason: 'Scheduled',
      regarding: { kind: 'Pod', namespace: 'default', name: 'p1' },
      note: 'assigned',
      type: 'Normal',
    });
    const lease = decodeProtobufObject(
      envelope(
        'coordination.k8s.io/v1',
        'Lease',
        objectMeta('node-1'),
        msg(2, str(1, 'node-1'), int(2, 40), time(4, 0)),
      ),
    );
    assert.deepEqual(lease.spec, {
      holderIdentity: 'node-1',
      leaseDurationSeconds: 40,
      renewTime: '1970-01-01T00:00:00.000000Z',
    });
  });

  it('decodes the subresource bodies: Binding, Eviction with DeleteOptions, Scale', () => {
    assert.deepEqual(
      decodeProtobufObject(envelope('v1', 'Binding', objectMeta('p1'), msg(2, str(1, 'Node'), str(3, 'n1')))),
      {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'p1', creationTimestamp: null },
        target: { kind: 'Node', name: 'n1' },
      },
    );
    assert.deepEqual(
      decodeProtobufObject(
        envelope(
          'policy/v1',
          'Eviction',
          objectMeta('p1'),
          msg(2, int(1, 0), msg(2, str(1, 'uid-1')), str(5, 'All')),
        ),
      ),
      {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'p1', creationTimestamp: null },
        deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'uid-1' }, dryRun: ['All'] },
      },
    );
    assert.deepEqual(
      decodeProtobufObject(envelope('autoscaling/v1', 'Scale', objectMeta('web'), msg(2, int(1, 3)))),
      {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'web', creationTimestamp: null },
        spec: { replicas: 3 },
      },
    );
  });

  it('merges a message field that occurs twice, as protobuf requires; the last scalar wins', () => {
    const body = envelope(
      'v1',
      'ConfigMap',
      msg(1, str(1, 'first'), entry(11, 'a', str(2, '1'))),
      msg(1, str(1, 'second'), entry(11, 'b', str(2, '2'))),
    );
    assert.deepEqual(decodeProtobufObject(body).metadata, { name: 'second', labels: { a: '1', b: '2' } });
  });

  it('decodes what real kubectl 1.32 sends', () => {
    // `kubectl create deployment web --image=spring-server:1.0 --replicas=2` (-v=9 dump).
    const deployment = Buffer.from(
      '6b3873000a150a07617070732f7631120a4465706c6f796d656e7412c0010a1f0a0377656212001a0022002a' +
        '003200380042005a0a0a036170701203776562128e010802120c0a0a0a0361707012037765621a740a1c0a0012' +
        '001a0022002a003200380042005a0a0a036170701203776562125412360a0d737072696e672d73657276657212' +
        '11737072696e672d7365727665723a312e302a0042006a007200800100880100900100a201001a0032004200' +
        '4a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200',
      'hex',
    );
    // ... and its own JSON for the same object (`--dry-run=client -o json`).
    assert.deepEqual(decodeProtobufObject(deployment), {
      kind: 'Deployment',
      apiVersion: 'apps/v1',
      metadata: { name: 'web', creationTimestamp: null, labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { creationTimestamp: null, labels: { app: 'web' } },
          spec: { containers: [{ name: 'spring-server', image: 'spring-server:1.0', resources: {} }] },
        },
        strategy: {},
      },
      status: {},
    });
    // `kubectl create service nodeport web --tcp=80:8080`
    const service = Buffer.from(
      '6b3873000a0d0a02763112075365727669636512680a1f0a0377656212001a0022002a003200380042005a0a0a' +
        '03617070120377656212410a1b0a0738302d38303830120354435018502207080010903f1a002800120a0a0361' +
        '707012037765621a0022084e6f6465506f72743a00420052005a00600068001a020a001a002200',
      'hex',
    );
    assert.deepEqual(decodeProtobufObject(service), {
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'web', creationTimestamp: null, labels: { app: 'web' } },
      spec: {
        ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }],
        selector: { app: 'web' },
        type: 'NodePort',
      },
      status: { loadBalancer: {} },
    });
  });

  const malformed: [string, Buffer, RegExp][] = [
    ['no magic', Buffer.from('{"kind":"ConfigMap"}'), /does not start with the "k8s\\x00" prefix/],
    ['empty', Buffer.alloc(0), /prefix/],
    ['magic only: no kind', Buffer.from(PROTOBUF_MAGIC), /'Kind' is missing/],
    ['no apiVersion', Buffer.from(cat(PROTOBUF_MAGIC, msg(1, str(2, 'Pod')))), /'apiVersion' is missing/],
    [
      'unknown kind',
      envelope('v1', 'PersistentVolume'),
      /no kind "PersistentVolume" is registered for version "v1"/,
    ],
    [
      'kind in the wrong version',
      envelope('apps/v1', 'Pod'),
      /no kind "Pod" is registered for version "apps\/v1"/,
    ],
    [
      'DeleteOptions of an unknown group version',
      envelope('networking.k8s.io/v1', 'DeleteOptions'),
      /no kind "DeleteOptions"/,
    ],
    [
      'truncated varint',
      envelope('v1', 'ConfigMap', tag(900, 0), Uint8Array.of(0x80)),
      /end of data in a varint/,
    ],
    [
      'length past the end',
      envelope('v1', 'ConfigMap', Uint8Array.of(0x0a, 0x05, 0x0a)),
      /runs past its end/,
    ],
    [
      'wrong wire type for a known field',
      envelope('v1', 'ConfigMap', int(1, 3)),
      /wrong wire type 0 for ConfigMap.metadata/,
    ],
    ['illegal wire type', envelope('v1', 'ConfigMap', tag(900, 7)), /illegal wire type 7/],
    ['field number 0', envelope('v1', 'ConfigMap', Uint8Array.of(0x02, 0x00)), /field number 0/],
    [
      'a contentEncoding',
      Buffer.from(cat(PROTOBUF_MAGIC, msg(1, str(1, 'v1'), str(2, 'ConfigMap')), str(3, 'gzip'))),
      /contentEncoding "gzip"/,
    ],
    [
      'IntOrString of type 2',
      envelope('v1', 'Service', msg(2, msg(1, int(3, 80), msg(4, int(1, 2))))),
      /Service.spec.ports\[0\].targetPort: IntOrString type 2/,
    ],
    ['a time past year 9999', envelope('v1', 'ConfigMap', msg(1, time(8, 253402300800))), /outside years/],
  ];
  for (const [what, body, message] of malformed) {
    it(`400 for ${what}`, () => assertBadRequest(body, message));
  }
});

describe('decodeObject with protobuf bodies', () => {
  const body = envelope('v1', 'Namespace', objectMeta('n1'));
  it('takes the bytes as a Buffer, or as readBody gives them (latin1)', () => {
    const want = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n1', creationTimestamp: null } };
    assert.deepEqual(decodeObject(body, PROTOBUF_MEDIA_TYPE), want);
    assert.deepEqual(decodeObject(body.toString('latin1'), `${PROTOBUF_MEDIA_TYPE}; charset=binary`), want);
  });
  it('answers 400 to a protobuf body that is not one, 415 (listing protobuf) to other types', () => {
    assert.throws(
      () => decodeObject('{}', PROTOBUF_MEDIA_TYPE),
      (e) => e instanceof ApiError && e.code === 400,
    );
    assert.throws(
      () => decodeObject('{}', 'text/plain'),
      (e) => e instanceof ApiError && e.code === 415 && e.message.includes(PROTOBUF_MEDIA_TYPE),
    );
  });
});

describe('protobuf schema table', () => {
  const scalars = new Set(['string', 'bool', 'int32', 'int64', 'bytes']);
  it('names a message for every kind, and every type it references exists', () => {
    for (const type of Object.values(PROTOBUF_KINDS)) assert.ok(MESSAGES[type], type);
    for (const [name, fields] of Object.entries(MESSAGES)) {
      for (const [no, json, type, kind] of fields) {
        assert.ok(scalars.has(type) || MESSAGES[type], `${name}.${json} (${no}): no type ${type}`);
        if (kind === 'inline') assert.ok(!scalars.has(type) && json === '', `${name} ${no}`);
        if (kind === 'keepZero') assert.ok(scalars.has(type), `${name}.${json}`);
      }
    }
  });
  it('has unique field numbers and JSON names per message', () => {
    for (const [name, fields] of Object.entries(MESSAGES)) {
      const numbers = fields.map((f) => f[0]);
      assert.equal(new Set(numbers).size, numbers.length, `${name}: duplicate field number`);
      const names = fields.map((f) => f[1]).filter((n) => n !== '');
      assert.equal(new Set(names).size, names.length, `${name}: duplicate JSON name`);
    }
  });
});

/** A packed repeated varint field (proto3 style; Go writes proto2 repeated scalars unpacked). */
function varintList(field: number, ...values: number[]): Bytes {
  return bytes(field, cat(...values.map((v) => varint(v))));
}
