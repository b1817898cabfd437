// One file because one module: the rules of validation.ts itself (field-errors.ts and ip.ts have their own tests), table-driven.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  fieldErrorString,
  generateName,
  isCIdentifier,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isInRange,
  isQualifiedName,
  isValidLabelValue,
  isValidPercent,
  isValidPortName,
  isValidPortNum,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validatePathSegmentName,
} from './validation.js';
import type { ObjectMetaLike } from './validation.js';

const a = (n: number): string => 'a'.repeat(n);

/** Runs `check` on every good value (expects no messages) and every bad one (expects some). */
function goodAndBad(name: string, check: (v: string) => string[], good: string[], bad: string[]): void {
  describe(name, () => {
    for (const v of good) {
      it(`accepts ${JSON.stringify(v.length > 40 ? `${v.slice(0, 20)}…(${v.length})` : v)}`, () => {
        assert.deepEqual(check(v), []);
      });
    }
    for (const v of bad) {
      it(`rejects ${JSON.stringify(v.length > 40 ? `${v.slice(0, 20)}…(${v.length})` : v)}`, () => {
        assert.notEqual(check(v).length, 0);
      });
    }
  });
}

// Value lists from Kubernetes' own validation tests (pkg/util/validation/validation_test.go).
goodAndBad(
  'isDNS1123Label',
  isDNS1123Label,
  ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2', a(63)],
  [
    '',
    'A',
    'ABC',
    'aBc',
    'A1',
    'A-1',
    '1-A',
    '-',
    'a-',
    '-a',
    '1-',
    '-1',
    '_',
    'a_',
    '_a',
    'a_b',
    '1_',
    '_1',
    '1_2',
    '.',
    'a.',
    '.a',
    'a.b',
    '1.',
    '.1',
    '1.2',
    ' ',
    'a ',
    ' a',
    'a b',
    '1 ',
    ' 1',
    '1 2',
    a(64),
    'a\n',
    'é',
  ],
);

goodAndBad(
  'isDNS1123Subdomain',
  isDNS1123Subdomain,
  [
    'a',
    'ab',
    'a--1--2--b',
    '0',
    '1--a--b--2',
    'a.a',
    'a--1--2--b.a',
    'a.1',
    '0.a',
    '1-a.a',
    '0.1',
    '1--a--b--2.1',
    'a.b.c.d.e',
    'aa.bb.cc.dd.ee',
    '1.2.3.4.5',
    '11.22.33.44.55',
    a(253),
  ],
  [
    '',
    'A',
    'aBc',
    '-',
    'a-',
    '-a',
    '_',
    'a_b',
    '.',
    'a.',
    '.a',
    'a..b',
    '1..2',
    ' ',
    'a b',
    'A.a',
    'ab.A',
    'A.1',
    '0.A',
    'A.B.C.D.E',
    'a.B.c.d.e',
    'a@b',
    'a,b',
    'a;b',
    'a:b',
    'a%b',
    'a?b',
    'a$b',
    a(254),
  ],
);

goodAndBad(
  'isDNS1035Label',
  isDNS1035Label,
  ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', a(63)],
  ['0', '01', '1a', '1-a', '', 'A', 'aBc', '-', 'a-', '-a', '_', 'a_b', '.', 'a.b', ' ', 'a b', a(64)],
);

goodAndBad(
  'isQualifiedName',
  isQualifiedName,
  [
    'simple',
    'now-with-dashes',
    '1-starts-with-num',
    '1234',
    'simple/simple',
    'now-with-dashes/now-with-dashes',
    'now.with.dots/simple',
    '1-num.2-num/3-num',
    '1234/5678',
    '1.2.3.4/5678',
    'Uppercase_Is_OK_123',
    'example.com/Uppercase_Is_OK_123',
    'requests.storage-foo',
    'app.kubernetes.io/name',
    a(63),
    `${a(253)}/${'b'.repeat(63)}`,
  ],
  [
    'nospecialchars%^=@',
    'cantendwithadash-',
    '-cantstartwithadash-',
    'only/one/slash',
    'Example.com/abc',
    'example_com/abc',
    'example.com/',
    '/simple',
    '',
    a(64),
    `${a(254)}/abc`,
  ],
);

