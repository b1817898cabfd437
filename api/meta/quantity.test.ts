// One file because one type: parse, format, arithmetic and comparison of Quantity, table-driven after Kubernetes' quantity_test.go.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import {
  Quantity,
  QuantityParseError,
  compareQuantities,
  formatBytes,
  formatMillicores,
  formatQuantity,
  parseQuantity,
} from './quantity.js';
import type { QuantityErrorReason, QuantityFormat } from './quantity.js';

const MAX = '9223372036854775807';

describe('parseQuantity: exact values and formats (Kubernetes TestQuantityParse)', () => {
  // [input, exact value, format]
  const cases: [string, string, QuantityFormat][] = [
    ['0', '0', 'DecimalSI'],
    ['0n', '0', 'DecimalSI'],
    ['0u', '0', 'DecimalSI'],
    ['0m', '0', 'DecimalSI'],
    ['0Ki', '0', 'BinarySI'],
    ['0k', '0', 'DecimalSI'],
    ['0Mi', '0', 'BinarySI'],
    ['0M', '0', 'DecimalSI'],
    ['0Gi', '0', 'BinarySI'],
    ['0G', '0', 'DecimalSI'],
    ['0Ti', '0', 'BinarySI'],
    ['0T', '0', 'DecimalSI'],
    ['1', '1', 'DecimalSI'],
    ['1Ki', '1024', 'BinarySI'],
    ['8Ki', '8192', 'BinarySI'],
    ['7Mi', '7340032', 'BinarySI'],
    ['6Gi', '6442450944', 'BinarySI'],
    ['5Ti', '5497558138880', 'BinarySI'],
    ['4Pi', '4503599627370496', 'BinarySI'],
    ['3Ei', '3458764513820540928', 'BinarySI'],
    ['10Ti', '10995116277760', 'BinarySI'],
    ['100Ti', '109951162777600', 'BinarySI'],
    ['5n', '0.000000005', 'DecimalSI'],
    ['4u', '0.000004', 'DecimalSI'],
    ['3m', '0.003', 'DecimalSI'],
    ['9', '9', 'DecimalSI'],
    ['8k', '8000', 'DecimalSI'],
    ['50k', '50000', 'DecimalSI'],
    ['7M', '7000000', 'DecimalSI'],
    ['6G', '6000000000', 'DecimalSI'],
    ['5T', '5000000000000', 'DecimalSI'],
    ['40T', '40000000000000', 'DecimalSI'],
    ['300T', '300000000000000', 'DecimalSI'],
    ['2P', '2000000000000000', 'DecimalSI'],
    ['1E', '1000000000000000000', 'DecimalSI'],
    ['1E-3', '0.001', 'DecimalExponent'],
    ['1e3', '1000', 'DecimalExponent'],
    ['1E6', '1000000', 'DecimalExponent'],
    ['1e9', '1000000000', 'DecimalExponent'],
    ['1E12', '1000000000000', 'DecimalExponent'],
    ['1e15', '1000000000000000', 'DecimalExponent'],
    ['1E18', '1000000000000000000', 'DecimalExponent'],
    ['1e14', '100000000000000', 'DecimalExponent'],
    ['1e13', '10000000000000', 'DecimalExponent'],
    ['100.035k', '100035', 'DecimalSI'],
    ['0.001', '0.001', 'DecimalSI'],
    ['0.0005k', '0.5', 'DecimalSI'],
    ['0.005', '0.005', 'DecimalSI'],
    ['0.05', '0.05', 'DecimalSI'],
    ['0.5', '0.5', 'DecimalSI'],
    ['0.00050k', '0.5', 'DecimalSI'],
    ['0.00500', '0.005', 'DecimalSI'],
    ['0.05000', '0.05', 'DecimalSI'],
    ['0.50000', '0.5', 'DecimalSI'],
    ['0.5e0', '0.5', 'DecimalExponent'],
    ['0.5e-1', '0.05', 'DecimalExponent'],
    ['0.5e-2', '0.005', 'DecimalExponent'],
    ['10.035M', '10035000', 'DecimalSI'],
    ['1.2e3', '1200', 'DecimalExponent'],
    ['1.3E+6', '1300000', 'DecimalExponent'],
    ['1.40e9', '1400000000', 'DecimalExponent'],
    ['1.53E12', '1530000000000', 'DecimalExponent'],
    ['1.6e15', '1600000000000000', 'DecimalExponent'],
    ['1.7E18', '1700000000000000000', 'DecimalExponent'],
    ['9.01', '9.01', 'DecimalSI'],
    ['8.1k', '8100', 'DecimalSI'],
    ['7.123456M', '7123456', 'DecimalSI'],
    ['6.987654321G', '6987654321', 'DecimalSI'],
    ['5.444T', '5444000000000', 'DecimalSI'],
    ['40.1T', '40100000000000', 'DecimalSI'],
    ['300.2T', '300200000000000', 'DecimalSI'],
    ['2.5P', '2500000000000000', 'DecimalSI'],
    ['1.01E', '1010000000000000000', 'DecimalSI'],
    // Things that saturate or round: finer than 1n rounds up; BinarySI caps at 2^63-1.
    ['3.001n', '0.000000004', 'DecimalSI'],
    ['1.1E-9', '0.000000002', 'DecimalExponent'],
    ['0.0000000001', '0.000000001', 'DecimalSI'],
    ['0.0000000005', '0.000000001', 'DecimalSI'],
    ['0.00000000050', '0.000000001', 'DecimalSI'],
    ['0.5e-9', '0.000000001', 'DecimalExponent'],
    ['0.9n', '0.000000001', 'DecimalSI'],
    ['0.00000012345', '0.000000124', 'DecimalSI'],
    ['0.00000012354', '0.000000124', 'DecimalSI'],
    ['1e-99999999', '0.000000001', 'DecimalExponent'],
    ['9Ei', MAX, 'BinarySI'],
    ['9223372036854775807Ki', MAX, 'BinarySI'],
    ['8Ei', MAX, 'BinarySI'],
    ['7.99Ei', '9211842821808707338.24', 'BinarySI'],
    ['12E', '12000000000000000000', 'DecimalSI'],
    // Fractional binary quantities are fine.
    ['100.035Ki', '102435.84', 'BinarySI'],
    ['0.5Mi', '524288', 'BinarySI'],
    ['0.05Gi', '53687091.2', 'BinarySI'],
    ['0.025Ti', '27487790694.4', 'BinarySI'],
    ['1.5Gi', '1610612736', 'BinarySI'],
    // Things written by trolls.
    ['0.000000000001Ki', '0.000000002', 'DecimalSI'],
    ['.001', '0.001', 'DecimalSI'],
    ['.0001k', '0.1', 'DecimalSI'],
    ['1.', '1', 'DecimalSI'],
    ['1.G', '1000000000', 'DecimalSI'],
    ['.', '0', 'DecimalSI'],
    ['-.', '0', 'DecimalSI'],
    ['+', '0', 'DecimalSI'],
    ['00', '0', 'DecimalSI'],
    ['007', '7', 'DecimalSI'],
    ['0e99999', '0', 'DecimalExponent'],
    ['1e+3', '1000', 'DecimalExponent'],
    ['1e003', '1000', 'DecimalExponent'],
  ];
  for (const [input, value, format] of cases) {
    it(`${input} = ${value} (${format})`, () => {
      const q = parseQuantity(input);
      assert.equal(q.toDecimalString(), value);
      assert.equal(q.format, format);
    });
    if (value !== '0') {
      it(`-${input} = -${value}, +${input} = ${value}`, () => {
        const neg = parseQuantity(`-${input}`);
        assert.equal(neg.toDecimalString(), `-${value}`);
        assert.equal(neg.format, format);
        assert.equal(neg.sign, -1);
        const pos = parseQuantity(`+${input}`);
        assert.equal(pos.toDecimalString(), value);
        assert.equal(pos.format, format);
      });
    }
  }
});

