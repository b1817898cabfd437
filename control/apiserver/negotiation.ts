/**
 * Which form a resource request's answer takes, from its `Accept` header, as
 * kube-apiserver's handlers/negotiation (NegotiateOutputMediaType,
 * NegotiateOutputMediaTypeStream) with RequestScope.AllowsMediaTypeTransform:
 *
 * - the media type: `application/json` or `application/yaml` (a watch: JSON only, YAML has
 *   no stream framing). A clause for `application/vnd.kubernetes.protobuf` is answered in
 *   JSON: k8ts decodes protobuf bodies but does not encode them, and every client that asks
 *   for protobuf (client-go, kube-controller-manager) decodes by the answer's Content-Type;
 * - a conversion, named by the clause's `as`, `g` and `v` parameters: a `Table` (kubectl
 *   get), a `PartialObjectMetadata` of one object or of each watch event, or a
 *   `PartialObjectMetadataList` of a list (client-go's metadata client and informers, as
 *   the garbage collector and controller-runtime's metadata-only watches use), all in
 *   `meta.k8s.io` v1 or v1beta1.
 *
 * The clauses are tried in the client's order of preference (q, then concrete types before
 * wildcards); the first one the server can satisfy decides. A header none of whose clauses
 * can be satisfied is answered 406 NotAcceptable before anything is read or written.
 */
import YAML from 'yaml';
import type { KubeObject, ListMeta, ObjectMeta } from '../../api/object.js';
import { ApiError } from './status.js';

/** The API group of Table, PartialObjectMetadata and PartialObjectMetadataList. */
export const META_GROUP = 'meta.k8s.io';

/** The meta.k8s.io versions a conversion can be asked in. */
export type MetaVersion = 'v1' | 'v1beta1';

/** What an answer is encoded as. */
export type OutputContentType = 'application/json' | 'application/yaml';

/** The kinds an answer can be converted to (the `as` parameter). */
export type ConversionKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** The negotiated form of an answer. */
export interface OutputMedia {
  contentType: OutputContentType;
  /** The conversion asked for; undefined for the object (or list) as stored. */
  convert?: { kind: ConversionKind; version: MetaVersion };
}

/** The media types kube-apiserver lists in a 406 (its serializers), in its order. */
export const ACCEPTED_MEDIA_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
] as const;

/** The plain JSON answer: no Accept header, or one that takes JSON. */
export const JSON_OUTPUT: OutputMedia = Object.freeze({ contentType: 'application/json' });

/** One clause of an Accept header. */
export interface AcceptClause {
  type: string;
  subtype: string;
  /** Parameters other than q, names lower case, values unquoted. */
  params: Map<string, string>;
  q: number;
}

/**
 * The clauses of an Accept header, most preferred first: higher q first, then concrete
 * types before `type/*` before `*\/*`, else the client's order. Clauses with q=0 are kept
 * (callers skip them); an unparsable q counts as 0.
 */
export function parseAccept(header: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of header.split(',')) {
    const [range, ...rawParams] = part.split(';').map((s) => s.trim());
    if (!range) continue;
    const [type = '', subtype = ''] = range.toLowerCase().split('/');
    if (!type || !subtype) continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (key === 'q') {
        const n = Number(value);
        q = Number.isFinite(n) ? n : 0;
      } else {
        params.set(key, value);
      }
    }
    clauses.push({ type, subtype, params, q });
  }
  const specificity = (c: AcceptClause): number => (c.type === '*' ? 0 : c.subtype === '*' ? 1 : 2);
  return clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a));
}

/** What no Accept header, or an empty one, means: anything (`*\/*`). */
const ANY: readonly AcceptClause[] = Object.freeze([{ type: '*', subtype: '*', params: new Map(), q: 1 }]);

/**
 * The clauses of an Accept header a server may answer with, most preferred first
 * (parseAccept without the q=0 ones); no header or an empty one is `*\/*`. What the
 * document endpoints (discovery, OpenAPI) pick their form from.
 */
export function acceptableClauses(accept: string | undefined): readonly AcceptClause[] {
  if (accept === undefined || accept.trim() === '') return ANY;
  return parseAccept(accept).filter((c) => c.q > 0);
}

/** Options of negotiateOutput. */
export interface NegotiateOptions {
  /** A watch: the answer is a stream of events, so YAML cannot be chosen. */
  stream?: boolean;
}

/**
 * The answer's form for an Accept header (see the file comment). No header, or an empty
 * one, is plain JSON.
 * @throws ApiError 406 NotAcceptable, `only the following media types are accepted:
 *   application/json, application/yaml, application/vnd.kubernetes.protobuf`, when no
 *   clause can be satisfied (e.g. `text/html`, a Table in protobuf, or YAML on a watch).
 */
export function negotiateOutput(accept: string | undefined, opts: NegotiateOptions = {}): OutputMedia {
  const media = tryNegotiateOutput(accept, opts);
  if (media === undefined) throw notAcceptable();
  return media;
}