goodAndBad(
  'isValidLabelValue',
  isValidLabelValue,
  ['simple', 'now-with-dashes', '1-starts-with-num', 'end-with-num-1', '1234', 'Mixed_Case.value', a(63), ''],
  [
    'nospecialchars%^=@',
    'Tama-nui-te-rā.is.Māori.sun',
    '\\backslashes\\are\\bad',
    '-starts-with-dash',
    'ends-with-dash-',
    '.starts.with.dot',
    'ends.with.dot.',
    'has/slash',
    a(64),
  ],
);

goodAndBad(
  'isValidPortName',
  isValidPortName,
  ['telnet', 're-mail-ck', 'pop3', 'a', 'a-1', '1-a', 'a-1-b-2-c', '1-a-2-b-3', 'http', a(15)],
  [
    'longerthan15characters',
    '',
    a(16),
    '12345',
    '1-2-3-4',
    '-begin',
    'end-',
    'two--hyphens',
    'whois++',
    'HTTP',
  ],
);

goodAndBad(
  'isCIdentifier',
  isCIdentifier,
  ['my_name', 'MY_NAME', 'MyName', '_x', 'a1'],
  ['', '1a', 'a-b', 'a.b'],
);

goodAndBad(
  'isEnvVarName',
  isEnvVarName,
  ['ABC', 'AbC_123', '_123', 'abc', 'a.b', 'my.env-name', '-a'],
  ['', '1abc', 'a b', 'a=b', '.', '..', '..a'],
);

goodAndBad(
  'isConfigMapKey',
  isConfigMapKey,
  [
    'a',
    'good',
    'good-good',
    'still.good',
    'this.is.also.good',
    '.so.is.this',
    'THIS_IS_GOOD',
    'so_is_this_17',
  ],
  ['.', '..', '..bad', 'b*d', 'bad!&bad', '', a(254)],
);

goodAndBad(
  'isValidPercent',
  isValidPercent,
  ['0%', '00000%', '1%', '01%', '99%', '100%', '101%'],
  ['', '0', '100', '0.0%', '99.9%', 'hundred', ' 1%', '1% ', '-0%', '-1%', '+1%'],
);

