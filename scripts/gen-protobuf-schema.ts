/**
 * `npm run generate:protobuf-schema`: writes control/apiserver/encoding/protobuf-schema.ts (the
 * table the protobuf decoder reads, see control/apiserver/encoding/protobuf.ts) from its source,
 * control/apiserver/encoding/protobuf-schema.spec. Edit the spec, never the table; the test next to
 * this file fails while the committed table differs from what the spec generates.
 *
 * The spec is written in generated.proto's own syntax, so that a row can be checked
 * against (or copied from) Kubernetes' generated.proto files, with two words that come
 * from types.go instead (see the spec's header):
 *
 *   package core.v1;                       names below are core.v1.<Name>
 *   message Probe {                        a message, its fields in Go struct order
 *     ProbeHandler = 1 [inline];           an embedded struct: no JSON name of its own
 *     int32 initialDelaySeconds = 2;       <type> <JSON name> = <field number>;
 *     repeated string command = 1;         repeated <type>; map<string, <type>>
 *     string name = 1 [keepZero];          a scalar whose zero value still shows in JSON
 *   }
 *
 * A type is a scalar (bool, bytes, int32, int64, string), a message of the current
 * package by its bare name, or any message by its full name (meta.v1.ObjectMeta).
 * Comments run from `//` to the end of the line. scripts/verify-protobuf-schema.ts checks
 * the spec against Kubernetes' generated.proto files.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';

/** The spec's path (the generator's input). */
export const SPEC_PATH = fileURLToPath(
  new URL('../control/apiserver/encoding/protobuf-schema.spec', import.meta.url),
);
/** The generated table's path (its output). */
export const SCHEMA_PATH = fileURLToPath(
  new URL('../control/apiserver/encoding/protobuf-schema.ts', import.meta.url),
);

const SCALARS = ['bool', 'bytes', 'int32', 'int64', 'string'] as const;

/** One field as protobuf-schema.ts's FieldSpec: `[number, jsonName, type, kind?]`. */
export type SpecField = readonly [
  number: number,
  json: string,
  type: string,
  kind?: 'repeated' | 'map' | 'inline' | 'keepZero',
];

/** One message of the spec: its full name (`core.v1.Probe`) and its fields in spec order. */
export interface SpecMessage {
  name: string;
  fields: SpecField[];
}

interface Token {
  text: string;
  line: number;
}

/** Splits the spec into words (names, numbers) and punctuation, dropping `//` comments. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  text.split('\n').forEach((source, i) => {
    const line = source.replace(/\/\/.*$/, '');
    for (const m of line.matchAll(/[A-Za-z_][\w.]*|\d+|[{}=;[\]<>,]|\S/g))
      tokens.push({ text: m[0], line: i + 1 });
  });
  return tokens;
}

/**
 * Parses and checks a spec (the syntax in the file comment).
 * @returns its messages in the order written.
 * @throws Error `protobuf-schema.spec:<line>: <what is wrong>` on a syntax error, a message
 *   defined twice, a field number or JSON name used twice in one message, an option on a
 *   field it does not fit (inline: a message field without a name; keepZero: a singular
 *   scalar), or a type that is neither a scalar nor a message of the spec.
 */
export function parseSpec(text: string): SpecMessage[] {
  const tokens = tokenize(text);
  let at = 0;
  const fail = (message: string, token = tokens[at]): never => {
    throw new Error(`protobuf-schema.spec:${token?.line ?? 'end'}: ${message}`);
  };
  const next = (): string => (at < tokens.length ? tokens[at++]!.text : fail('unexpected end of the spec'));
  const expect = (text: string): void => {
    const got = tokens[at]?.text;
    if (got !== text)
      fail(`expected ${JSON.stringify(text)}, got ${got === undefined ? 'the end' : JSON.stringify(got)}`);
    at++;
  };
  const name = (what: string): string => {
    const got = tokens[at]?.text ?? '';
    if (!/^[A-Za-z_][\w.]*$/.test(got)) fail(`expected ${what}, got ${JSON.stringify(got)}`);
    at++;
    return got;
  };

  const messages: SpecMessage[] = [];
  const seen = new Set<string>();
  // Every message-typed field with the token that named it, checked once all are read.
  const references: { type: string; token: Token }[] = [];
  let pkg: string | undefined;
  while (at < tokens.length) {
    const keyword = next();
    if (keyword === 'package') {
      pkg = name('a package name');
      expect(';');
      continue;
    }
    if (keyword !== 'message')
      fail(`expected "package" or "message", got ${JSON.stringify(keyword)}`, tokens[at - 1]);
    if (pkg === undefined) fail('a message before any package', tokens[at - 1]);
    const messageToken = tokens[at]!;
    const short = name('a message name');
    if (short.includes('.')) fail(`a message name has no dots, got ${JSON.stringify(short)}`, messageToken);
    const full = `${pkg}.${short}`;
    if (seen.has(full)) fail(`message ${full} is defined twice`, messageToken);
    seen.add(full);
    expect('{');
    const fields: SpecField[] = [];
    const numbers = new Set<number>();
    const jsonNames = new Set<string>();
    while (tokens[at]?.text !== '}') {
      const fieldToken = tokens[at] ?? fail('unexpected end of the spec');
      let kind: SpecField[3];
      if (tokens[at]?.text === 'repeated') {
        at++;
        kind = 'repeated';
      } else if (tokens[at]?.text === 'map') {
        at++;
        expect('<');
        expect('string');
        expect(',');
        kind = 'map';
      }
      const typeToken = tokens[at]!;
      const written = name('a type');
      if (kind === 'map') expect('>');
      const scalar = (SCALARS as readonly string[]).includes(written);
      const type = scalar || written.includes('.') ? written : `${pkg}.${written}`;
      if (!scalar) references.push({ type, token: typeToken });
      const json = tokens[at]?.text === '=' ? '' : name('a JSON name');
      expect('=');
      const numberText = next();
      if (!/^[1-9]\d*$/.test(numberText))
        fail(`expected a field number, got ${JSON.stringify(numberText)}`, tokens[at - 1]);
      const number = Number(numberText);
      if (tokens[at]?.text === '[') {
        at++;
        const option = next();
        if (option === 'inline') {
          if (kind !== undefined || scalar || json !== '')
            fail('[inline] is for an embedded message field, written without a name', fieldToken);
          kind = 'inline';
        } else if (option === 'keepZero') {
          if (kind !== undefined || !scalar) fail('[keepZero] is for a singular scalar field', fieldToken);
          kind = 'keepZero';
        } else fail(`unknown option ${JSON.stringify(option)} (inline or keepZero)`, tokens[at - 1]);
        expect(']');
      }
      expect(';');
      if (json === '' && kind !== 'inline') fail('a field without a JSON name must be [inline]', fieldToken);
      if (numbers.has(number)) fail(`${full}: field number ${number} is used twice`, fieldToken);
      numbers.add(number);
      if (json !== '' && jsonNames.has(json)) fail(`${full}: JSON name ${json} is used twice`, fieldToken);
      jsonNames.add(json);
      fields.push(kind === undefined ? [number, json, type] : [number, json, type, kind]);
    }
    expect('}');
    messages.push({ name: full, fields });
  }
  for (const { type, token } of references)
    if (!seen.has(type)) fail(`no message ${type} in the spec`, token);
  return messages;
}

