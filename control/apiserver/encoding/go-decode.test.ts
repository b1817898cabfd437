import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base64Error, goNumberLiteral, timeParseError } from './go-decode.js';

// Expected texts are Go's (time.Parse and base64.StdEncoding.DecodeString of Go's
// standard library, checked against a Go toolchain; where Go 1.20 changed the wording,
// the current one: the element that failed is quoted from where it starts, zone offsets
// are range-checked).

describe('timeParseError (metav1.Time: RFC 3339)', () => {
  const layout = '"2006-01-02T15:04:05Z07:00"';
  const cases: [string, string | undefined][] = [
    ['2025-01-01T00:00:00Z', undefined],
    ['2025-01-01T00:00:00.123Z', undefined],
    ['2025-01-01T00:00:00,5Z', undefined],
    ['2025-01-01T00:00:00.1234567890123Z', undefined],
    ['2025-01-01T00:00:00+01:00', undefined],
    ['2025-01-01T00:00:00-00:00', undefined],
    ['2025-01-01T1:00:00Z', undefined],
    ['2024-02-29T00:00:00Z', undefined],
    ['2000-02-29T00:00:00Z', undefined],
    ['0000-01-01T00:00:00Z', undefined],
    ['2025-01-01T23:59:59+24:60', undefined],
    ['', `parsing time "" as ${layout}: cannot parse "" as "2006"`],
    ['yesterday', `parsing time "yesterday" as ${layout}: cannot parse "yesterday" as "2006"`],
    [
      '20x5-01-01T00:00:00Z',
      `parsing time "20x5-01-01T00:00:00Z" as ${layout}: cannot parse "20x5-01-01T00:00:00Z" as "2006"`,
    ],
    ['2025/01/01', `parsing time "2025/01/01" as ${layout}: cannot parse "/01/01" as "-"`],
    ['2025-01-01', `parsing time "2025-01-01" as ${layout}: cannot parse "" as "T"`],
    [
      '2025-1-01T00:00:00Z',
      `parsing time "2025-1-01T00:00:00Z" as ${layout}: cannot parse "1-01T00:00:00Z" as "01"`,
    ],
    [
      '2025-01-01 00:00:00Z',
      `parsing time "2025-01-01 00:00:00Z" as ${layout}: cannot parse " 00:00:00Z" as "T"`,
    ],
    [
      '2025-01-01t00:00:00Z',
      `parsing time "2025-01-01t00:00:00Z" as ${layout}: cannot parse "t00:00:00Z" as "T"`,
    ],
    ['2025-01-01T00:00', `parsing time "2025-01-01T00:00" as ${layout}: cannot parse "" as ":"`],
    ['2025-01-01T00:00:00', `parsing time "2025-01-01T00:00:00" as ${layout}: cannot parse "" as "Z07:00"`],
    [
      '2025-01-01T00:00:00z',
      `parsing time "2025-01-01T00:00:00z" as ${layout}: cannot parse "z" as "Z07:00"`,
    ],
    [
      '2025-01-01T00:00:00.Z',
      `parsing time "2025-01-01T00:00:00.Z" as ${layout}: cannot parse ".Z" as "Z07:00"`,
    ],
    [
      '2025-01-01T00:00:00+0100',
      `parsing time "2025-01-01T00:00:00+0100" as ${layout}: cannot parse "+0100" as "Z07:00"`,
    ],
    [
      '2025-01-01T00:00:00x01:00',
      `parsing time "2025-01-01T00:00:00x01:00" as ${layout}: cannot parse "x01:00" as "Z07:00"`,
    ],
    ['2025-01-01T00:00:00Zx', 'parsing time "2025-01-01T00:00:00Zx": extra text: "x"'],
    ['2025-13-01T00:00:00Z', 'parsing time "2025-13-01T00:00:00Z": month out of range'],
    ['2025-00-01T00:00:00Z', 'parsing time "2025-00-01T00:00:00Z": month out of range'],
    ['2025-02-29T00:00:00Z', 'parsing time "2025-02-29T00:00:00Z": day out of range'],
    ['1900-02-29T00:00:00Z', 'parsing time "1900-02-29T00:00:00Z": day out of range'],
    ['2025-04-31T00:00:00Z', 'parsing time "2025-04-31T00:00:00Z": day out of range'],
    ['2025-01-00T00:00:00Z', 'parsing time "2025-01-00T00:00:00Z": day out of range'],
    ['2025-01-01T24:00:00Z', 'parsing time "2025-01-01T24:00:00Z": hour out of range'],
    ['2025-01-01T23:60:00Z', 'parsing time "2025-01-01T23:60:00Z": minute out of range'],
    ['2025-01-01T23:59:60Z', 'parsing time "2025-01-01T23:59:60Z": second out of range'],
    [
      '2025-01-01T00:00:00+25:00',
      'parsing time "2025-01-01T00:00:00+25:00": time zone offset hour out of range',
    ],
    [
      '2025-01-01T00:00:00+01:61',
      'parsing time "2025-01-01T00:00:00+01:61": time zone offset minute out of range',
    ],
    ['"q"\\', `parsing time "\\"q\\"\\\\" as ${layout}: cannot parse "\\"q\\"\\\\" as "2006"`],
    ['2025-01-01T00:00:00Zé', 'parsing time "2025-01-01T00:00:00Z\\xc3\\xa9": extra text: "\\xc3\\xa9"'],
  ];
  for (const [value, want] of cases) {
    it(JSON.stringify(value), () => assert.equal(timeParseError(value, false), want));
  }
});

