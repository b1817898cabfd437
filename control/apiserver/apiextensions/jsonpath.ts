/**
 * The JSONPath subset CRDs use: `additionalPrinterColumns[].jsonPath`, the scale
 * subresource's `specReplicasPath` / `statusReplicasPath` / `labelSelectorPath`, and
 * `selectableFields[].jsonPath` — Kubernetes' k8s.io/client-go/util/jsonpath as a column
 * printer runs it (`{<path>}` with the braces implied): `.a.b`, `['a.b']`, `[0]`, `[-1]`,
 * `[*]`, `..` is not supported, and filters `[?(@.type=="Ready")]` with `==` / `!=` on a
 * field.
 */

type Step =
  | { t: 'field'; name: string }
  | { t: 'index'; i: number }
  | { t: 'all' }
  | { t: 'filter'; path: string[]; op: '==' | '!='; value: string };

/**
 * Parses `path` (with or without the surrounding `{}`).
 * @throws Error for what the subset does not cover (the CRD is then refused by its caller).
 */
export function parseJSONPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  const steps: Step[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '.') {
      const m = /^[^.[\]]+/.exec(p.slice(i + 1));
      if (!m) throw new Error(`unexpected path string ${JSON.stringify(p.slice(i))}`);
      steps.push({ t: 'field', name: m[0] });
      i += 1 + m[0].length;
    } else if (c === '[') {
      const end = p.indexOf(']', i);
      if (end < 0) throw new Error('unterminated array notation');
      const inner = p.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ t: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ t: 'index', i: Number(inner) });
      else if (/^'.*'$/.test(inner) || /^".*"$/.test(inner))
        steps.push({ t: 'field', name: inner.slice(1, -1) });
      else {
        const f = /^\?\(@((?:\.[^.=!\s]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(\S+))\)$/.exec(inner);
        if (!f) throw new Error(`unsupported array notation [${inner}]`);
        steps.push({
          t: 'filter',
          path: f[1]!.slice(1).split('.'),
          op: f[2] as '==' | '!=',
          value: f[3] ?? f[4] ?? f[5] ?? '',
        });
      }
    } else {
      throw new Error(`unexpected character ${JSON.stringify(c)} in ${JSON.stringify(path)}`);
    }
  }
  return steps;
}

function fieldOf(v: unknown, name: string): unknown {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)[name]
    : undefined;
}

/** Every value `path` reaches in `obj` (none when a step finds nothing). */
export function evaluateJSONPath(obj: unknown, path: string | Step[]): unknown[] {
  const steps = typeof path === 'string' ? parseJSONPath(path) : path;
  let current: unknown[] = [obj];
  for (const s of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if (s.t === 'field') {
        const f = fieldOf(v, s.name);
        if (f !== undefined) next.push(f);
      } else if (Array.isArray(v)) {
        if (s.t === 'all') next.push(...v);
        else if (s.t === 'index') {
          const item = v[s.i < 0 ? v.length + s.i : s.i];
          if (item !== undefined) next.push(item);
        } else {
          for (const item of v) {
            let f: unknown = item;
            for (const n of s.path) f = fieldOf(f, n);
            const text = f === undefined ? undefined : typeof f === 'string' ? f : JSON.stringify(f);
            if ((s.op === '==') === (text === s.value)) next.push(item);
          }
        }
      }
    }
    current = next;
  }
  return current;
}

/**
 * Sets the value at a path of fields only (`.spec.replicas`), creating objects on the way,
 * as the scale subresource writes `specReplicasPath`.
 * @throws Error for a path with anything but field steps.
 */
export function setJSONPathField(obj: Record<string, unknown>, path: string, value: unknown): void {
  const steps = parseJSONPath(path);
  let o = obj;
  steps.forEach((s, i) => {
    if (s.t !== 'field') throw new Error(`not a field path: ${path}`);
    if (i === steps.length - 1) o[s.name] = value;
    else {
      const n = o[s.name];
      o =
        n !== null && typeof n === 'object' && !Array.isArray(n)
          ? (n as Record<string, unknown>)
          : (o[s.name] = {});
    }
  });
}
