// The upstream check of protobuf-schema.spec, on a generated.proto excerpt written out here.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSpec } from './gen-protobuf-schema.js';
import { protoFileOf, verifyAgainstUpstream } from './verify-protobuf-schema.js';

const PROTO = `
syntax = "proto2";
package k8s.io.api.core.v1;
import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";
message ProbeHandler { optional string path = 1; }
message Probe {
  optional ProbeHandler handler = 1;
  optional int32 initialDelaySeconds = 2;
  optional int32 timeoutSeconds = 3;
}
message Pod {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated string finalizers = 3;
  map<string, string> labels = 2;
}
`;
const META = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.apis.meta.v1;
message ObjectMeta { optional string name = 1; }
`;
const protoText = (pkg: string) => (pkg === 'core.v1' ? PROTO : pkg === 'meta.v1' ? META : undefined);

describe('verify-protobuf-schema', () => {
  it('finds a spec that says what generated.proto says, noting the fields it leaves out', () => {
    const spec = `package meta.v1; message ObjectMeta { string name = 1; }
      package core.v1;
      message ProbeHandler { string path = 1; }
      message Probe { ProbeHandler = 1 [inline]; int32 initialDelaySeconds = 2; }
      message Pod { meta.v1.ObjectMeta metadata = 1; repeated string finalizers = 3; map<string, string> labels = 2; }`;
    assert.deepEqual(verifyAgainstUpstream(parseSpec(spec), protoText), {
      problems: [],
      notes: ['core.v1.Probe: upstream field timeoutSeconds = 3 is not in the spec'],
    });
  });

  it('reports a wrong number, name, type, rule and order, and a message upstream lacks', () => {
    const spec = `package meta.v1; message ObjectMeta { string name = 1; }
      package core.v1;
      message ProbeHandler { string path = 1; }
      message Probe { int32 timeoutSeconds = 2; ProbeHandler = 1 [inline]; int64 nope = 7; }
      message Pod { string metadata = 1; string finalizers = 3; map<string, string> tags = 2; }
      message Extra { string a = 1; }`;
    assert.deepEqual(verifyAgainstUpstream(parseSpec(spec), protoText).problems, [
      'core.v1.Probe.timeoutSeconds = 2: upstream names it initialDelaySeconds',
      'core.v1.Probe.nope = 7: upstream has no field 7',
      'core.v1.Probe: fields in the order 2, 1, 7, upstream 1, 2',
      'core.v1.Pod.metadata = 1: upstream type meta.v1.ObjectMeta',
      'core.v1.Pod.finalizers = 3: singular here, repeated upstream',
      'core.v1.Pod.tags = 2: upstream names it labels',
      'core.v1.Extra: no such message in core/v1/generated.proto',
    ]);
  });

  it('knows where each package lives', () => {
    assert.deepEqual(protoFileOf('apps.v1'), { repo: 'api', path: 'apps/v1/generated.proto' });
    assert.deepEqual(protoFileOf('meta.v1'), {
      repo: 'apimachinery',
      path: 'pkg/apis/meta/v1/generated.proto',
    });
    assert.deepEqual(protoFileOf('intstr'), {
      repo: 'apimachinery',
      path: 'pkg/util/intstr/generated.proto',
    });
    assert.deepEqual(protoFileOf('resource'), {
      repo: 'apimachinery',
      path: 'pkg/api/resource/generated.proto',
    });
  });
});