describe('parseQuantity: rejects malformed input', () => {
  const cases: [string, QuantityErrorReason][] = [
    ['', 'FormatWrong'],
    ['1.1.M', 'FormatWrong'],
    ['1+1.0M', 'FormatWrong'],
    ['0.1am', 'FormatWrong'],
    ['aoeu', 'FormatWrong'],
    [' 1', 'FormatWrong'],
    ['1 ', 'FormatWrong'],
    ['5KB', 'FormatWrong'],
    ['1,5', 'FormatWrong'],
    ['0x10', 'FormatWrong'],
    ['--1', 'Suffix'],
    ['1Gi ', 'FormatWrong'],
    ['0.1mi', 'Suffix'],
    ['.5i', 'Suffix'],
    ['1i', 'Suffix'],
    ['-3.01i', 'Suffix'],
    ['-3.01e-', 'Suffix'],
    ['1e', 'Suffix'],
    ['1kk', 'Suffix'],
    ['1K', 'Suffix'],
    ['1gi', 'FormatWrong'],
    ['1Mi2', 'Suffix'],
    ['1e99999999999999999999', 'Suffix'],
    ['1e1000', 'OutOfRange'],
    ['1e99999999999', 'OutOfRange'],
    ['1000e998', 'OutOfRange'],
  ];
  for (const [input, reason] of cases) {
    it(`${JSON.stringify(input)} (${reason})`, () => {
      assert.throws(
        () => parseQuantity(input),
        (e: unknown) => e instanceof QuantityParseError && e.reason === reason && e.input === input,
      );
    });
  }
  it('uses Kubernetes wording', () => {
    assert.throws(() => parseQuantity('abc'), {
      message: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    });
    assert.throws(() => parseQuantity('1i'), { message: "unable to parse quantity's suffix" });
  });
  it('accepts the largest allowed magnitude', () => {
    assert.equal(parseQuantity('1e999').toString(), '1e999');
  });
});