/** negotiateOutput without the 406: undefined where it would throw. */
export function tryNegotiateOutput(
  accept: string | undefined,
  opts: NegotiateOptions = {},
): OutputMedia | undefined {
  if (accept === undefined || accept.trim() === '') return JSON_OUTPUT;
  for (const c of parseAccept(accept)) {
    if (c.q <= 0) continue;
    const contentType = encodingOf(c, opts.stream === true);
    if (contentType === undefined) continue;
    const as = c.params.get('as');
    if (as === undefined) return contentType === 'application/json' ? JSON_OUTPUT : { contentType };
    const version = c.params.get('v');
    if (c.params.get('g') !== META_GROUP || (version !== 'v1' && version !== 'v1beta1')) continue;
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList')
      return { contentType, convert: { kind: as, version } };
    // A Table only in JSON or YAML, never protobuf (AllowsMediaTypeTransform).
    if (as === 'Table' && c.subtype !== 'vnd.kubernetes.protobuf')
      return { contentType, convert: { kind: 'Table', version } };
  }
  return undefined;
}

/** How a clause's media range is answered, if at all. */
function encodingOf(c: AcceptClause, stream: boolean): OutputContentType | undefined {
  if (c.type === '*' && c.subtype === '*') return 'application/json';
  if (c.type !== 'application') return undefined;
  switch (c.subtype) {
    case '*':
    case 'json':
    case 'vnd.kubernetes.protobuf':
      return 'application/json';
    case 'yaml':
      return stream ? undefined : 'application/yaml';
    default:
      return undefined;
  }
}

/** kube-apiserver's 406 (negotiation.NewNotAcceptableError over its serializers). */
export function notAcceptable(message?: string): ApiError {
  return new ApiError(
    406,
    'NotAcceptable',
    message ?? `only the following media types are accepted: ${ACCEPTED_MEDIA_TYPES.join(', ')}`,
  );
}

/** meta/v1 PartialObjectMetadata: an object's kind-independent part. */
export interface PartialObjectMetadata {
  apiVersion: `meta.k8s.io/${MetaVersion}`;
  kind: 'PartialObjectMetadata';
  metadata: ObjectMeta;
}

/** meta/v1 PartialObjectMetadataList. */
export interface PartialObjectMetadataList {
  apiVersion: `meta.k8s.io/${MetaVersion}`;
  kind: 'PartialObjectMetadataList';
  metadata: ListMeta;
  items: PartialObjectMetadata[];
}

/** Whether `obj` is a list (`<Kind>List` with items), as meta.IsListType. */
export function isList(obj: unknown): obj is { kind?: string; metadata?: ListMeta; items: KubeObject[] } {
  return typeof obj === 'object' && obj !== null && Array.isArray((obj as { items?: unknown }).items);
}

/**
 * `obj`'s metadata as a PartialObjectMetadata (asPartialObjectMetadata); shares the
 * metadata object (no copy).
 * @throws ApiError 406 for a list.
 */
export function asPartialObjectMetadata(obj: KubeObject, version: MetaVersion): PartialObjectMetadata {
  if (isList(obj))
    throw notAcceptable(
      `you requested PartialObjectMetadata, but the requested object is a list (${obj.kind ?? 'List'})`,
    );
  return {
    apiVersion: `${META_GROUP}/${version}`,
    kind: 'PartialObjectMetadata',
    metadata: obj.metadata ?? {},
  };
}

/**
 * A list's items as a PartialObjectMetadataList (asPartialObjectMetadataList): each item's
 * metadata with the list's resourceVersion, continue and remainingItemCount.
 * @throws ApiError 406 for an object that is not a list.
 */
export function asPartialObjectMetadataList(obj: unknown, version: MetaVersion): PartialObjectMetadataList {
  if (!isList(obj)) {
    const kind = (obj as KubeObject | undefined)?.kind ?? 'object';
    throw notAcceptable(
      `you requested PartialObjectMetadataList, but the requested object is not a list (${kind})`,
    );
  }
  const meta: ListMeta = {};
  const src = obj.metadata ?? {};
  if (src.resourceVersion !== undefined) meta.resourceVersion = src.resourceVersion;
  if (src.continue) meta.continue = src.continue;
  if (src.remainingItemCount !== undefined) meta.remainingItemCount = src.remainingItemCount;
  return {
    apiVersion: `${META_GROUP}/${version}`,
    kind: 'PartialObjectMetadataList',
    metadata: meta,
    items: obj.items.map((item) => asPartialObjectMetadata(item, version)),
  };
}

/**
 * `body` encoded as `contentType`: JSON, or YAML as kube-apiserver's YAML serializer
 * writes it (sigs.k8s.io/yaml over the JSON: keys sorted, sequences not indented under
 * their key).
 */
export function encodeOutput(body: unknown, contentType: OutputContentType): string {
  if (contentType === 'application/json') return JSON.stringify(body);
  // Through JSON first, so that toJSON() and undefined fields come out as in the JSON answer.
  return YAML.stringify(JSON.parse(JSON.stringify(body)), {
    sortMapEntries: true,
    indentSeq: false,
    lineWidth: 0,
  });
}
