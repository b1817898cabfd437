import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint as SliceEndpoint, EndpointSlice } from '../../api/types.js';
import { endpointsForPort } from './endpoints.js';

const ep = (ip: string, conditions?: SliceEndpoint['conditions']): SliceEndpoint => ({
  addresses: [ip],
  ...(conditions ? { conditions } : {}),
});
const slice = (
  endpoints: SliceEndpoint[],
  ports: EndpointSlice['ports'] = [{ name: 'http', port: 8080, protocol: 'TCP' }],
  addressType: EndpointSlice['addressType'] = 'IPv4',
): EndpointSlice => ({ metadata: { name: 's', namespace: 'default' }, addressType, endpoints, ports });

const READY = { ready: true, serving: true, terminating: false };
const NOT_READY = { ready: false, serving: false, terminating: false };
const SERVING_TERMINATING = { ready: false, serving: true, terminating: true };

const CASES: [string, EndpointSlice[], string, [string[], boolean]][] = [
  [
    'ready endpoints, sorted numerically',
    [slice([ep('10.0.0.10', READY), ep('10.0.0.9', READY)])],
    'http',
    [['10.0.0.9:8080', '10.0.0.10:8080'], false],
  ],
  ['unset ready counts as ready', [slice([ep('10.0.0.1')])], 'http', [['10.0.0.1:8080'], false]],
  [
    'not-ready endpoints are left out',
    [slice([ep('10.0.0.1', READY), ep('10.0.0.2', NOT_READY)])],
    'http',
    [['10.0.0.1:8080'], false],
  ],
  [
    'serving-terminating only when none is ready',
    [slice([ep('10.0.0.1', READY), ep('10.0.0.2', SERVING_TERMINATING)])],
    'http',
    [['10.0.0.1:8080'], false],
  ],
  [
    'the serving-terminating fallback',
    [slice([ep('10.0.0.2', SERVING_TERMINATING), ep('10.0.0.3', NOT_READY)])],
    'http',
    [['10.0.0.2:8080'], true],
  ],
  ['another port name does not match', [slice([ep('10.0.0.1', READY)])], 'metrics', [[], false]],
  [
    'an unnamed port matches an unnamed slice port',
    [slice([ep('10.0.0.1', READY)], [{ port: 80 }])],
    '',
    [['10.0.0.1:80'], false],
  ],
  [
    'UDP slice ports do not serve a TCP port',
    [slice([ep('10.0.0.1', READY)], [{ name: 'http', port: 53, protocol: 'UDP' }])],
    'http',
    [[], false],
  ],
  ['FQDN slices are ignored', [slice([ep('db.example.com', READY)], undefined, 'FQDN')], 'http', [[], false]],
  [
    'slices with their own ports and duplicates across slices',
    [
      slice([ep('10.0.0.1', READY)]),
      slice([ep('10.0.0.1', READY)]),
      slice([ep('10.0.0.1', READY)], [{ name: 'http', port: 9090, protocol: 'TCP' }]),
    ],
    'http',
    [['10.0.0.1:8080', '10.0.0.1:9090'], false],
  ],
];

describe('endpointsForPort', () => {
  for (const [name, slices, port, [want, fallback]] of CASES) {
    it(name, () => {
      const got = endpointsForPort(slices, port, 'TCP');
      assert.deepEqual(
        got.endpoints.map((e) => `${e.ip}:${e.port}`),
        want,
      );
      assert.equal(got.terminatingFallback, fallback);
    });
  }
});

describe('endpointsForPort with a Local traffic policy (onlyNode)', () => {
  const on = (ip: string, nodeName: string, conditions = READY): SliceEndpoint => ({
    addresses: [ip],
    nodeName,
    conditions,
  });
  const cases: [string, EndpointSlice[], [string[], boolean]][] = [
    [
      "only this node's ready endpoints",
      [slice([on('10.0.0.1', 'a'), on('10.0.0.2', 'b'), on('10.0.0.3', 'a')])],
      [['10.0.0.1:8080', '10.0.0.3:8080'], false],
    ],
    ['none on this node: none at all (traffic is dropped)', [slice([on('10.0.0.2', 'b')])], [[], false]],
    [
      "this node's serving-terminating ones when it has no ready one, though another node has",
      [slice([on('10.0.0.1', 'a', SERVING_TERMINATING), on('10.0.0.2', 'b')])],
      [['10.0.0.1:8080'], true],
    ],
    ['an endpoint without a nodeName is not local', [slice([ep('10.0.0.1', READY)])], [[], false]],
  ];
  for (const [name, slices, [want, fallback]] of cases) {
    it(name, () => {
      const got = endpointsForPort(slices, 'http', 'TCP', 'a');
      assert.deepEqual(
        got.endpoints.map((e) => `${e.ip}:${e.port}`),
        want,
      );
      assert.equal(got.terminatingFallback, fallback);
    });
  }
});