describe('exact Kubernetes messages', () => {
  const cases: [string, string[], string[]][] = [
    [
      'DNS-1123 label with a capital',
      isDNS1123Label('Foo'),
      [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    ['DNS-1123 label with dots', isDNS1123Label('a.b'), ['must not contain dots']],
    ['DNS-1123 label too long', isDNS1123Label(a(64)), ['must be no more than 63 characters']],
    [
      'DNS-1123 subdomain',
      isDNS1123Subdomain('a_b'),
      [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ],
    ],
    [
      'DNS-1035 label',
      isDNS1035Label('1abc'),
      [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    ['qualified name with an empty prefix', isQualifiedName('/simple'), ['prefix part must be non-empty']],
    [
      'qualified name with a bad prefix and name',
      isQualifiedName('Example.com/-x'),
      [
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
    ],
    [
      'qualified name with two slashes',
      isQualifiedName('a/b/c'),
      [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
    [
      'qualified name with an empty name',
      isQualifiedName('example.com/'),
      [
        'name part must be non-empty',
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
    ],
    ['qualified name too long', isQualifiedName(a(64)), ['name part must be no more than 63 characters']],
    [
      'label value',
      isValidLabelValue('-x'),
      [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ],
    ],
    ['port 0', isValidPortNum(0), ['must be between 1 and 65535, inclusive']],
    ['port 65536', isValidPortNum(65536), ['must be between 1 and 65535, inclusive']],
    ['port 80.5', isValidPortNum(80.5), ['must be between 1 and 65535, inclusive']],
    ['port NaN', isValidPortNum(Number.NaN), ['must be between 1 and 65535, inclusive']],
    ['in range', isInRange(11, 0, 10), ['must be between 0 and 10, inclusive']],
    [
      'port name, every rule broken',
      isValidPortName('-1--234567890123_'),
      [
        'must be no more than 15 characters',
        'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        'must contain at least one letter (a-z)',
        'must not contain consecutive hyphens',
        'must not begin or end with a hyphen',
      ],
    ],
    ['port name all digits', isValidPortName('12345'), ['must contain at least one letter (a-z)']],
    [
      'port name empty',
      isValidPortName(''),
      [
        'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        'must contain at least one letter (a-z)',
      ],
    ],
  ];
  for (const [name, got, want] of cases) {
    it(name, () => assert.deepEqual(got, want));
  }
  it('accepts the edges of the port range', () => {
    for (const p of [1, 2, 1000, 16384, 32768, 65535]) assert.deepEqual(isValidPortNum(p), []);
    for (const p of [0, -1, 65536, 100000]) assert.notEqual(isValidPortNum(p).length, 0);
  });
  it('counts length in UTF-8 bytes', () => {
    // 32 two-byte characters: 64 bytes, over the 63-byte limit even though 32 code units.
    assert.ok(isValidLabelValue('é'.repeat(32)).includes('must be no more than 63 characters'));
  });
});

describe('object names', () => {
  const cases: [string, (n: string, p: boolean) => string[], string, boolean, boolean][] = [
    // [name, validator, value, prefix, valid]
    ['subdomain', nameIsDNSSubdomain, 'my-app.v1', false, true],
    ['subdomain rejects trailing dash', nameIsDNSSubdomain, 'web-', false, false],
    ['subdomain prefix allows trailing dash', nameIsDNSSubdomain, 'web-', true, true],
    ['subdomain prefix still checks the rest', nameIsDNSSubdomain, 'Web-', true, false],
    ['subdomain prefix of one dash', nameIsDNSSubdomain, '-', true, false],
    ['label', nameIsDNSLabel, 'kube-system', false, true],
    ['label rejects dots', nameIsDNSLabel, 'a.b', false, false],
    ['label prefix', nameIsDNSLabel, 'ns-', true, true],
    ['1035 label (Service)', nameIsDNS1035Label, 'my-svc', false, true],
    ['1035 label rejects a leading digit', nameIsDNS1035Label, '1svc', false, false],
    ['1035 prefix', nameIsDNS1035Label, 'svc-', true, true],
    ['path segment', validatePathSegmentName, 'system:controller:x', false, true],
    ['path segment rejects ..', validatePathSegmentName, '..', false, false],
    ['path segment prefix may be ..', validatePathSegmentName, '..', true, true],
    ['path segment rejects /', validatePathSegmentName, 'a/b', false, false],
    ['path segment rejects %', validatePathSegmentName, 'a%b', true, false],
  ];
  for (const [name, fn, value, prefix, valid] of cases) {
    it(name, () => assert.equal(fn(value, prefix).length === 0, valid, fn(value, prefix).join('; ')));
  }
  it('gives path segment messages', () => {
    assert.deepEqual(validatePathSegmentName('.', false), ["may not be '.'"]);
    assert.deepEqual(validatePathSegmentName('a/%', false), ["may not contain '/'", "may not contain '%'"]);
  });
});

describe('generateName', () => {
  const seq = (...xs: number[]) => {
    let i = 0;
    return () => xs[i++ % xs.length]!;
  };
  const cases: [string, string, () => number, string][] = [
    ['appends five characters', 'web-', seq(0), 'web-bbbbb'],
    ['uses the whole alphabet', 'x-', seq(0, 0.999999, 0.5, 0.26, 0.75), 'x-b9rk2'],
    ['cuts the base to 58', `${a(70)}`, seq(0), `${a(58)}bbbbb`],
    ['keeps a 58-character base', a(58), seq(0), `${a(58)}bbbbb`],
    ['empty base', '', seq(0.1), 'ddddd'],
  ];
  for (const [name, base, rnd, want] of cases) {
    it(name, () => assert.equal(generateName(base, rnd), want));
  }
  it('produces valid 63-character names at most, from the vowel-free alphabet', () => {
    for (let i = 0; i < 50; i++) {
      const n = generateName(`${a(60)}-`);
      assert.equal(n.length, 63);
      assert.match(n.slice(58), /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.deepEqual(nameIsDNSSubdomain(n, false), []);
    }
  });
});

describe('labels and annotations', () => {
  it('validates label keys and values on the labels field', () => {
    const errs = validateLabels({ app: 'web', 'bad key': 'v', ok: '-bad' }, 'metadata.labels');
    assert.deepEqual(
      errs.map((e) => [e.field, e.badValue]),
      [
        ['metadata.labels', 'bad key'],
        ['metadata.labels', '-bad'],
      ],
    );
    assert.deepEqual(validateLabels(undefined, 'x'), []);
    assert.deepEqual(validateLabels(null, 'x'), []);
  });
  it('checks annotation keys case-insensitively', () => {
    assert.deepEqual(
      validateAnnotations(
        { 'Example.com/Key': 'v', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        'a',
      ),
      [],
    );
    const errs = validateAnnotations({ 'a/b/c': 'v' }, 'metadata.annotations');
    assert.equal(errs.length, 1);
    assert.equal(errs[0]!.badValue, 'a/b/c');
  });
  const size = (n: number) => ({ k: 'x'.repeat(n - 1) });
  const sizeCases: [string, Record<string, string>, number][] = [
    ['exactly 256 KiB is allowed', size(262144), 0],
    ['one byte over is too long', size(262145), 1],
    ['keys count too', { ['k'.repeat(50)]: 'v'.repeat(262094) }, 0],
    ['keys count too, over', { ['k'.repeat(50)]: 'v'.repeat(262095) }, 1],
    ['multibyte values count in bytes', { k: 'é'.repeat(131072) }, 1],
  ];
  for (const [name, ann, n] of sizeCases) {
    it(name, () => {
      const errs = validateAnnotations(ann, 'metadata.annotations');
      assert.equal(errs.length, n);
      if (n)
        assert.equal(
          fieldErrorString(errs[0]!),
          'metadata.annotations: Too long: may not be more than 262144 bytes',
        );
    });
  }
});

describe('validateLabelSelector', () => {
  const cases: [string, Parameters<typeof validateLabelSelector>[0], string[]][] = [
    ['null is fine', null, []],
    ['empty is fine', {}, []],
    [
      'matchLabels and expressions',
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
      [],
    ],
    [
      'In without values',
      { matchExpressions: [{ key: 'tier', operator: 'In' }] },
      [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
    ],
    [
      'Exists with values',
      { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['x'] }] },
      [
        "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ],
    ],
    [
      'unknown operator',
      { matchExpressions: [{ key: 'tier', operator: 'in', values: ['x'] }] },
      ['spec.selector.matchExpressions[0].operator: Invalid value: "in": not a valid selector operator'],
    ],
    [
      'bad key and value',
      { matchExpressions: [{ key: '-k', operator: 'NotIn', values: ['ok', 'b ad'] }] },
      ['spec.selector.matchExpressions[0].key', 'spec.selector.matchExpressions[0].values[1]'],
    ],
    ['bad matchLabels', { matchLabels: { 'a b': 'c' } }, ['spec.selector.matchLabels']],
  ];
  for (const [name, sel, want] of cases) {
    it(name, () => {
      const errs = validateLabelSelector(sel, 'spec.selector');
      const got = errs.map((e) => (want.some((w) => w.includes(':')) ? fieldErrorString(e) : e.field));
      assert.deepEqual(got, want);
    });
  }
});

describe('validateObjectMeta', () => {
  const pod = { namespaced: true, nameFn: nameIsDNSSubdomain };
  const node = { namespaced: false, nameFn: nameIsDNSSubdomain };
  const ns = { namespaced: false, nameFn: nameIsDNSLabel };
  // [case, meta, rules, expected "field: body" prefixes, in order]
  const cases: [string, ObjectMetaLike, typeof pod, string[]][] = [
    ['a valid pod', { name: 'web-1', namespace: 'default', labels: { app: 'web' } }, pod, []],
    ['a valid node', { name: 'node-1' }, node, []],
    ['a valid namespace', { name: 'kube-system' }, ns, []],
    [
      'no name',
      { namespace: 'default' },
      pod,
      ['metadata.name: Required value: name or generateName is required'],
    ],
    [
      'generateName but no generated name',
      { generateName: 'web-', namespace: 'default' },
      pod,
      ['metadata.name: Required value: name or generateName is required'],
    ],
    [
      'generateName with generated name',
      { generateName: 'web-', name: 'web-x7k2p', namespace: 'default' },
      pod,
      [],
    ],
    [
      'bad generateName',
      { generateName: 'Web-', name: 'Web-x7k2p', namespace: 'default' },
      pod,
      [
        'metadata.generateName: Invalid value: "Web-": a lowercase RFC 1123 subdomain',
        'metadata.name: Invalid value: "Web-x7k2p"',
      ],
    ],
    ['bad name', { name: 'my_pod', namespace: 'default' }, pod, ['metadata.name: Invalid value: "my_pod"']],
    [
      'namespace name with dots',
      { name: 'a.b' },
      ns,
      ['metadata.name: Invalid value: "a.b": must not contain dots'],
    ],
    ['namespace required', { name: 'web' }, pod, ['metadata.namespace: Required value']],
    [
      'namespace invalid',
      { name: 'web', namespace: 'Default' },
      pod,
      ['metadata.namespace: Invalid value: "Default"'],
    ],
    [
      'namespace forbidden on cluster-scoped',
      { name: 'n1', namespace: 'default' },
      node,
      ['metadata.namespace: Forbidden: not allowed on this type'],
    ],
    [
      'negative generation',
      { name: 'web', namespace: 'd', generation: -1 },
      pod,
      ['metadata.generation: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'bad label',
      { name: 'web', namespace: 'd', labels: { app: 'a b' } },
      pod,
      ['metadata.labels: Invalid value: "a b"'],
    ],
    [
      'bad annotation key',
      { name: 'web', namespace: 'd', annotations: { '-x': '' } },
      pod,
      ['metadata.annotations: Invalid value: "-x"'],
    ],
    [
      'bad finalizer',
      { name: 'web', namespace: 'd', finalizers: ['kubernetes.io/pvc-protection', 'a/b/c'] },
      pod,
      ['metadata.finalizers: Invalid value: "a/b/c"'],
    ],
    [
      'orphan and foreground finalizers',
      { name: 'web', namespace: 'd', finalizers: ['orphan', 'foregroundDeletion'] },
      pod,
      [
        'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
      ],
    ],
    [
      'owner reference fields required',
      { name: 'web', namespace: 'd', ownerReferences: [{}] },
      pod,
      [
        'metadata.ownerReferences[0].apiVersion: Required value: must not be empty',
        'metadata.ownerReferences[0].kind: Required value: must not be empty',
        'metadata.ownerReferences[0].name: Required value: must not be empty',
        'metadata.ownerReferences[0].uid: Required value: must not be empty',
      ],
    ],
    [
      'owner reference apiVersion',
      {
        name: 'web',
        namespace: 'd',
        ownerReferences: [{ apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }],
      },
      pod,
      [
        'metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>',
      ],
    ],
    [
      'owner reference apiVersion with no version',
      {
        name: 'web',
        namespace: 'd',
        ownerReferences: [{ apiVersion: 'apps/', kind: 'K', name: 'n', uid: 'u' }],
      },
      pod,
      ['metadata.ownerReferences[0].apiVersion: Invalid value: "apps/"'],
    ],
    [
      'an Event cannot own',
      {
        name: 'web',
        namespace: 'd',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'n', uid: 'u' }],
      },
      pod,
      [
        'metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"n","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
      ],
    ],
    [
      'two controllers',
      {
        name: 'web',
        namespace: 'd',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
        ],
      },
      pod,
      [
        'metadata.ownerReferences: Invalid value: [',
        'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and ReplicaSet/b',
      ],
    ],
  ];
  for (const [name, meta, rules, want] of cases) {
    it(name, () => {
      const got = validateObjectMeta(meta, rules).map(fieldErrorString);
      if (name === 'two controllers') {
        assert.equal(got.length, 1);
        for (const w of want) assert.ok(got[0]!.includes(w), got[0]);
        return;
      }
      assert.equal(got.length, want.length, got.join('\n'));
      want.forEach((w, i) => assert.ok(got[i]!.startsWith(w), `${got[i]} should start with ${w}`));
    });
  }
  it('uses the given path', () => {
    const errs = validateObjectMeta({}, pod, 'spec.template.metadata');
    assert.equal(errs[0]!.field, 'spec.template.metadata.name');
  });
});

describe('validateObjectMetaUpdate', () => {
  const old: ObjectMetaLike = {
    name: 'web',
    namespace: 'default',
    uid: 'u1',
    resourceVersion: '10',
    generation: 2,
    creationTimestamp: '2024-05-01T10:00:00Z',
  };
  const cases: [string, ObjectMetaLike, ObjectMetaLike, string[]][] = [
    ['no change', { ...old }, old, []],
    ['labels may change', { ...old, labels: { a: 'b' } }, old, []],
    ['same time as a Date', { ...old, creationTimestamp: new Date('2024-05-01T10:00:00.000Z') }, old, []],
    [
      'resourceVersion required',
      { ...old, resourceVersion: '' },
      old,
      ['metadata.resourceVersion: Invalid value: "": must be specified for an update'],
    ],
    [
      'name immutable',
      { ...old, name: 'other' },
      old,
      ['metadata.name: Invalid value: "other": field is immutable'],
    ],
    [
      'namespace immutable',
      { ...old, namespace: 'x' },
      old,
      ['metadata.namespace: Invalid value: "x": field is immutable'],
    ],
    ['uid immutable', { ...old, uid: 'u2' }, old, ['metadata.uid: Invalid value: "u2": field is immutable']],
    [
      'uid cannot be cleared',
      { ...old, uid: undefined },
      old,
      ['metadata.uid: Invalid value: "": field is immutable'],
    ],
    [
      'creationTimestamp immutable',
      { ...old, creationTimestamp: '2024-05-01T10:00:01Z' },
      old,
      ['metadata.creationTimestamp: Invalid value: "2024-05-01T10:00:01Z": field is immutable'],
    ],
    [
      'deletionTimestamp cannot be set by update',
      { ...old, deletionTimestamp: '2024-05-02T00:00:00Z' },
      old,
      ['metadata.deletionTimestamp: Invalid value: "2024-05-02T00:00:00Z": field is immutable'],
    ],
    [
      'generation cannot go down',
      { ...old, generation: 1 },
      old,
      ['metadata.generation: Invalid value: 1: must not be decremented'],
    ],
    [
      'no new finalizers while deleting',
      { ...old, deletionTimestamp: 'x', finalizers: ['a', 'z', 'b'] },
      { ...old, deletionTimestamp: 'x', finalizers: ['a'] },
      [
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b", "z"}',
      ],
    ],
    [
      'finalizers may be removed while deleting',
      { ...old, deletionTimestamp: 'x', finalizers: [] },
      { ...old, deletionTimestamp: 'x', finalizers: ['a'] },
      [],
    ],
  ];
  for (const [name, now, before, want] of cases) {
    it(name, () => assert.deepEqual(validateObjectMetaUpdate(now, before).map(fieldErrorString), want));
  }
});
