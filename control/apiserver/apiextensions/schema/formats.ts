/**
 * The string formats a custom resource's schema may name, and their checks: the format
 * registry kube-openapi's pkg/validation/strfmt gives apiextensions-apiserver
 * (default.go, date.go, time.go, duration.go, kubernetes-extensions.go), restricted to the
 * names apiextensions-apiserver's pkg/apiserver/validation/formats.go supports. A format
 * not in this set is not an error: Kubernetes strips it (the CRD gets a warning) and the
 * value is not checked. Names are compared without `-` (`date-time` is `datetime`), as
 * go-openapi normalises them.
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../../api/meta/validation.js';

const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGBCOLOR =
  /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const CREDITCARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const EMAIL_ADDR = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const SCALA_DURATION = /(\d+)\s*([A-Za-zµ]+)/g;
const DURATION_UNITS: readonly (readonly string[])[] = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

function validDate(y: string, m: string, d: string): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

function isDate(s: string): boolean {
  const m = DATE.exec(s);
  return m !== null && validDate(m[1]!, m[2]!, m[3]!);
}

function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m || !validDate(m[1]!, m[2]!, m[3]!)) return false;
  const [h, min, sec] = [Number(m[4]), Number(m[5]), Number(m[6])];
  return h < 24 && min < 60 && sec < 60;
}

/** strfmt.ParseDuration: Go's time.ParseDuration, else `<n> <unit>` pairs (Scala style). */
function isDuration(s: string): boolean {
  if (GO_DURATION.test(s) || s === '0') return true;
  for (const match of s.matchAll(SCALA_DURATION)) {
    const unit = match[2]!.toLowerCase().trim();
    for (const variants of DURATION_UNITS) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

/** govalidator.IsRequestURI (net/url.ParseRequestURI): an absolute URI or an absolute path. */
function isRequestURI(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s);
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)) return false;
  try {
    new URL(s);
    return !/\s/.test(s);
  } catch {
    return false;
  }
}

/** net/mail.ParseAddress, for the common shapes: `a@b` or `Name <a@b>`. */
function isEmail(s: string): boolean {
  const angle = /^[^<>]*<([^<>]+)>$/.exec(s.trim());
  return EMAIL_ADDR.test(angle ? angle[1]! : s.trim());
}

function isHostname(s: string): boolean {
  return HOSTNAME.test(s) && s.length <= 255 && s.split('.').every((p) => p.length <= 63);
}

/** net.ParseCIDR: an IP address, `/`, a prefix length within the address's size. */
function isCIDR(s: string): boolean {
  const i = s.indexOf('/');
  if (i < 0) return false;
  const ip = s.slice(0, i);
  const bits = s.slice(i + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const v = isIP(ip);
  if (v === 0) return false;
  return Number(bits) <= (v === 4 ? 32 : 128);
}

/** net.ParseMAC: 6, 8 or 20 octets as `xx:xx:..`, `xx-xx-..` or `xxxx.xxxx...`. */
function isMAC(s: string): boolean {
  const sizes = new Set([6, 8, 20]);
  for (const sep of [':', '-']) {
    const parts = s.split(sep);
    if (parts.length > 1 && sizes.has(parts.length) && parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p)))
      return true;
  }
  const dotted = s.split('.');
  return dotted.length > 1 && sizes.has(dotted.length * 2) && dotted.every((p) => /^[0-9a-fA-F]{4}$/.test(p));
}

function isISBN10(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(d[i]);
  sum += d[9] === 'X' ? 100 : 10 * Number(d[9]);
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(d[12]);
}

function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]/g, '');
  if (!CREDITCARD.test(d)) return false;
  let sum = 0;
  let double = false;
  for (let i = d.length - 1; i >= 0; i--) {
    let n = Number(d[i]);
    if (double) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
    double = !double;
  }
  return sum % 10 === 0;
}

const CHECKS: Readonly<Record<string, (s: string) => boolean>> = {
  bsonobjectid: (s) => BSON_OBJECT_ID.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: isHostname,
  // strfmt: net.ParseIP and a dot (an IPv4-mapped IPv6 address counts), as upstream.
  ipv4: (s) => (isIPv4(s) || isIPv6(s)) && s.includes('.'),
  ipv6: (s) => isIP(s) !== 0 && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: (s) => SSN.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => RGBCOLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  'k8s-short-name': (s) => isDNS1123Label(s).length === 0,
  'k8s-long-name': (s) => isDNS1123Subdomain(s).length === 0,
};

function normalize(format: string): string {
  return format.startsWith('k8s-') ? format : format.replaceAll('-', '');
}

/** Whether `format` is one of the supported string formats (after `-` normalisation). */
export function isSupportedStringFormat(format: string): boolean {
  return Object.hasOwn(CHECKS, normalize(format));
}

/**
 * The format that is checked for a schema of `type` naming `format`, or '' when Kubernetes
 * strips it (StripUnsupportedFormatsPostProcessor): integer keeps int32/int64, number
 * float/double, string (or no type) the supported string formats, any other type none.
 */
export function effectiveFormat(type: string | undefined, format: string | undefined): string {
  if (!format) return '';
  switch (type ?? '') {
    case '':
    case 'string':
      return isSupportedStringFormat(format) ? format : '';
    case 'integer':
      return format === 'int32' || format === 'int64' ? format : '';
    case 'number':
      return format === 'float' || format === 'double' ? format : '';
    default:
      return '';
  }
}

/** Whether the string `s` is valid for the supported string format `format`. */
export function validatesFormat(format: string, s: string): boolean {
  const check = CHECKS[normalize(format)];
  return check ? check(s) : true;
}