describe('formatQuantity: canonical form', () => {
  // [input, canonical] — includes Kubernetes' TestQuantityParseEmit and TestParseQuantity.
  const cases: [string, string][] = [
    ['0', '0'],
    ['0Ki', '0'],
    ['0.0', '0'],
    ['1Ki', '1Ki'],
    ['1Mi', '1Mi'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1000M', '1G'],
    ['.001Ki', '1024m'],
    ['.000001Ki', '1024u'],
    ['.000000001Ki', '1024n'],
    ['.000000000001Ki', '2n'],
    ['1.5Gi', '1536Mi'],
    ['0.1', '100m'],
    ['0.5', '500m'],
    ['1.5', '1500m'],
    ['128974848', '128974848'],
    ['129e6', '129e6'],
    ['123Mi', '123Mi'],
    ['1k', '1k'],
    ['2E', '2E'],
    ['1000m', '1'],
    ['1000000000n', '1'],
    ['1080000000n', '1080m'],
    ['1.08', '1080m'],
    ['0.001T', '1G'],
    ['1000u', '1m'],
    ['100.035k', '100035'],
    ['100.035Ki', '102435840m'],
    ['0.5Mi', '512Ki'],
    ['300Mi', '300Mi'],
    ['307200Ki', '300Mi'],
    ['1025024Mi', '1001Gi'],
    ['1024Gi', '1Ti'],
    ['1536Ki', '1536Ki'],
    ['1025', '1025'],
    ['1.3E+6', '1300e3'],
    ['1E3', '1e3'],
    ['.001e12', '1e9'],
    ['0.001e0', '1e-3'],
    ['1000e-12', '1e-9'],
    ['0.5e-2', '5e-3'],
    ['1.01E', '1010P'],
    ['3Ei', '3Ei'],
    ['9Ei', MAX],
    ['+1', '1'],
    ['007', '7'],
    ['-100m', '-100m'],
    ['-1.5Gi', '-1536Mi'],
    ['-0.5Mi', '-512Ki'],
    ['-1Ki', '-1Ki'],
    ['-1023Ki', '-1023Ki'],
    ['999999999999999999.1', '999999999999999999100m'],
    ['-999999999999999999.1', '-999999999999999999100m'],
    ['9999999999999999999', '9999999999999999999'],
    ['9999999999999999999000m', '9999999999999999999'],
    ['1000000000000000000', '1E'],
    ['-1000000000000000000.0', '-1E'],
    ['1.0000000000000000001E', '1000000000000000000100m'],
    ['1.000000000000000001E', '1000000000000000001'],
    ['10000000000000000000', '10E'],
    ['10000000000000000000000m', '10E'],
    ['10.0000000000000000001E', '10000000000000000000100m'],
    ['9223372036854775808.1', '9223372036854775808100m'],
    ['-9223372036854775809000m', '-9223372036854775809'],
    // Kubernetes would print these without a suffix (a bug); we keep the E.
    ['1000E', '1000E'],
    ['1e21', '1e21'],
  ];
  for (const [input, canonical] of cases) {
    it(`${input} → ${canonical}`, () => {
      const q = parseQuantity(input);
      assert.equal(formatQuantity(q), canonical);
      // The canonical form is stable and means the same value.
      const again = parseQuantity(canonical);
      assert.equal(formatQuantity(again), canonical);
      assert.ok(again.equals(q));
    });
  }
});

describe('toString: what Kubernetes serializes', () => {
  // Kubernetes keeps the input text when it is already canonical, even with cosmetic
  // differences; otherwise it prints the canonical form.
  const cases: [string, string][] = [
    ['100m', '100m'],
    ['1Gi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1.5Gi', '1536Mi'],
    ['0.5', '500m'],
    ['1024Mi', '1Gi'],
    ['1000', '1k'],
    ['+1', '+1'],
    ['01', '01'],
    ['1E3', '1E3'],
    ['1e+3', '1e+3'],
    ['1.', '1.'],
    ['1.G', '1.G'],
    ['100.035k', '100.035k'],
    ['0', '0'],
    ['-0', '0'],
    ['8Ki', '8Ki'],
    ['1024Ki', '1Mi'],
    ['1025Ki', '1025Ki'],
    ['-1Ki', '-1Ki'],
    ['3Ei', '3Ei'],
    ['999999999999999999', '999999999999999999'],
    ['-999999999999999999', '-999999999999999999'],
  ];
  for (const [input, serialized] of cases) {
    it(`${input} → ${serialized}`, () => {
      const q = parseQuantity(input);
      assert.equal(q.toString(), serialized);
      assert.equal(JSON.stringify(q), JSON.stringify(serialized));
      assert.equal(`${q}`, serialized);
    });
  }
  it('arithmetic results print canonically', () => {
    assert.equal(parseQuantity('+1').add(Quantity.zero()).toString(), '1');
    assert.equal(parseQuantity('1E3').withFormat('DecimalExponent').toString(), '1e3');
  });
});

describe('value and milliValue round up away from zero', () => {
  // [input, value(), milliValue()]
  const cases: [string, bigint, bigint][] = [
    ['0', 0n, 0n],
    ['1', 1n, 1000n],
    ['100m', 1n, 100n],
    ['0.5', 1n, 500n],
    ['1.5', 2n, 1500n],
    ['2', 2n, 2000n],
    ['250m', 1n, 250n],
    ['1m', 1n, 1n],
    ['0.1m', 1n, 1n],
    ['1n', 1n, 1n],
    ['1001u', 1n, 2n],
    ['1Gi', 1073741824n, 1073741824000n],
    ['1.5Gi', 1610612736n, 1610612736000n],
    ['123Mi', 128974848n, 128974848000n],
    ['129e6', 129000000n, 129000000000n],
    ['128974848', 128974848n, 128974848000n],
    ['1k', 1000n, 1000000n],
    ['2E', 2000000000000000000n, 2000000000000000000000n],
    ['100.035Ki', 102436n, 102435840n],
    ['-100m', -1n, -100n],
    ['-1.5', -2n, -1500n],
    ['-1001u', -1n, -2n],
    ['9Ei', 9223372036854775807n, 9223372036854775807000n],
    ['12E', 12000000000000000000n, 12000000000000000000000n],
  ];
  for (const [input, value, milli] of cases) {
    it(`${input}: ${value} / ${milli}m`, () => {
      const q = parseQuantity(input);
      assert.equal(q.value(), value);
      assert.equal(q.milliValue(), milli);
    });
  }
  // Kubernetes' TestScaledValue: 1 at one scale, read at another.
  const scaled: [number, number, bigint][] = [
    [-9, -9, 1n],
    [-9, -6, 1n],
    [-9, -3, 1n],
    [-9, 0, 1n],
    [-6, -9, 1000n],
    [-6, -6, 1n],
    [-6, -3, 1n],
    [-6, 0, 1n],
    [-3, -9, 1000000n],
    [-3, -6, 1000n],
    [-3, -3, 1n],
    [-3, 0, 1n],
    [0, -9, 1000000000n],
    [0, -6, 1000000n],
    [0, -3, 1000n],
    [0, 0, 1n],
    [2, -2, 10000n],
  ];
  for (const [from, to, want] of scaled) {
    it(`1e${from} read at scale ${to} = ${want}`, () => {
      assert.equal(Quantity.fromScaled(1, from).scaledValue(to), want);
    });
  }
  it('refuses absurd scales', () => {
    assert.throws(() => parseQuantity('1').scaledValue(-5000), RangeError);
    assert.throws(() => parseQuantity('1').scaledValue(0.5), RangeError);
    assert.equal(parseQuantity('1').scaledValue(5000), 1n);
  });
});

describe('comparison', () => {
  const cases: [string, string, -1 | 0 | 1][] = [
    ['0', '0', 0],
    ['100m', '50m', 1],
    ['50m', '100m', -1],
    ['10000T', '100Gi', 1],
    ['1Gi', '1024Mi', 0],
    ['1Gi', '1073741824', 0],
    ['1G', '1Gi', -1],
    ['0.1', '100m', 0],
    ['1e3', '1k', 0],
    ['9.01', '9.0100', 0],
    ['0.9', '901m', -1],
    ['-1', '0', -1],
    ['-1Ki', '-1k', -1],
    ['0n', '0Ei', 0],
    ['1n', '0', 1],
    ['12E', '9Ei', 1],
    ['9223372036854775807', '9Ei', 0],
    ['1000000000000000000000m', '1E', 0],
  ];
  for (const [a, b, want] of cases) {
    it(`${a} vs ${b}: ${want}`, () => {
      const x = parseQuantity(a);
      const y = parseQuantity(b);
      assert.equal(x.cmp(y), want);
      assert.equal(y.cmp(x), -want || 0);
      assert.equal(compareQuantities(x, y), want);
      assert.equal(x.equals(y), want === 0);
    });
  }
  it('sorts', () => {
    const qs = ['1Gi', '100m', '2', '1k', '-1', '0.5Ki'].map(parseQuantity).sort(compareQuantities);
    assert.deepEqual(
      qs.map((q) => q.toString()),
      ['-1', '100m', '2', '512', '1k', '1Gi'],
    );
  });
});

describe('arithmetic', () => {
  // [a, op, b, result toString, result format]
  const cases: [string, 'add' | 'sub', string, string, QuantityFormat][] = [
    ['10', 'add', '1e1', '20', 'DecimalSI'],
    ['10', 'add', '1Ki', '1034', 'DecimalSI'],
    ['1Ki', 'add', '10', '1034', 'BinarySI'],
    ['1Gi', 'add', '512Mi', '1536Mi', 'BinarySI'],
    ['100m', 'add', '250m', '350m', 'DecimalSI'],
    ['0', 'add', '50', '50', 'DecimalSI'],
    ['0', 'add', '1Gi', '1Gi', 'BinarySI'],
    ['0Ki', 'add', '100m', '100m', 'DecimalSI'],
    ['100m', 'add', '0', '100m', 'DecimalSI'],
    ['1Gi', 'add', '0', '1Gi', 'BinarySI'],
    ['10', 'sub', '1e1', '0', 'DecimalSI'],
    ['10', 'sub', '1Ki', '-1014', 'DecimalSI'],
    ['2Gi', 'sub', '1Gi', '1Gi', 'BinarySI'],
    ['0', 'sub', '50', '-50', 'DecimalSI'],
    ['0', 'sub', '1Gi', '-1Gi', 'BinarySI'],
    ['50', 'sub', '0', '50', 'DecimalSI'],
    ['1', 'sub', '1n', '999999999n', 'DecimalSI'],
    ['4', 'sub', '3500m', '500m', 'DecimalSI'],
  ];
  for (const [a, op, b, want, format] of cases) {
    it(`${a} ${op} ${b} = ${want}`, () => {
      const r = parseQuantity(a)[op](parseQuantity(b));
      assert.equal(r.toString(), want);
      assert.equal(r.format, format);
    });
  }
  const muls: [string, bigint | number, string][] = [
    ['10', 10, '100'],
    ['10', 1, '10'],
    ['10', 0, '0'],
    ['10', -10, '-100'],
    ['-50', -50, '2500'],
    ['100m', 3, '300m'],
    ['250m', 4, '1'],
    ['1Gi', 3n, '3Gi'],
    [MAX, 2, '18446744073709551614'],
  ];
  for (const [a, n, want] of muls) {
    it(`${a} * ${n} = ${want}`, () => assert.equal(parseQuantity(a).mul(n).toString(), want));
  }
  it('negates, keeping the format', () => {
    assert.equal(parseQuantity('9.01').neg().toString(), '-9010m');
    assert.equal(parseQuantity('10Ki').neg().neg().toString(), '10Ki');
    assert.equal(parseQuantity('0').neg().toString(), '0');
  });
  it('adds and subtracts exactly across scales', () => {
    let q = Quantity.zero();
    const parts = ['1n', '3Ei', '0.1', '123Mi', '7e12', '999u'].map(parseQuantity);
    for (const p of parts) q = q.add(p);
    for (const p of parts) q = q.sub(p);
    assert.ok(q.isZero());
    assert.equal(q.toString(), '0');
  });
  it('does not mutate its operands', () => {
    const a = parseQuantity('1Gi');
    a.add(parseQuantity('1Gi'));
    a.mul(5);
    a.neg();
    assert.equal(a.toString(), '1Gi');
  });
  it('rejects unsafe number multipliers', () => {
    assert.throws(() => parseQuantity('1').mul(1.5), RangeError);
    assert.throws(() => parseQuantity('1').mul(2 ** 60), RangeError);
  });
});

describe('constructors', () => {
  // [quantity, toString]
  const cases: [string, Quantity, string][] = [
    ['fromMilli 1', Quantity.fromMilli(1), '1m'],
    ['fromMilli 1000', Quantity.fromMilli(1000), '1'],
    ['fromMilli 1234000', Quantity.fromMilli(1234000), '1234'],
    ['fromMilli 1024 BinarySI', Quantity.fromMilli(1024, 'BinarySI'), '1024m'],
    ['fromMilli 1e6 DecimalExponent', Quantity.fromMilli(1000000, 'DecimalExponent'), '1e3'],
    ['fromMilli 1Mi BinarySI', Quantity.fromMilli(1024 * 1024, 'BinarySI'), '1048576m'],
    ['fromValue 1', Quantity.fromValue(1), '1'],
    ['fromValue 1000', Quantity.fromValue(1000), '1k'],
    ['fromValue 1234000', Quantity.fromValue(1234000), '1234k'],
    ['fromValue 1024 BinarySI', Quantity.fromValue(1024, 'BinarySI'), '1Ki'],
    ['fromValue 1e6 DecimalExponent', Quantity.fromValue(1000000, 'DecimalExponent'), '1e6'],
    ['fromValue 1Mi BinarySI', Quantity.fromValue(1024 * 1024, 'BinarySI'), '1Mi'],
    ['fromValue 5 BinarySI', Quantity.fromValue(5, 'BinarySI'), '5'],
    ['fromValue 1025 BinarySI', Quantity.fromValue(1025, 'BinarySI'), '1025'],
    ['fromScaled 1n', Quantity.fromScaled(1, -9), '1n'],
    ['fromScaled 1000n', Quantity.fromScaled(1000, -9), '1u'],
    ['fromScaled 1u', Quantity.fromScaled(1, -6), '1u'],
    ['fromScaled 1000u', Quantity.fromScaled(1000, -6), '1m'],
    ['fromScaled 1m', Quantity.fromScaled(1, -3), '1m'],
    ['fromScaled 1000m', Quantity.fromScaled(1000, -3), '1'],
    ['fromScaled 1', Quantity.fromScaled(1, 0), '1'],
    ['fromScaled 0n', Quantity.fromScaled(0, -9), '0'],
    ['fromScaled 3k', Quantity.fromScaled(3, 3), '3k'],
    ['fromScaled 1234567M', Quantity.fromScaled(1234567, 6), '1234567M'],
    ['zero', Quantity.zero('BinarySI'), '0'],
  ];
  for (const [name, q, want] of cases) {
    it(`${name} → ${want}`, () => {
      assert.equal(q.toString(), want);
      assert.ok(parseQuantity(want).equals(q));
    });
  }
  it('prints values beyond 2^63 (parsing would cap them)', () => {
    assert.equal(Quantity.fromValue(2n ** 70n, 'BinarySI').toString(), '1024Ei');
    assert.equal(parseQuantity('1024Ei').toString(), '9223372036854775807');
  });
  it('rejects bad arguments', () => {
    assert.throws(() => Quantity.fromValue(0.5), RangeError);
    assert.throws(() => Quantity.fromMilli(Number.MAX_SAFE_INTEGER + 1), RangeError);
    assert.throws(() => Quantity.fromScaled(1, -10), RangeError);
    assert.throws(() => Quantity.fromScaled(1, 1.5), RangeError);
  });
});

describe('fromJSON', () => {
  const cases: [unknown, string][] = [
    ['100m', '100m'],
    [' 1Gi\n', '1Gi'],
    [0.5, '500m'],
    [2, '2'],
    [1e21, '1e+21'],
    [1e-7, '100e-9'],
    [-3, '-3'],
  ];
  for (const [input, want] of cases) {
    it(`${JSON.stringify(input)} → ${want}`, () => assert.equal(Quantity.fromJSON(input).toString(), want));
  }
  const bad: [unknown, string][] = [
    [null, 'TypeError'],
    [{}, 'TypeError'],
    [true, 'TypeError'],
    [Number.NaN, 'QuantityParseError'],
    [Number.POSITIVE_INFINITY, 'QuantityParseError'],
    ['1 Gi', 'QuantityParseError'],
  ];
  for (const [input, kind] of bad) {
    it(`rejects ${String(input)}`, () => assert.throws(() => Quantity.fromJSON(input), { name: kind }));
  }
});

describe('node capacity formatting', () => {
  const bytes: [bigint | number, string][] = [
    [0, '0'],
    [1000, '1k'],
    [1023, '1023'],
    [1024, '1Ki'],
    [1536, '1536'],
    [16777478144, '16384256Ki'],
    [17179869184, '16Gi'],
    [8330301440, '8135060Ki'],
    [536870912000n, '500Gi'],
    [16776450049, '16776450049'],
  ];
  for (const [n, want] of bytes) {
    it(`${n} bytes → ${want}`, () => {
      assert.equal(formatBytes(n), want);
      assert.equal(parseQuantity(want).value(), BigInt(n));
    });
  }
  const cpu: [bigint | number, string][] = [
    [0, '0'],
    [2000, '2'],
    [1500, '1500m'],
    [250, '250m'],
    [1, '1m'],
    [64000n, '64'],
    [128000, '128'],
  ];
  for (const [m, want] of cpu) {
    it(`${m} millicores → ${want}`, () => {
      assert.equal(formatMillicores(m), want);
      assert.equal(parseQuantity(want).milliValue(), BigInt(m));
    });
  }
});
