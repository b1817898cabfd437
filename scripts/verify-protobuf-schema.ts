/**
 * Checks control/apiserver/encoding/protobuf-schema.spec against Kubernetes' own generated.proto
 * files, for whoever adds rows to it:
 *
 *   node --import tsx scripts/verify-protobuf-schema.ts API_DIR APIMACHINERY_DIR
 *
 * where API_DIR is a checkout of kubernetes/api (core/v1/generated.proto, ...) and
 * APIMACHINERY_DIR one of kubernetes/apimachinery (pkg/apis/meta/v1/generated.proto, ...),
 * at the commits the spec names. Not run by the tests, which have no network: the spec is
 * the committed source, and this says whether it still says what upstream says.
 *
 * For every message of the spec: upstream has it, every field has upstream's number, name
 * (but [inline] ones, which have none in JSON), type and repeated/map, and the fields come
 * in upstream's order (Go struct order). Upstream fields the spec leaves out are listed as
 * notes, not problems: such fields are skipped when a client sends them. [keepZero] and
 * [inline] come from types.go, which this does not read. Prints the problems, then the
 * notes; exits 1 when there are problems.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import protobuf from 'protobufjs';
import { parseSpec, SPEC_PATH, type SpecMessage } from './gen-protobuf-schema.js';

/** Where a spec package's generated.proto lives: in kubernetes/api or kubernetes/apimachinery. */
export function protoFileOf(pkg: string): { repo: 'api' | 'apimachinery'; path: string } {
  if (pkg === 'meta.v1') return { repo: 'apimachinery', path: 'pkg/apis/meta/v1/generated.proto' };
  if (pkg === 'intstr') return { repo: 'apimachinery', path: 'pkg/util/intstr/generated.proto' };
  if (pkg === 'resource') return { repo: 'apimachinery', path: 'pkg/api/resource/generated.proto' };
  return { repo: 'api', path: `${pkg.replace(/\./g, '/')}/generated.proto` };
}

/** A proto package as the spec names it: k8s.io.api.core.v1 → core.v1, ...meta.v1 → meta.v1. */
function specPackage(protoPackage: string): string {
  return protoPackage.replace(/^k8s\.io\.(api|apimachinery\.pkg\.(apis|util|api))\./, '');
}

/** The outcome: mismatches (problems) and upstream fields the spec leaves out (notes). */
export interface Verification {
  problems: string[];
  notes: string[];
}

/**
 * Compares spec messages with the generated.proto files that define them.
 * @param messages parseSpec's result.
 * @param protoText the text of a spec package's generated.proto (see protoFileOf);
 *   undefined when it cannot be read, which is a problem for each of its messages.
 */
export function verifyAgainstUpstream(
  messages: SpecMessage[],
  protoText: (pkg: string) => string | undefined,
): Verification {
  const problems: string[] = [];
  const notes: string[] = [];
  const upstream = new Map<string, protobuf.Type>();
  const loaded = new Set<string>();
  const lookup = (name: string): protobuf.Type | undefined => {
    const pkg = name.slice(0, name.lastIndexOf('.'));
    if (!loaded.has(pkg)) {
      loaded.add(pkg);
      const text = protoText(pkg);
      const parsed = text === undefined ? undefined : protobuf.parse(text, { keepCase: true });
      const ns = parsed?.package ? parsed.root.lookup(parsed.package) : null;
      for (const nested of ns instanceof protobuf.Namespace ? ns.nestedArray : [])
        if (nested instanceof protobuf.Type) upstream.set(`${pkg}.${nested.name}`, nested);
    }
    return upstream.get(name);
  };
  const typeName = (field: protobuf.Field, pkg: string): string => {
    const t = field.type.replace(/^\./, '');
    if (!t.includes('.')) return /^[a-z]/.test(t) ? t : `${pkg}.${t}`;
    return `${specPackage(t.slice(0, t.lastIndexOf('.')))}${t.slice(t.lastIndexOf('.'))}`;
  };
  for (const { name, fields } of messages) {
    const type = lookup(name);
    if (!type) {
      problems.push(`${name}: no such message in ${protoFileOf(name.slice(0, name.lastIndexOf('.'))).path}`);
      continue;
    }
    const pkg = name.slice(0, name.lastIndexOf('.'));
    const byNumber = new Map(type.fieldsArray.map((f) => [f.id, f]));
    for (const [number, json, specType, kind] of fields) {
      const up = byNumber.get(number);
      const where = `${name}.${json || '(inline)'} = ${number}`;
      if (!up) {
        problems.push(`${where}: upstream has no field ${number}`);
        continue;
      }
      if (kind !== 'inline' && up.name !== json) problems.push(`${where}: upstream names it ${up.name}`);
      if (typeName(up, pkg) !== specType) problems.push(`${where}: upstream type ${typeName(up, pkg)}`);
      const rule = up instanceof protobuf.MapField ? 'map' : up.repeated ? 'repeated' : 'singular';
      const specRule = kind === 'map' || kind === 'repeated' ? kind : 'singular';
      if (rule !== specRule) problems.push(`${where}: ${specRule} here, ${rule} upstream`);
    }
    const inSpec = new Set(fields.map((f) => f[0]));
    const order = type.fieldsArray.map((f) => f.id).filter((n) => inSpec.has(n));
    if (order.join() !== fields.map((f) => f[0]).join())
      problems.push(
        `${name}: fields in the order ${fields.map((f) => f[0]).join(', ')}, upstream ${order.join(', ')}`,
      );
    for (const f of type.fieldsArray)
      if (!inSpec.has(f.id)) notes.push(`${name}: upstream field ${f.name} = ${f.id} is not in the spec`);
  }
  return { problems, notes };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [apiDir, apimachineryDir] = process.argv.slice(2);
  if (apiDir === undefined || apimachineryDir === undefined) {
    process.stderr.write('usage: verify-protobuf-schema.ts KUBERNETES_API_DIR KUBERNETES_APIMACHINERY_DIR\n');
    process.exit(2);
  }
  const { problems, notes } = verifyAgainstUpstream(parseSpec(readFileSync(SPEC_PATH, 'utf8')), (pkg) => {
    const { repo, path } = protoFileOf(pkg);
    try {
      return readFileSync(join(repo === 'api' ? apiDir : apimachineryDir, path), 'utf8');
    } catch {
      return undefined;
    }
  });
  for (const p of problems) process.stdout.write(`problem: ${p}\n`);
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
  process.stdout.write(`${problems.length} problems, ${notes.length} notes\n`);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