const HEADER = `// Code generated by scripts/gen-protobuf-schema.ts from protobuf-schema.spec. DO NOT EDIT.

/**
 * The protobuf wire schema of every message the API server decodes from
 * \`application/vnd.kubernetes.protobuf\` bodies (see protobuf.ts): for each message, its
 * fields in Go struct order as \`[field number, JSON name, type, kind?]\`.
 *
 * - type: a scalar (\`string\`, \`bool\`, \`int32\`, \`int64\`, \`bytes\`) or another message of
 *   this table, named \`<package>.<Message>\` (\`core.v1\` = k8s.io.api.core.v1, \`meta.v1\` =
 *   k8s.io.apimachinery.pkg.apis.meta.v1, \`intstr\`, \`resource\`, ...).
 * - kind: \`repeated\`; \`map\` (map<string, type>, on the wire repeated {key = 1, value = 2});
 *   \`inline\` (a Go embedded struct: its fields are the parent's in JSON, e.g. Probe's
 *   ProbeHandler, Volume's VolumeSource); \`keepZero\` (a scalar whose zero value still shows
 *   in JSON: a Go pointer such as \`replicas *int32\`, or a field without \`omitempty\`).
 *   Scalars without it are dropped when zero ("", 0, false), as Go's encoding/json does.
 *
 * Protocol data, from protobuf-schema.spec (which says where its rows come from: Kubernetes'
 * generated.proto and types.go files). The set is closed under reference from the kinds of
 * PROTOBUF_KINDS (protobuf.ts). Kubernetes never renumbers a field, so a newer API only adds
 * rows; fields a client sends that are missing here are skipped.
 */

/** The scalar types that occur in the table. */
export type ScalarType = 'bool' | 'bytes' | 'int32' | 'int64' | 'string';

/** How a field is laid out (see the file comment); absent: a singular field. */
export type FieldKind = 'repeated' | 'map' | 'inline' | 'keepZero';

/** One field: \`[number, jsonName, type, kind?]\`. */
export type FieldSpec = readonly [number: number, json: string, type: string, kind?: FieldKind];
`;

/**
 * The text of protobuf-schema.ts for a spec: the header above and MESSAGES, one entry per
 * message in spec order, formatted by the repository's Prettier configuration.
 * @throws Error as parseSpec for a malformed spec.
 */
export async function generateProtobufSchema(spec: string): Promise<string> {
  const row = ([number, ...strings]: SpecField) =>
    `[${[number, ...strings.map((s) => `'${s}'`)].join(', ')}]`;
  const entries = parseSpec(spec).map(({ name, fields }) => `'${name}': [${fields.map(row).join(', ')}],`);
  const source = `${HEADER}\n/** Every message, by \`<package>.<Message>\`. */\nexport const MESSAGES: Readonly<Record<string, readonly FieldSpec[]>> = {\n${entries.join('\n')}\n};\n`;
  const options = await prettier.resolveConfig(SCHEMA_PATH);
  return prettier.format(source, { ...options, filepath: SCHEMA_PATH });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(SCHEMA_PATH, await generateProtobufSchema(readFileSync(SPEC_PATH, 'utf8')));
  process.stdout.write(`wrote ${SCHEMA_PATH}\n`);
}