describe('timeParseError (metav1.MicroTime: six fractional digits)', () => {
  const layout = '"2006-01-02T15:04:05.000000Z07:00"';
  const cases: [string, string | undefined][] = [
    ['2025-01-01T00:00:00.000000Z', undefined],
    ['2025-01-01T00:00:00,123456+05:30', undefined],
    ['2025-01-01T00:00:00.+12345Z', undefined],
    [
      '2025-01-01T00:00:00Z',
      `parsing time "2025-01-01T00:00:00Z" as ${layout}: cannot parse "Z" as ".000000"`,
    ],
    [
      '2025-01-01T00:00:00.123Z',
      `parsing time "2025-01-01T00:00:00.123Z" as ${layout}: cannot parse ".123Z" as ".000000"`,
    ],
    [
      '2025-01-01T00:00:00.12345Z',
      `parsing time "2025-01-01T00:00:00.12345Z" as ${layout}: cannot parse ".12345Z" as ".000000"`,
    ],
    [
      '2025-01-01T00:00:00.1234567Z',
      `parsing time "2025-01-01T00:00:00.1234567Z" as ${layout}: cannot parse "7Z" as "Z07:00"`,
    ],
    [
      '2025-01-01T00:00:00.-12345Z',
      'parsing time "2025-01-01T00:00:00.-12345Z": fractional second out of range',
    ],
  ];
  for (const [value, want] of cases) {
    it(JSON.stringify(value), () => assert.equal(timeParseError(value, true), want));
  }
});

describe('base64Error', () => {
  const cases: [string, number | undefined][] = [
    ['', undefined],
    ['aGk=', undefined],
    ['aGkh', undefined],
    ['aG==', undefined],
    ['aGVsbG8gd29ybGQ=', undefined],
    ['aGk=\n', undefined],
    ['aG\nk=', undefined],
    ['aG\r\n==', undefined],
    ['aG=\n=', undefined],
    ['aGkhaGkh\n', undefined],
    ['\n', undefined],
    ['aGk', 0],
    ['aG', 0],
    ['a', 0],
    ['aGVsbG8gd29ybGQ', 12],
    ['aGk==', 4],
    ['aGk=x', 4],
    ['aG=', 3],
    ['aG=x', 2],
    ['a===', 1],
    ['====', 0],
    ['aGk!', 3],
    ['aGVsbG8@d29ybGQ=', 7],
    ['ab=c', 2],
    ['aGk=aGk=', 4],
    ['é', 0],
    ['hunter2', 4],
  ];
  for (const [value, at] of cases) {
    it(JSON.stringify(value), () =>
      assert.equal(
        base64Error(value),
        at === undefined ? undefined : `illegal base64 data at input byte ${at}`,
      ),
    );
  }
});

describe('goNumberLiteral', () => {
  it('prints integers in full and other numbers as JavaScript does', () => {
    assert.equal(goNumberLiteral(99999999999), '99999999999');
    assert.equal(goNumberLiteral(1e19), '10000000000000000000');
    assert.equal(goNumberLiteral(-1.5), '-1.5');
    assert.equal(goNumberLiteral(1e21), '1e+21');
  });
});
