/**
 * Reading the @kubernetes/client-node models, the one schema source of the documents:
 * each model's `getAttributeTypeMap()` (fields and their TypeScript types), imported from
 * the model's own module, and the JSDoc of its `.d.ts` (descriptions; a field without `?`
 * is required). The catalogue (catalogue.ts) decides which models are read.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface AttributeType {
  name: string;
  baseName: string;
  type: string;
  format: string;
}

export interface FieldDoc {
  description?: string;
  required: boolean;
}

export interface ModelDocs {
  description?: string;
  /** By TypeScript property name (`name` of the attribute map). */
  fields: Map<string, FieldDoc>;
}

let modelsDirectory: string | undefined;

function modelsDir(): string {
  modelsDirectory ??= join(
    dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json')),
    'dist',
    'gen',
    'models',
  );
  return modelsDirectory;
}

function isAttributeTypeMap(v: unknown): v is AttributeType[] {
  return (
    Array.isArray(v) && v.every((a) => typeof a === 'object' && a !== null && 'baseName' in a && 'type' in a)
  );
}

/** Attribute type maps loaded so far, by model name (see modelAttributeTypeMap). */
const loadedAttributes = new Map<string, AttributeType[]>();

/**
 * The `getAttributeTypeMap()` of a client-node model, if the catalog has loaded it (every
 * model reachable from a served kind is, once `loadModels()` or `warmOpenAPI()` resolved).
 * Synchronous, for code on the request path (patches, field validation) that must not
 * import the whole client-node package (1.4 s and about 40 MB).
 */
export function modelAttributeTypeMap(model: string): readonly AttributeType[] | undefined {
  return loadedAttributes.get(model);
}

/**
 * The attribute type map of a model, read from its own module (undefined: no such model).
 * The map is the JSON array literal the generator writes as `<Model>.attributeTypeMap = [...]`,
 * parsed from the file's text (parseModelAttributes) rather than imported: an import
 * keeps each of the ~370 modules the catalog reaches (its source, code and module record,
 * some 3 MB of heap in all) for the life of the process, to read one array. A module
 * whose text does not have that shape is imported instead.
 */
export async function loadAttributes(model: string): Promise<AttributeType[] | undefined> {
  if (!/^[A-Za-z0-9]+$/.test(model)) return undefined;
  const path = join(modelsDir(), `${model}.js`);
  let map: unknown;
  try {
    map = parseModelAttributes(readFileSync(path, 'utf8'), model);
  } catch {
    return undefined;
  }
  if (map === undefined) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    const cls = mod[model] as { getAttributeTypeMap?: () => unknown } | undefined;
    map = typeof cls?.getAttributeTypeMap === 'function' ? cls.getAttributeTypeMap() : undefined;
  }
  if (!isAttributeTypeMap(map)) return undefined;
  loadedAttributes.set(model, map);
  return map;
}

/**
 * The attribute type map of client-node model `model` from the text of its module
 * (`dist/gen/models/<Model>.js`), as the OpenAPI generator writes it: a class whose
 * `getAttributeTypeMap()` returns the static `<Model>.attributeTypeMap`, assigned a JSON
 * array literal on lines of its own (`<Model>.attributeTypeMap = [` … `];`).
 * @returns the parsed array; undefined when the text has no such assignment, or its
 * `getAttributeTypeMap()` returns anything else (e.g. a subclass merging its parent's).
 * @throws SyntaxError when the literal is not JSON.
 */
export function parseModelAttributes(js: string, model: string): unknown {
  const start = `\n${model}.attributeTypeMap = [`;
  const at = js.indexOf(start);
  if (at < 0 || !js.includes(`return ${model}.attributeTypeMap;`)) return undefined;
  const end = js.indexOf('\n];', at);
  if (end < 0) return undefined;
  return JSON.parse(js.slice(at + start.length - 1, end + 2)) as unknown;
}

/** `s` as a string of its own (a JSON round trip copies it), not a view into a larger one. */
function detached(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/**
 * Parses a model's `.d.ts`: the JSDoc before `export declare class` is the type's
 * description, the JSDoc before `'field'?: T` the field's; a field without `?` is
 * required (the generator marks exactly the fields of the upstream `required` list).
 * The generator escapes quotes and backslashes (`\'`, `\"`, `\\`); they are unescaped.
 */
export function parseModelDocs(dts: string): ModelDocs {
  const docs: ModelDocs = { fields: new Map() };
  let pending: string[] | undefined;
  let collecting: string[] | undefined;
  for (const line of dts.split('\n')) {
    const trimmed = line.trim();
    if (collecting) {
      if (trimmed.startsWith('*/')) {
        pending = collecting;
        collecting = undefined;
      } else {
        collecting.push(trimmed.replace(/^\* ?/, ''));
      }
      continue;
    }
    if (trimmed === '/**') {
      collecting = [];
      continue;
    }
    const field = /^'([^']+)'(\?)?:/.exec(trimmed);
    const joined = pending?.join(' ').replace(/\\(.)/g, '$1').trim();
    // A copy, not a slice: V8 keeps the substrings of a string as views of it, and the
    // catalog keeps these descriptions for the process's life; as slices they held every
    // model's whole .d.ts text (some 1.5 MB for the ~370 models).
    const text = joined ? detached(joined) : joined;
    if (field) {
      docs.fields.set(field[1]!, { description: text || undefined, required: field[2] === undefined });
    } else if (trimmed.startsWith('export declare class')) {
      docs.description = text || undefined;
    }
    // A comment documents only the declaration right after it.
    pending = undefined;
  }
  return docs;
}

/** Reads synchronously: ~200 small files read faster in a row than through the thread pool. */
export function loadDocs(model: string): ModelDocs {
  try {
    return parseModelDocs(readFileSync(join(modelsDir(), `${model}.d.ts`), 'utf8'));
  } catch {
    return { fields: new Map() };
  }
}
